"""TritonParse traces as launch records: a trace written by the real tritonparse package (its
compilation listener around a real sm_90 cross-compile of the normpkg fixture's kernel, and its
launch hook fed the launch metadata of real tensors), imported into the project."""

import gzip
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tritonlens.profiling import launch_records
from tritonlens.profiling.tritonparse_import import (
    TraceError,
    import_trace,
    read_events,
)

from tritonlens.cli import main

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "normpkg"
RMS = "src/normpkg/ops/rmsnorm.py"

# Runs in its own process: tritonparse's init() installs process-wide Triton hooks.
TRACE = textwrap.dedent("""
    import os, sys
    os.environ.pop("TRITON_INTERPRET", None)
    sys.path.insert(0, os.path.join(sys.argv[1], "src"))
    import torch, triton
    import tritonparse.structured_logging as tp
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from normpkg.ops.rmsnorm import _rms_norm_fwd_kernel

    tp.init(sys.argv[2], enable_trace_launch=True)
    signature = {"Y": "*fp16", "Y_row_stride": "i32", "X": "*fp16", "X_row_stride": "i32", "W": "*fp16",
                 "RSTD": "*fp32", "n_cols": "i32", "eps": "fp32", "BLOCK_SIZE": "constexpr"}
    src = ASTSource(fn=_rms_norm_fwd_kernel, signature=signature, constexprs={"BLOCK_SIZE": 1024},
                    attrs={(0,): [["tt.divisibility", 16]], (2,): [["tt.divisibility", 16]]})
    kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 2})
    x = torch.randn(6, 1000, dtype=torch.float16)
    args = {"Y": torch.empty_like(x), "Y_row_stride": 1000, "X": x, "X_row_stride": 1000,
            "W": torch.ones(1000, dtype=torch.float16), "RSTD": torch.empty(6), "n_cols": 1000, "eps": 1e-6,
            "BLOCK_SIZE": 1024}

    class Launch:  # what Triton's launcher hands the launch hook: a lazy dict
        def __init__(self, data):
            self.data = data

        def get(self):
            return self.data

    meta = tp.add_launch_metadata((6, 1, 1), kernel.metadata, args)
    for _ in range(3):  # the same launch three times, as a training loop would
        tp.LaunchHookImpl()(Launch({"name": kernel.metadata.name, "function": None, "stream": 0, **meta}))
""")


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """(the project the trace was taken in, the trace folder)."""
    base = tmp_path_factory.mktemp("traced")
    project = base / "normpkg"
    shutil.copytree(FIXTURE, project, ignore=shutil.ignore_patterns("__pycache__", ".tritonlens"))
    out = base / "trace"
    run = subprocess.run([sys.executable, "-c", TRACE, str(project), str(out)], check=False, capture_output=True,
                         text=True, timeout=600, env={k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"})
    assert run.returncode == 0, run.stderr[-3000:]
    return project, out


def test_the_trace_is_tritonparse_output(traced):
    _, out = traced
    kinds = [e["event_type"] for e in read_events(out)]
    assert kinds.count("compilation") == 1 and kinds.count("launch") == 3


def test_a_trace_from_another_machine_imports_into_this_copy(traced, tmp_path):
    _, out = traced
    here = tmp_path / "checkout"  # another copy: the trace's absolute paths name the first one
    shutil.copytree(FIXTURE, here, ignore=shutil.ignore_patterns("__pycache__", ".tritonlens"))
    outcome = import_trace(out, here)
    assert outcome.reason is None and outcome.kept == 1 and outcome.outside == 0
    [record] = launch_records.load(here)
    assert record.file == RMS and record.origin == "tritonparse trace"
    launch = record.launch
    assert launch.kernel == "_rms_norm_fwd_kernel" and launch.count == 3
    assert launch.constexprs == {"BLOCK_SIZE": 1024} and (launch.num_warps, launch.num_stages) == (4, 2)
    assert launch.grid == [6, 1, 1] and launch.more["source"] == "tritonparse"
    args = {a.name: a for a in launch.args}
    assert (args["X"].kind, args["X"].dtype, args["X"].shape, args["X"].strides) == ("tensor", "float16", [6, 1000],
                                                                                     [1000, 1])
    assert args["RSTD"].dtype == "float32" and args["X"].more["align"] == 16
    assert (args["n_cols"].kind, args["n_cols"].type, args["n_cols"].value) == ("scalar", "int", 1000)
    assert args["eps"].type == "float" and args["BLOCK_SIZE"].kind == "constexpr"
    assert launch_records.records_for(here / RMS, "_rms_norm_fwd_kernel") == [launch]


def test_gzip_traces_and_the_cli(traced, tmp_path, capsys):
    project, out = traced
    [plain] = list(out.iterdir())
    packed = tmp_path / "trace.bin.ndjson"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert main(["capture", str(project), "--import-tritonparse", str(packed)]) == 0
    assert "_rms_norm_fwd_kernel: 1 distinct launch" in capsys.readouterr().out
    assert launch_records.load(project)[0].origin == "tritonparse trace.bin.ndjson"

    compile_only = tmp_path / "compile_only.ndjson"
    compile_only.write_text("".join(line for line in plain.read_text().splitlines(True) if '"launch"' not in line))
    assert main(["capture", str(project), "--import-tritonparse", str(compile_only)]) == 1
    assert "has no launch event" in capsys.readouterr().out
    with pytest.raises(TraceError, match="no trace file"):
        import_trace(tmp_path / "missing.ndjson", project)
