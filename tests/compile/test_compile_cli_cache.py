"""The captured-launch path end to end: CLI JSON schema, TL106 with its what-if evidence, the cache,
cancellation, and every example file."""

import json
import threading
import time
from pathlib import Path

import pytest
from tritonlens.profiling import compile_job
from tritonlens.profiling.compile_job import (
    CompileCancelled,
    compile_file,
    findings_from,
)

from tritonlens.cli import main

pytestmark = pytest.mark.slow
FIX = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
SCALE = FIX / "scale.py"

CONFIG_KEYS = ["constexprs", "num_warps", "num_stages", "registers", "spill_bytes", "shared_bytes", "occupancy",
               "limiter", "mma", "pipelined", "vectorized", "error", "source", "value_sources", "assumed"]


def test_cli_json_schema_then_cached_answer_without_any_compile(capsys):
    assert main(["compile", str(SCALE), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["target", "triton_version", "source", "error", "module_failures", "capture_errors", "kernels"]
    assert out["target"] == "sm_90"
    (k,) = out["kernels"]
    assert list(k) == ["name", "line", "configs", "lines", "pin_messages", "error", "note", "reason"]
    assert k["name"] == "scale_kernel" and k["line"] == 14
    (c,) = k["configs"]
    assert list(c) == CONFIG_KEYS
    assert c["constexprs"] == {"BLOCK": 1024} and c["num_warps"] == 4
    assert c["source"] == "captured" and c["value_sources"]["BLOCK"] == "captured" and c["assumed"] == []
    assert isinstance(c["registers"], int) and c["registers"] > 0 and c["error"] is None
    assert c["mma"] is None and c["vectorized"] is False  # n = 1000: scalar loads
    assert all(list(ln) == ["line", "instructions", "spill_bytes"] for ln in k["lines"])
    assert {ln["line"] for ln in k["lines"]} >= {16, 17, 18}

    # Second run of the unchanged file: answered from the cache, no worker job at all.
    jobs, captures = compile_job.STATS["worker_jobs"], compile_job.STATS["capture_jobs"]
    t0 = time.perf_counter()
    result = compile_file(SCALE)
    elapsed = time.perf_counter() - t0
    assert result.cached is True
    assert (compile_job.STATS["worker_jobs"], compile_job.STATS["capture_jobs"]) == (jobs, captures)
    assert elapsed < 0.5

    # TL106: loads at line 17 are 4 B; with n divisible by 16 the same block loads 16 B.
    (f,) = [f for f in findings_from(result) if f.code == "TL106"]
    assert f.range.start.line + 1 == 17 and f.data["arguments"] == ["n"]
    assert (f.data["bytes"], f.data["could_be"]) == (4, 16)

    # Below the file cache, the worker's per-configuration cache: a forced re-run compiles nothing.
    again = compile_file(SCALE, use_cache=False)
    assert all(c.cached for c in again.kernels[0].configs)


def test_cli_text_and_emit(capsys):
    assert main(["compile", str(SCALE), "--emit", "ptx"]) == 0
    out = capsys.readouterr().out
    assert ".target sm_90a" in out and "ld.global" in out
    assert main(["compile", str(SCALE)]) == 0
    out = capsys.readouterr().out
    assert "scale_kernel (line 14)" in out and "TL106" in out


def test_bad_input_is_a_clear_error(capsys, tmp_path):
    assert main(["compile", str(tmp_path / "missing.py")]) == 1
    assert "cannot read" in capsys.readouterr().err
    with pytest.raises(ValueError):
        compile_file(SCALE, target="sm_42")


def test_cancel_kills_the_compile():
    import uuid

    from test_compile_rules import mm_config

    # A line on top shifts the kernel: no cache (ours or Triton's) can answer, the compile takes > 1 s.
    text = f"# {uuid.uuid4()}\n" + (FIX / "mm_kernel.py").read_text()
    cancel = threading.Event()
    timer = threading.Timer(0.5, cancel.set)
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(CompileCancelled):
        compile_file(FIX / "mm_kernel.py", text=text, cancel=cancel,
                     configs={"matmul_kernel": [mm_config(256, 256, 64, 8, 3)]})
    assert time.perf_counter() - t0 < 1.5
    # The next compile gets a fresh worker and works.
    assert compile_file(FIX / "bad_arange.py", configs={"bad_kernel": []}).kernels[0].configs


def test_every_example_cross_compiles():
    examples = sorted((ROOT / "examples").glob("*.py"))
    assert examples, "examples/ is empty"
    for path in examples:
        result = compile_file(path, max_cases=1)
        assert result.error is None, (path.name, result.error)
        assert result.kernels, f"{path.name}: no launch captured"
        for k in result.kernels:
            assert k.configs, (path.name, k)
            for c in k.configs:
                assert c.error is None, (path.name, c.label, c.error)
                assert 0 < c.registers <= 255 and c.shared_bytes >= 0 and c.limiter
        if path.name == "matmul.py":
            # 32×32 tiles: the example's deliberate weakness shows as TL103 on sm_90.
            assert any(f.code == "TL103" for f in findings_from(result))
        if path.name == "rmsnorm_autotune.py":
            # Every autotune config is compiled, not just the one the interpreter ran.
            assert len(result.kernels[0].configs) == 4
