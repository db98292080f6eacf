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
    assert f.message == ("loads on this line move 4 B per instruction; with n divisible by 16 they would move 16 B "
                         "(launch of case 0, grid 64)")


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
