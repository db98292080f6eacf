"""TL101–TL106 messages from compile reports: plain text within MESSAGE_LIMIT whatever the
configuration labels and compiler errors hold, and TL106 judged on the performance shape.

The reports are built as the compile job writes them (the worker's typed ConfigFacts), so every
rule fires here without a compile; test_compile_rules.py and test_compile_cli_cache.py run the real
compiles."""

from __future__ import annotations

from pathlib import Path

import pytest
from tritonlens.analysis.findings import MESSAGE_LIMIT
from tritonlens.profiling.compile_findings import findings_from, performance_configs
from tritonlens.profiling.compile_job import compile_file
from tritonlens.profiling.worker.compile_report import (
    CompileFailure,
    CompileReport,
    ConfigFacts,
    DotFacts,
    KernelCompile,
    LineFacts,
    VectorWhatIf,
    WiderLoad,
)

FIX = Path(__file__).parent / "fixtures"
TEXT = "\n".join(f"    line_{i} = {i}" for i in range(1, 40))
LONG_LABEL = ("launch in test_attention_forward_with_a_very_long_parametrized_name, grid 128×32×4, "
              "autotune config #7 (BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_warps=8, num_stages=5)")


def _config(label=LONG_LABEL, **facts) -> ConfigFacts:
    base = {"label": label, "labels": [label], "constexprs": {"BLOCK_M": 128}, "num_warps": 8, "num_stages": 5,
            "registers": 255, "spill_bytes": 0, "shared_bytes": 1024, "occupancy": 50.0, "blocks_per_sm": 2,
            "warps_per_sm": 16, "limiter": "registers"}
    return ConfigFacts(**{**base, **facts})


def _report(*configs: ConfigFacts) -> CompileReport:
    return CompileReport(path="k.py", target="sm_90", kernels=[KernelCompile(name="attention_fwd_kernel", line=1,
                                                                          configs=list(configs))])


def _whatif(line=12, args=("n_elements_of_the_flattened_input", "stride_of_the_output_rows")) -> VectorWhatIf:
    return VectorWhatIf(arguments=list(args), lines=[WiderLoad(line=line, bytes=4, could_be=16)])


def test_every_compile_rule_states_its_fact_within_the_limit_in_plain_text():
    error = ("at 12:4: arange's range must be a power of 2, got 48; " + "the compiler's traceback goes on " * 20
             + "\nTraceback (most recent call last): ...")
    report = _report(
        _config(spill_bytes=4096, lines=[LineFacts(line=20, instructions=40, spill_bytes=2048)]),  # TL101
        _config(label=LONG_LABEL + " #2", occupancy=6.25, blocks_per_sm=1),  # TL102
        _config(label=LONG_LABEL + " #3", shared_bytes=262_144),  # TL104
        _config(label=LONG_LABEL + " #4", dots=[DotFacts(line=30, column=10, lowering="fma", m=128, n=128, k=64,
                                                          a_dtype="fp32", input_precision="ieee")]),  # TL103
        _config(label=LONG_LABEL + " #5", vector_whatif=_whatif()),  # TL106
        ConfigFacts(label=LONG_LABEL + " #6", labels=[LONG_LABEL + " #6"],
                    error=CompileFailure(type="CompilationError", message=error, line=12, column=4)),  # TL105
    )
    found = findings_from(report, TEXT)
    assert {f.code for f in found} == {"TL101", "TL102", "TL103", "TL104", "TL105", "TL106"}
    for f in found:
        assert len(f.message) <= MESSAGE_LIMIT and "`" not in f.message and "\n" not in f.message, (f.code, f.message)
    by = {f.code: f for f in found}
    # The essential fact and its numbers stay; what no longer fits is in data.
    assert "255 registers" in by["TL101"].message and "4,096 B" in by["TL101"].message
    assert "6.25%" in by["TL102"].message
    assert "262,144 B" in by["TL104"].message and "232,448 B" in by["TL104"].message
    assert "fma" in by["TL103"].message and "wgmma" in by["TL103"].message
    assert "power of 2" in by["TL105"].message and by["TL105"].data["error"] == error
    assert "4 B" in by["TL106"].message and "16 B" in by["TL106"].message


def test_a_short_label_is_named_in_the_message():
    (f,) = findings_from(_report(_config(label="launch of case 0, grid 64", vector_whatif=_whatif(args=("n",)))), TEXT)
    assert f.message == "loads move 4 B per instruction, 16 B with n divisible by 16 (launch of case 0, grid 64)"


def test_tl106_judges_the_performance_case_not_a_ragged_correctness_case():
    perf = _config(label="launch of case 0, grid 1024", registers=32)  # n = 2**20: vectorized, no what-if
    ragged = _config(label="launch of case 1, grid 1", registers=32, vector_whatif=_whatif(args=("n",)))
    assert performance_configs([perf, ragged]) == [perf]
    assert not [f for f in findings_from(_report(perf, ragged), TEXT) if f.code == "TL106"]
    # When the performance case itself loads narrowly, TL106 speaks of it, not of a later case.
    slow = _config(label="launch of case 0, grid 1024", vector_whatif=_whatif(line=14, args=("n",)))
    (f,) = [f for f in findings_from(_report(ragged, slow), TEXT) if f.code == "TL106"]
    assert f.range.start.line + 1 == 14 and f.data["config"] == "launch of case 0, grid 1024"
    # A specialisation shared by both cases counts as the performance case's.
    shared = _config(label="launch of case 1, grid 1", vector_whatif=_whatif(args=("n",)))
    shared.labels = ["launch of case 1, grid 1", "launch of case 0, grid 1024"]
    assert performance_configs([shared]) == [shared]


def test_without_harness_cases_the_largest_grid_is_the_performance_shape():
    small = _config(label="launch in test_tail, grid 1", vector_whatif=_whatif(args=("n",)))
    large = _config(label="launch in test_speed, grid 4096×2")
    assert performance_configs([small, large]) == [large]
    assert not [f for f in findings_from(_report(small, large), TEXT) if f.code == "TL106"]
    static = [_config(label="static: the launch at line 30"), _config(label="assumed: BLOCK=1024")]
    assert performance_configs(static) == static


@pytest.mark.slow
def test_a_ragged_second_case_gets_no_tl106_when_the_performance_case_vectorizes():
    """Captured and compiled for real: the ragged case's loads are scalar (n = 1000), the
    performance case's are 16 B wide (n = 16384): nothing to report."""
    result = compile_file(FIX / "scale_ragged_case.py")
    configs = result.kernel("scale_kernel").configs
    labels = sorted(label for c in configs for label in c.labels)
    assert [lb.split(",")[0] for lb in labels] == ["launch of case 0", "launch of case 1"], labels
    assert any(c.vector_whatif is not None for c in configs)  # the ragged case alone would give TL106
    assert not [f for f in findings_from(result) if f.code == "TL106"]


ASSUMED = ["assumed BLOCK_SIZE=4096 (one of the kernel's 1-D block sizes; pin it: `# tritonlens: BLOCK_SIZE=4096` "
           "above the kernel)", "assumed num_warps=4 (Triton's default; pin it: `# tritonlens: num_warps=4` above the "
           "kernel)", "assumed: integers unknown, compiled as plain i32 (not 1, not divisible by 16): n_cols"]
KERNEL = "import triton\n\n\n@triton.jit\ndef attention_fwd_kernel(x, n):\n    pass\n"


def _assumed_report(**facts) -> CompileReport:
    cfg = _config(label="assumed: launch at line 30", source="assumed", assumed=ASSUMED,
                  value_sources={"BLOCK_SIZE": "assumed", "num_warps": "assumed"}, **facts)
    return CompileReport(path="k.py", target="sm_90", kernels=[KernelCompile(name="attention_fwd_kernel", line=5,
                                                                          configs=[cfg])])


def test_a_finding_from_assumed_values_is_a_hint_that_names_them_and_offers_the_pin():
    spills = _assumed_report(spill_bytes=10_736, lines=[LineFacts(line=6, instructions=40, spill_bytes=2048)])
    (f,) = findings_from(spills, KERNEL)
    # spills never stop Triton, and an assumed configuration is our guess, not the user's code
    assert f.severity.value == "warning"
    assert f.message == ("assuming BLOCK_SIZE=4096, num_warps=4: 255 registers and 10,736 B of spills to local "
                         "memory per thread")  # the detail that no longer fits is in data and related
    assert f.data["assumed"] == ["BLOCK_SIZE=4096", "num_warps=4"]
    assert f.fix.title == "pin BLOCK_SIZE=4096, num_warps=4 above the kernel"
    assert f.fix.applicability.value == "unsafe"  # offered in the editor, never applied by check --fix
    [edit] = f.fix.edits
    assert (edit.range.start.line, edit.range.start.column, edit.new_text) == (
        3, 0, "# tritonlens: BLOCK_SIZE=4096 num_warps=4\n")  # above the decorator


def test_a_compile_error_from_assumed_values_is_a_warning_and_one_from_the_users_values_an_error():
    failure = CompileFailure(type="CompilationError", message="arange's range must be a power of 2", line=6, column=4)
    (assumed,) = findings_from(_assumed_report(error=failure, registers=None), KERNEL)
    assert assumed.code == "TL105" and assumed.severity.value == "warning"
    assert assumed.message.startswith("assuming BLOCK_SIZE=4096, num_warps=4: Triton compile error: arange's range")
    captured = _report(ConfigFacts(label="launch of case 0", labels=["launch of case 0"], error=failure))
    (real,) = findings_from(captured, KERNEL)
    assert real.severity.value == "error" and real.fix is None and "assuming" not in real.message


def test_a_long_list_of_names_is_cut_between_names_never_inside_one():
    (f,) = findings_from(_report(_config(label="x", vector_whatif=_whatif(
        args=("Y_row_stride", "X_row_stride", "W_row_stride", "RSTD_row_stride")))), TEXT)
    assert "with Y_row_stride, X_row_stride and 2 more divisible by 16" in f.message, f.message


def test_a_compile_error_says_triton_s_message_not_the_source_it_quotes():
    error = ("at 20:4:\n    BLOCK_K: tl.constexpr,\n):\n    tl.static_assert(\n    ^\n"
             "K / 4 must be divisible by BLOCK_K")
    report = _report(ConfigFacts(label="assumed: defaults", labels=["assumed: defaults"],
                                 error=CompileFailure(type="CompilationError", message=error, line=12, column=4)))
    (f,) = [f for f in findings_from(report, TEXT) if f.code == "TL105"]
    assert "Triton compile error: K / 4 must be divisible by BLOCK_K" in f.message, f.message
