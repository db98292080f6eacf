"""Which tests capture runs for a kernel file: tests reach it through imports, wrappers and dispatch
(read statically, never imported), the op's own tests are picked, other backends' tests are not.
Each project is written here, shaped like the patterns real projects use."""

import textwrap
from pathlib import Path

from tritonlens.profiling.kernel_reach import ROUTE_DIRECT, ROUTE_DISPATCH, ROUTE_REEXPORT, ROUTE_WRAPPER
from tritonlens.profiling.project_tests import ImportGraph, find_tests, layout

KERNEL = "import triton\n\n@triton.jit\ndef {name}_kernel(X):\n    pass\n\ndef {name}(x):\n    return x\n"


def _project(root: Path, files: dict[str, str]) -> Path:
    files = {"pyproject.toml": "[project]\nname = 'pkg'\n", **files}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _picks(root: Path, kernel: str):
    return ImportGraph(layout(root / kernel)).picks_for(root / kernel)


def _picked(root: Path, kernel: str) -> dict[str, int]:
    return {p.path: p.route for p in _picks(root, kernel) if p.picked}


def test_a_dispatch_table_of_module_names_reaches_the_backend_module_and_its_kernel(tmp_path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "",
        "pkg/ops/rms_norm.py": KERNEL.format(name="rms_norm"),
        "pkg/backends/__init__.py": "",
        "pkg/backends/_triton/__init__.py": "",
        "pkg/backends/_triton/rms_norm.py": "from pkg.ops.rms_norm import rms_norm\n\ndef impl(x):\n    return rms_norm(x)\n",
        "pkg/dispatch.py": "import importlib\nTABLE = {}\n\ndef declare(op, paths):\n    TABLE[op] = paths\n\n"
                           "def dispatch(op, *args):\n    return importlib.import_module(TABLE[op][0]).impl(*args)\n",
        "pkg/functional.py": "from pkg.dispatch import declare, dispatch\n\n"
                             "declare('rms_norm', ('pkg.backends._triton.rms_norm',))\n"
                             "declare('layer_norm', ('pkg.backends._triton.layer_norm',))\n",
        # the op's main test names the op only as a string handed to the dispatcher
        "tests/test_rms_norm.py": "import pkg.functional\nfrom pkg.dispatch import dispatch\n\n"
                                  "def test_it():\n    dispatch('rms_norm', 1)\n",
        "tests/test_layer_norm.py": "import pkg.functional\nfrom pkg.dispatch import dispatch\n\n"
                                    "def test_it():\n    dispatch('layer_norm', 1)\n",
    })
    assert _picked(root, "pkg/ops/rms_norm.py") == {"tests/test_rms_norm.py": ROUTE_DISPATCH}
    pick = _picks(root, "pkg/ops/rms_norm.py")[0]
    assert "pkg/functional.py" in pick.reason and "'rms_norm'" in pick.reason


def test_a_function_picking_a_module_by_an_f_string_dispatches_by_the_name_it_is_given(tmp_path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/kernels/__init__.py": "",
        "pkg/kernels/add.py": KERNEL.format(name="add"),
        "pkg/kernels/mul.py": KERNEL.format(name="mul"),
        "pkg/loader.py": "import importlib\n\ndef get(name):\n    return importlib.import_module(f'pkg.kernels.{name}')\n",
        "tests/test_adding.py": "from pkg.loader import get\n\ndef test_add():\n    get('add').add(1)\n",
    })
    assert _picked(root, "pkg/kernels/add.py") == {"tests/test_adding.py": ROUTE_DISPATCH}
    assert find_tests(root / "pkg/kernels/mul.py") == []  # the test names no 'mul'


def test_a_dict_of_ops_a_lazy_import_and_getattr_on_a_module_are_read(tmp_path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "from pkg.kernels.neg import neg\n",
        "pkg/kernels/__init__.py": "",
        "pkg/kernels/scale.py": KERNEL.format(name="scale"),
        "pkg/kernels/mul.py": KERNEL.format(name="mul"),
        "pkg/kernels/neg.py": KERNEL.format(name="neg"),
        "pkg/registry.py": "from pkg.kernels import scale as _scale\n\nOPS = {'scale': _scale.scale}\n",
        "pkg/layers.py": "def run(x):\n    from pkg.kernels.mul import mul\n    return mul(x)\n",
        "tests/test_registry.py": "from pkg.registry import OPS\n\ndef test_a():\n    OPS['scale'](1)\n",
        "tests/test_layers.py": "from pkg.layers import run\n\ndef test_b():\n    run(1)\n",
        "tests/test_attr.py": "import pkg\n\ndef test_c():\n    getattr(pkg, 'neg')(1)\n",
    })
    assert _picked(root, "pkg/kernels/scale.py") == {"tests/test_registry.py": ROUTE_WRAPPER}
    assert _picked(root, "pkg/kernels/mul.py") == {"tests/test_layers.py": ROUTE_WRAPPER}
    assert _picked(root, "pkg/kernels/neg.py") == {"tests/test_attr.py": ROUTE_REEXPORT}


def test_the_ops_own_test_is_picked_before_tests_that_reach_it_otherwise(tmp_path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "from pkg.ops.rms_norm import rms_norm\n",
        "pkg/ops/rms_norm.py": KERNEL.format(name="rms_norm"),
        "pkg/ops/softmax.py": KERNEL.format(name="softmax"),
        "pkg/model.py": "from pkg.ops import rms_norm\nfrom pkg.ops.softmax import softmax\n\n"
                        "class Block:\n    def forward(self, x):\n        return softmax(rms_norm(x))\n\n"
                        "class Model:\n    def forward(self, x):\n        return Block().forward(x)\n",
        "tests/test_rms_norm.py": "from pkg.ops import rms_norm\n\ndef test_a():\n    rms_norm(1)\n",
        "tests/test_norm_parity.py": "from pkg.ops.rms_norm import rms_norm\n\ndef test_b():\n    rms_norm(1)\n",
        "tests/test_block.py": "from pkg.model import Block\n\ndef test_c():\n    Block().forward(1)\n",
        "tests/test_model.py": "from pkg.model import Model\n\ndef test_d():\n    Model().forward(1)\n",
        "tests/test_umbrella.py": "import pkg.ops\n\ndef test_e():\n    pass\n",
    })
    picks = _picks(root, "pkg/ops/rms_norm.py")
    assert [p.path for p in picks if p.picked] == ["tests/test_rms_norm.py"]
    assert picks[0].reason.startswith("own test")
    passed = {p.path: p.reason for p in picks if not p.picked}
    assert set(passed) == {"tests/test_norm_parity.py", "tests/test_block.py", "tests/test_model.py",
                           "tests/test_umbrella.py"}
    # loading the package is no run of its kernel
    assert "runs none of its kernels" in passed["tests/test_umbrella.py"]
    # no own test: the block's test, one wrapper away, before the model's
    assert _picked(root, "pkg/ops/softmax.py") == {"tests/test_block.py": ROUTE_WRAPPER}
    softmax = {p.path: p for p in _picks(root, "pkg/ops/softmax.py")}
    assert not softmax["tests/test_model.py"].picked and "tests/test_umbrella.py" not in softmax


def test_tests_in_folders_for_other_backends_are_passed_over(tmp_path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "",
        "pkg/ops/rms_norm.py": KERNEL.format(name="rms_norm"),
        # another language's kernels beside the Triton ones: a decorator not from Triton, no Triton import
        "pkg/ops/tilex/__init__.py": "",
        "pkg/ops/tilex/rms_norm.py": "import tilex as tx\n\n@tx.kernel\ndef rms_norm_tile(X):\n    pass\n",
        "pkg/_rocm/__init__.py": "",
        "pkg/_rocm/rms_norm.py": KERNEL.format(name="rms_norm"),
        "tests/__init__.py": "",
        "tests/test_rms_norm.py": "from pkg.ops.rms_norm import rms_norm\n",
        # the other backend's test compares with the Triton kernel: it still runs that backend's kernel
        "tests/tilex/__init__.py": "",
        "tests/tilex/test_rms_norm.py": "from pkg.ops.rms_norm import rms_norm\nfrom pkg.ops.tilex.rms_norm import rms_norm_tile\n",
        "tests/rocm/test_rms_norm.py": "from pkg.ops.rms_norm import rms_norm\nfrom pkg._rocm.rms_norm import rms_norm as r\n",
    })
    picks = {p.path: p for p in _picks(root, "pkg/ops/rms_norm.py")}
    assert [p for p, x in picks.items() if x.picked] == ["tests/test_rms_norm.py"]
    assert "another backend (tilex)" in picks["tests/tilex/test_rms_norm.py"].reason
    assert "another backend (rocm)" in picks["tests/rocm/test_rms_norm.py"].reason
    # a kernel in that backend's own folder keeps its backend's tests
    assert find_tests(root / "pkg/_rocm/rms_norm.py") == ["tests/rocm/test_rms_norm.py"]


def test_a_folder_named_like_a_backend_but_holding_triton_kernels_is_no_backend(tmp_path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "",
        "pkg/ops/rms_norm.py": KERNEL.format(name="rms_norm"),
        "pkg/ops/reference/__init__.py": "",  # beside the kernels, no Triton: another backend's folder
        "pkg/ops/reference/rms_norm.py": "def rms_norm_ref(x):\n    return x\n",
        "pkg/fast/ops/__init__.py": "",  # `ops` also names a folder of pure code: the Triton one decides
        "pkg/fast/ops/util.py": "X = 1\n",
        "tests/ops/test_rms_norm.py": "from pkg.ops.rms_norm import rms_norm\n",
        "tests/reference/test_rms_norm.py": "from pkg.ops.rms_norm import rms_norm\n",
    })
    assert ImportGraph(layout(root / "pkg/ops/rms_norm.py")).foreign == frozenset({"reference"})
    assert _picked(root, "pkg/ops/rms_norm.py") == {"tests/ops/test_rms_norm.py": ROUTE_DIRECT}
