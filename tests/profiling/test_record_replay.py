"""Profiling a project's kernel file with no harness: the launches `tritonlens capture` recorded
from the project's own tests are replayed on fresh data, in real worker processes under Triton's
interpreter (no GPU here). The projects are src-layout packages whose kernel modules use
relative imports, so the worker must import them as part of their package."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tritonlens.profiling import launch_records
from tritonlens.profiling.client import WORKER_DIR
from tritonlens.profiling.worker.messages import LaunchDescriptor

NORMPKG = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "normpkg"

ROWS = '''
"""Row kernels: scale each row by a weight vector; gather rows of a table by index."""
import torch
import triton
import triton.language as tl

from .sizes import rows_of


@triton.jit
def _row_scale_kernel(X, W, Y, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(X + row * stride + cols, mask=mask)
        w = tl.load(W + cols, mask=mask)
        tl.store(Y + row * stride + cols, x * w, mask=mask)


@triton.jit
def _gather_rows_kernel(IDX, TABLE, OUT, dim, table_stride, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    src = tl.load(IDX + i)
    cols = tl.arange(0, BLOCK)
    mask = cols < dim
    row = tl.load(TABLE + src * table_stride + cols, mask=mask)
    tl.store(OUT + i * dim + cols, row, mask=mask)


def row_scale(x, w):
    x2 = rows_of(x).contiguous()
    y = torch.empty_like(x2)
    _row_scale_kernel[(x2.shape[0],)](x2, w, y, x2.shape[1], x2.stride(0), BLOCK=128)
    return y.reshape(x.shape)


def gather_rows(table, idx):
    out = torch.empty(idx.numel(), table.shape[1], dtype=table.dtype, device=table.device)
    block = triton.next_power_of_2(table.shape[1])
    _gather_rows_kernel[(idx.numel(),)](idx, table, out, table.shape[1], table.stride(0), BLOCK=block)
    return out
'''

TEST_ROWS = '''
import torch

from rowpkg import row_scale


def test_row_scale_matches_torch():
    for shape in [(4, 300), (2, 3, 1000)]:
        x = torch.randn(*shape, device="cuda")
        w = torch.randn(shape[-1], device="cuda")
        torch.testing.assert_close(row_scale(x, w), x * w)
'''


def write_project(root: Path) -> Path:
    files = {
        "pyproject.toml": '[project]\nname = "rowpkg"\nversion = "0.1"\n',
        "src/rowpkg/__init__.py": "from rowpkg.ops.rows import gather_rows, row_scale\n",
        "src/rowpkg/ops/__init__.py": "",
        "src/rowpkg/ops/sizes.py": "def rows_of(x):\n    return x.reshape(-1, x.shape[-1])\n",
        "src/rowpkg/ops/rows.py": ROWS,
        "tests/test_rows.py": TEST_ROWS,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root / "src" / "rowpkg" / "ops" / "rows.py"


def tritonlens(*args, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, TRITON_INTERPRET="1")
    return subprocess.run([sys.executable, "-m", "tritonlens", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600, check=False)


@pytest.fixture(scope="module")
def captured(tmp_path_factory) -> Path:
    """The rowpkg project after `tritonlens capture` ran its tests (interpreter, cuda on the CPU)."""
    kernel_file = write_project(tmp_path_factory.mktemp("rowpkg"))
    root = kernel_file.parents[3]
    proc = tritonlens("capture", str(kernel_file), cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return kernel_file


def test_profile_replays_the_records_largest_first(captured):
    root = captured.parents[3]
    records = launch_records.records_for(captured)
    assert sorted(r.grid[0] for r in records) == [4, 6]  # (4, 300) and (2, 3, 1000) seen as rows
    proc = tritonlens("profile", str(captured), "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["mode"] == "interpreter" and report["source"] == "records"
    assert [c["ok"] for c in report["cases"]] == [True, True]
    scale, gather = report["kernels"]
    assert scale["name"] == "_row_scale_kernel" and scale["error"] is None
    # the performance shape first: the larger launch (6 rows of 1000), then the other one
    assert [launch["grid"] for launch in scale["launches"]] == [[6, 1, 1], [4, 1, 1]]
    for launch in scale["launches"]:
        assert launch["constexprs"] == {"BLOCK": 128} and launch["replayed"] is True
        assert launch["time_ms"] is None and launch["gbps"] is None  # never a made-up time
    # Y written (6x1000 float32), X and W read: the replay's write detection saw the outputs
    assert scale["launches"][0]["bytes"] == {"read": 28000, "written": 24000}
    # no test reaches the gather kernel: no record, so nothing launched it
    assert gather["launches"] == [] and gather["error"].startswith("not launched by the launch records")

    text = tritonlens("profile", str(captured), "--kernel", "_row_scale_kernel", cwd=root)
    assert text.returncode == 0, text.stderr
    assert "no harness: replayed 2 recorded launch(es) on fresh data" in text.stdout
    assert "6x1x1" in text.stdout and "_gather_rows_kernel" not in text.stdout


def _gather_record(table_rows: int) -> LaunchDescriptor:
    """A launch of the gather kernel written by hand, as a record from JSON carries it: no values."""
    def tensor(name, dtype, shape, strides, written=False):
        return {"name": name, "kind": "tensor", "dtype": dtype, "shape": shape, "strides": strides,
                "written": written, "device": "cuda:0"}

    return LaunchDescriptor.from_json({
        "kernel": "_gather_rows_kernel", "key": f"by-hand-{table_rows}", "grid": [300, 1, 1],
        "constexprs": {"BLOCK": 16}, "num_warps": 4, "num_stages": 3,
        "args": [tensor("IDX", "int64", [300], [1]),
                 tensor("TABLE", "float32", [table_rows, 16], [32, 1]),  # every other row of 32
                 tensor("OUT", "float32", [300, 16], [16, 1], written=True),
                 {"name": "dim", "kind": "scalar", "type": "int", "value": 16},
                 {"name": "table_stride", "kind": "scalar", "type": "int", "value": 32},
                 {"name": "BLOCK", "kind": "constexpr", "value": 16}]})


def test_a_record_from_json_gets_in_range_indices_and_its_recorded_strides(tmp_path):
    """No snapshot of the index values: they are drawn in [0, smallest dimension), so they index
    the 8-row table; the table keeps its recorded strides. Run in a worker-like interpreter."""
    desc = _gather_record(table_rows=8)
    script = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(WORKER_DIR)!r})
        import messages, record_cases
        desc = messages.LaunchDescriptor.from_json(json.loads(sys.stdin.read()))
        a, b = (record_cases.build_values(desc, "cpu", seed=s) for s in (0, 1))
        print(json.dumps({{"idx_min": int(a["IDX"].min()), "idx_max": int(a["IDX"].max()),
                          "table_strides": list(a["TABLE"].stride()), "shape": list(a["TABLE"].shape),
                          "differs": bool((a["TABLE"] != b["TABLE"]).any()), "BLOCK": a["BLOCK"]}}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], input=json.dumps(desc.to_json()), capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, TRITON_INTERPRET="1"), check=False)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["idx_min"] >= 0 and got["idx_max"] < 8 and got["idx_max"] > 0
    assert got["table_strides"] == [32, 1] and got["shape"] == [8, 16]
    assert got["differs"] and got["BLOCK"] == 16  # fresh data per seed; constexprs as recorded


def test_profile_replays_a_hand_written_record(tmp_path):
    kernel_file = write_project(tmp_path)
    rel = launch_records.relative_file(tmp_path, str(kernel_file))
    launch_records.save(tmp_path, [launch_records.StoredLaunch(_gather_record(8), rel, "by hand")])
    proc = tritonlens("profile", str(kernel_file), "--kernel", "_gather_rows_kernel", "--format", "json",
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (kernel,) = json.loads(proc.stdout)["kernels"]
    (launch,) = kernel["launches"]
    assert kernel["error"] is None and launch["error"] is None and launch["replayed"] is True
    assert launch["grid"] == [300, 1, 1] and launch["constexprs"] == {"BLOCK": 16}


def test_the_worker_imports_a_file_as_its_project_does(tmp_path):
    """As part of its package (a namespace folder inside it too); by file name when the package's
    __init__ fails on this machine; the package's own error when both fail."""
    files = {
        "src/okpkg/__init__.py": "",
        "src/okpkg/util.py": "SCALE = 3\n",
        "src/okpkg/inner/k.py": "from ..util import SCALE\n",  # no __init__.py in inner/
        "src/gpupkg/__init__.py": "raise RuntimeError('gpupkg needs a GPU')\n",
        "src/gpupkg/plain.py": "import math\nSCALE = math.floor(2.5)\n",
        "src/gpupkg/relative.py": "from .plain import SCALE\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    src = str(tmp_path / "src")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(WORKER_DIR)!r})
        import harness
        k = harness.load_module({src!r} + "/okpkg/inner/k.py", import_folders=[{src!r}])
        print(k.__name__, k.SCALE)
        plain = harness.load_module({src!r} + "/gpupkg/plain.py", import_folders=[{src!r}])
        print(plain.__name__.startswith("tritonlens_user_plain_"), plain.SCALE)
        try:
            harness.load_module({src!r} + "/gpupkg/relative.py", import_folders=[{src!r}])
        except Exception as exc:
            print(type(exc).__name__, exc)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["okpkg.inner.k 3", "True 2", "RuntimeError gpupkg needs a GPU"]


def test_without_records_or_harness_the_message_says_how_to_get_them(tmp_path):
    kernel_file = write_project(tmp_path)
    proc = tritonlens("profile", str(kernel_file), cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    message = proc.stderr.strip()
    assert message == ("tritonlens profile: no launch records and no harness for rows.py: run "
                       "`tritonlens capture src/rowpkg/ops/rows.py`, define tritonlens_cases(), "
                       "or pass --harness FILE.py::FUNC"), message


def test_a_missing_dependency_says_which_interpreter_to_use(tmp_path):
    kernel_file = write_project(tmp_path)
    kernel_file.write_text(kernel_file.read_text().replace("import torch\n", "import torch\nimport not_installed_dep\n"))
    rel = launch_records.relative_file(tmp_path, str(kernel_file))
    launch_records.save(tmp_path, [launch_records.StoredLaunch(_gather_record(8), rel, "by hand")])
    proc = tritonlens("profile", str(kernel_file), "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    assert error["message"] == ("cannot import rows.py: No module named 'not_installed_dep'; run the "
                                "worker with the project's interpreter (--python, or the tritonlens.python setting)")


def test_tritonlens_cases_come_before_the_records(tmp_path):
    kernel_file = write_project(tmp_path)
    text = kernel_file.read_text() + textwrap.dedent("""

        def tritonlens_cases():
            yield row_scale, (torch.randn(3, 40), torch.randn(40))
    """)
    kernel_file.write_text(text)
    rel = launch_records.relative_file(tmp_path, str(kernel_file))
    launch_records.save(tmp_path, [launch_records.StoredLaunch(_gather_record(8), rel, "by hand")])
    proc = tritonlens("profile", str(kernel_file), "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["source"] == "tritonlens_cases"
    scale, gather = report["kernels"]
    assert [launch["grid"] for launch in scale["launches"]] == [[3, 1, 1]] and gather["launches"] == []


def test_normpkg_fixture_profiles_from_its_captured_tests(tmp_path):
    """The issue's fixture: src layout, BLOCK_SIZE and num_warps from a helper at run time, tests
    written for device="cuda"; nothing added for tritonlens."""
    root = tmp_path / "normpkg"
    shutil.copytree(NORMPKG, root)
    kernel_file = root / "src" / "normpkg" / "ops" / "rmsnorm.py"
    proc = tritonlens("capture", str(kernel_file), cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = tritonlens("profile", str(kernel_file), "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["source"] == "records" and all(c["ok"] for c in report["cases"])
    (kernel,) = report["kernels"]
    recorded = launch_records.records_for(kernel_file)
    assert len(report["cases"]) == len(recorded) >= 6  # 3 shapes x 2 dtypes, and the 3-d input
    first = kernel["launches"][0]  # the largest: 2 rows of 4096 in float32, 8 warps from the helper
    assert first["grid"] == [2, 1, 1] and first["constexprs"] == {"BLOCK_SIZE": 4096}
    assert first["num_warps"] == 8 and "float32[2, 4096]" in first["signature"]
    assert all(launch["replayed"] and launch["error"] is None for launch in kernel["launches"])
