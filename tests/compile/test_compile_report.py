"""The compile report as JSON: what the compile cache holds reads back into the same report, the
CLI's `--format json` keeps its fixed keys, and a malformed report is refused naming the field."""

import pytest
from tritonlens.profiling.compile_cli import CONFIG_KEYS, to_json
from tritonlens.profiling.worker.compile_report import CompileReport
from tritonlens.profiling.worker.json_message import MessageError

CONFIG = {"label": "BLOCK=1024", "labels": ["BLOCK=1024"], "constexprs": {"BLOCK": 1024}, "num_warps": 4,
          "num_stages": 3, "registers": 40, "spill_bytes": 0, "stack_bytes": 0, "shared_bytes": 0,
          "occupancy": 100.0, "blocks_per_sm": 16, "warps_per_sm": 64, "limiter": "warps", "mma": None,
          "dots": [{"line": 9, "column": 8, "lowering": "fma", "m": 16, "n": 16, "k": 16, "a_dtype": "f32",
                    "b_dtype": "f32", "input_precision": "ieee"}],
          "pipelined": False, "pipeline": "none", "vectorized": False,
          "loads": [{"line": 17, "widest": 4, "narrowest": 4, "instructions": 1, "kinds": ["ld.global"]}],
          "lines": [{"line": 17, "instructions": 12, "spill_bytes": 0}], "error": None,
          "signature": {"x_ptr": "*fp32", "n": "i32"}, "specialization": {"x_ptr": "D", "n": ""}, "key": "ab12",
          "cached": False, "compile_s": 0.5, "args": None, "source": "static", "assumed": ["n: plain i32"],
          "value_sources": {"BLOCK": "static", "num_warps": "static"},
          "vector_whatif": {"arguments": ["n"], "lines": [{"line": 17, "bytes": 4, "could_be": 16}]}}
FAILED = {**CONFIG, "label": "BLOCK=48", "registers": None, "source": "captured", "assumed": [],
          "value_sources": {"BLOCK": "captured"},
          "error": {"type": "CompilationError", "message": "arange's range must be a power of 2", "line": 16,
                    "column": 11}}
REPORT = {"path": "/w/scale.py", "target": "sm_90", "triton_version": "3.5.0", "cached": False,
          "source": "captured launches (tritonlens_cases)", "capture_errors": [], "error": None,
          "kernels": [{"name": "scale_kernel", "line": 14, "configs": [CONFIG, FAILED], "lines": CONFIG["lines"],
                       "error": None, "source": "captured", "note": None, "pin_messages": []}]}


def test_the_cached_json_reads_back_into_the_same_report():
    report = CompileReport.from_json(REPORT)
    (k,) = report.kernels
    ok, failed = k.configs
    assert ok.compiled and not failed.compiled and failed.error.column == 11
    assert ok.vector_whatif.lines[0].could_be == 16 and ok.dots[0].lowering == "fma"
    assert report.kernel("scale_kernel") is k and report.kernel("other") is None
    assert CompileReport.from_json(report.to_json()) == report


def test_cli_json_keeps_its_keys():
    out = to_json(CompileReport.from_json(REPORT))
    assert list(out) == ["target", "triton_version", "source", "error", "module_failures", "capture_errors", "kernels"]
    (k,) = out["kernels"]
    assert list(k) == ["name", "line", "configs", "lines", "pin_messages", "error", "note", "reason"]
    static, captured = k["configs"]
    # Every configuration names its source, the source of each value and what was assumed.
    assert list(static) == list(captured) == list(CONFIG_KEYS)
    assert CONFIG_KEYS[-3:] == ("source", "value_sources", "assumed")
    assert static["source"] == "static" and static["assumed"] == ["n: plain i32"]
    assert static["value_sources"] == {"BLOCK": "static", "num_warps": "static"} and captured["source"] == "captured"
    assert captured["error"] == {"message": "arange's range must be a power of 2", "line": 16, "column": 12}
    assert k["lines"] == [{"line": 17, "instructions": 12, "spill_bytes": 0}]


def test_a_malformed_report_names_the_field():
    bad = {**REPORT, "kernels": [{**REPORT["kernels"][0], "configs": [{**CONFIG, "registers": "forty"}]}]}
    with pytest.raises(MessageError, match=r"^CompileReport\.kernels\[0\]\.configs\[0\]\.registers: expected int"):
        CompileReport.from_json(bad)
    with pytest.raises(MessageError, match=r"CompileReport\.path: missing"):
        CompileReport.from_json({"target": "sm_90"})


def test_the_compile_jobs_result_is_typed_down_to_a_configuration():
    from tritonlens.profiling.worker.messages import CompileResult

    result = CompileResult.from_json({"target": "sm_90", "kernels": [{"name": "k", "configs": [
        {"label": "BLOCK=48", "key": "ab", "static_shared_bytes": 0,
         "error": {"type": "CompilationError", "message": "power of 2", "line": 16, "column": 11}}]}]})
    (cfg,) = result.kernels[0].configs
    assert cfg.error.line == 16 and cfg.registers is None and cfg.more == {"static_shared_bytes": 0}
    with pytest.raises(MessageError, match=r"CompileResult\.kernels\[0\]\.configs\[0\]\.registers: expected int"):
        CompileResult.from_json({"kernels": [{"name": "k", "configs": [{"label": "a", "registers": 4.5}]}]})
