"""Compile facts never depend on importing the user's module (real sm_90 cross-compiles in a worker).

Each project here is written the way real kernel files are: a test that runs on "cuda" at import,
a package `__init__` that needs a GPU, a decorator from a package that is not installed, relative
imports of jit helpers, kernels chosen by a module-level `if`/`else`. None of it may cost the
kernel its registers and shared memory.
"""

import textwrap

import pytest
from tritonlens.profiling.compile_job import compile_file

pytestmark = pytest.mark.slow

SCALE = {"scale_kernel": [{"label": "given", "args": {
    "x_ptr": {"kind": "tensor", "dtype": "float32", "align": 16},
    "y_ptr": {"kind": "tensor", "dtype": "float32", "align": 16},
    "n": {"kind": "int", "value": 3},
    "BLOCK": {"kind": "constexpr", "value": 1024}}, "options": {"num_warps": 4}}]}


def _write(root, files: dict[str, str]):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def _facts(report, name):
    k = report.kernel(name)
    assert k is not None, [x.name for x in report.kernels]
    ok = [c for c in k.configs if c.error is None]
    assert ok, [c.error for c in k.configs] + [k.error, k.note]
    return ok[0]


def test_a_script_that_runs_on_cuda_at_import_still_compiles(tmp_path):
    _write(tmp_path, {"bench_scale.py": """\
        import torch
        import triton
        import triton.language as tl
        import not_installed_anywhere

        DEVICE = torch.device("cuda")
        props = torch.cuda.get_device_properties(0)

        @triton.jit
        def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

        x = torch.randn(4096, device=DEVICE)
        y = torch.empty_like(x)
        scale_kernel[(4,)](x, y, x.numel(), BLOCK=1024)
        print("ok")
        """})
    report = compile_file(tmp_path / "bench_scale.py", configs=SCALE, use_cache=False)
    assert report.error is None
    facts = _facts(report, "scale_kernel")
    assert facts.registers and facts.registers > 0
    assert facts.shared_bytes is not None


def test_relative_helpers_and_a_failed_decorator_in_a_src_package(tmp_path):
    _write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'mypkg'\n",
        "src/mypkg/__init__.py": "import torch\n_ = torch.cuda.get_device_capability()  # needs a GPU\n",
        "src/mypkg/ops/__init__.py": "",
        "src/mypkg/ops/helpers.py": """\
            import triton
            import triton.language as tl

            @triton.jit
            def twice(x):
                return x * 2
            """,
        "src/mypkg/ops/scale.py": """\
            import triton
            import triton.language as tl
            from vendor_registry import libentry  # a package this machine lacks

            from .helpers import twice

            @libentry()
            @triton.autotune(configs=[triton.Config({"BLOCK": 512}, num_warps=2)], key=["n"])
            @triton.jit
            def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(y_ptr + offs, twice(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)
            """})
    configs = {"scale_kernel": [{"label": "given", "args": {
        "x_ptr": {"kind": "tensor", "dtype": "float16", "align": 16},
        "y_ptr": {"kind": "tensor", "dtype": "float16", "align": 16},
        "n": {"kind": "int", "value": 3}}, "options": {}}]}
    report = compile_file(tmp_path / "src/mypkg/ops/scale.py", configs=configs, use_cache=False)
    k = report.kernel("scale_kernel")
    facts = _facts(report, "scale_kernel")
    # The autotune decorator survived the failed @libentry(): its config was compiled.
    assert facts.constexprs.get("BLOCK") == 512 and facts.num_warps == 2
    assert "libentry" in (k.note or "")


def test_a_kernel_chosen_by_a_module_level_if_else(tmp_path):
    _write(tmp_path, {"variants.py": """\
        import triton
        import triton.language as tl

        if hasattr(tl, "definitely_not_a_triton_function"):
            @triton.jit
            def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
                tl.definitely_not_a_triton_function()
        else:
            @triton.jit
            def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
        """})
    report = compile_file(tmp_path / "variants.py", configs=SCALE, use_cache=False)
    facts = _facts(report, "scale_kernel")
    assert report.kernel("scale_kernel").line == 10  # the branch Python takes, at its own line
    assert facts.registers


def test_an_unparsable_file_says_so(tmp_path):
    _write(tmp_path, {"broken.py": "import triton\n@triton.jit\ndef k(:\n"})
    report = compile_file(tmp_path / "broken.py", configs=SCALE, use_cache=False)
    assert report.error is not None and report.error.line == 3


def test_a_helper_from_a_package_this_python_lacks_gets_one_actionable_line(tmp_path, capsys):
    import json

    from tritonlens.cli import main

    _write(tmp_path, {"uses_missing.py": """\
        import triton
        import triton.language as tl
        from somebody_elses_package.ops import fast_exp

        @triton.jit
        def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, fast_exp(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)

        def scale(x, y):
            scale_kernel[(1,)](x, y, x.numel(), BLOCK=1024)
        """})
    code = main(["compile", str(tmp_path / "uses_missing.py"), "--format", "json", "--no-cache"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1  # nothing compiled is a failure, and the JSON says why
    assert out["module_failures"] == ["line 3: ModuleNotFoundError: No module named 'somebody_elses_package'"]
    (k,) = out["kernels"]
    assert k["note"].startswith("fast_exp did not import here (line 3: ModuleNotFoundError")
    assert "set tritonlens.python (--python)" in k["note"] and "Traceback" not in k["note"]
    assert all(c["error"] and "fast_exp" in c["error"]["message"] for c in k["configs"])


def test_another_libraries_jit_that_did_not_import_costs_nothing(tmp_path):
    _write(tmp_path, {"mixed.py": """\
        import triton
        import triton.language as tl
        from a_cpu_jit_library import jit

        @jit(nopython=True)
        def host_sum(*values, **options):
            return sum(values)

        @triton.jit
        def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)
        """})
    report = compile_file(tmp_path / "mixed.py", configs=SCALE, use_cache=False)
    assert report.error is None
    assert _facts(report, "scale_kernel").registers


def test_kernels_behind_a_condition_this_machine_answers_no_still_compile(tmp_path):
    _write(tmp_path, {"guarded.py": """\
        import torch

        if torch.cuda.is_available():
            import triton
            import triton.language as tl

            @triton.jit
            def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 4, mask=offs < n)
        """})
    report = compile_file(tmp_path / "guarded.py", configs=SCALE, use_cache=False)
    assert _facts(report, "scale_kernel").registers


def test_a_star_import_from_the_package_survives_a_failing_package_init(tmp_path):
    _write(tmp_path, {
        "starpkg/__init__.py": "raise RuntimeError('needs a GPU at import')\n",
        "starpkg/helpers.py": """\
            import triton
            import triton.language as tl

            __all__ = ["quadruple", "FACTOR"]
            FACTOR = tl.constexpr(4)

            @triton.jit
            def quadruple(x):
                return x * FACTOR
            """,
        "starpkg/kern.py": """\
            import triton
            import triton.language as tl
            from .helpers import *

            @triton.jit
            def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(y_ptr + offs, quadruple(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)
            """})
    report = compile_file(tmp_path / "starpkg" / "kern.py", configs=SCALE, use_cache=False)
    assert report.module_failures == []
    assert _facts(report, "scale_kernel").registers


def test_a_configuration_the_binder_refuses_costs_only_itself_and_is_no_finding(tmp_path):
    from tritonlens.profiling.compile_job import findings_from

    _write(tmp_path, {"scale.py": """\
        import triton
        import triton.language as tl

        @triton.jit
        def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 5, mask=offs < n)
        """})
    good = SCALE["scale_kernel"][0]
    configs = {"scale_kernel": [dict(good, label="three warps", options={"num_warps": 3}), good]}
    report = compile_file(tmp_path / "scale.py", configs=configs, use_cache=False)
    bad, ok = report.kernel("scale_kernel").configs
    assert "num_warps must be a power of 2" in bad.error.message and ok.registers
    assert [f for f in findings_from(report) if f.code == "TL105"] == []
