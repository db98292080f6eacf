"""A configuration of ASSUMED values that does not compile for a value-dependent reason (a reshape
that needs other tile sizes, a block over Triton's element limit, a static assertion) is compiled
again with the next representative values; the facts say which value compiled and why. A pinned
value is never retried, and an error no representative value cures stays, as a hint. Compiled by
the real Triton compiler (sm_90, no GPU)."""

from pathlib import Path

import pytest
from tritonlens.analysis.findings import Severity
from tritonlens.profiling.compile_job import compile_file, findings_from
from tritonlens.profiling.static_configs import static_configs_of_text

FIXTURE = Path(__file__).parent / "fixtures" / "assumed_retry" / "kernels.py"


@pytest.fixture(scope="module")
def report():
    return compile_file(FIXTURE, target="sm_90")


def _compiled(report, name):
    (c,) = report.kernel(name).configs
    assert c.error is None and c.registers is not None, c.error
    return c


def test_tiles_on_the_failing_line_move_together(report):
    c = _compiled(report, "repack_kernel")
    assert c.constexprs == {"TN": 32, "TK": 32, "R": 32}
    assert "retried with TN=32, TK=32, R=32 (TN=16, TK=16, R=16 did not compile: reshape() cannot change" in c.label
    assert any(n.startswith("assumed TN=32 (retried: TN=16 did not compile; pin it:") for n in c.assumed)


def test_every_assumed_name_moves_when_the_failing_line_names_too_few(report):
    # the reshape's line names ROWS and WARPS; the 2-D tile it needs, BLOCK, moves with every name
    c = _compiled(report, "rows_by_warp_kernel")
    assert c.constexprs["BLOCK"] == 32 * c.constexprs["WARPS"]


def test_a_block_over_the_element_limit_falls_back_to_the_tiles_own_size(report):
    c = _compiled(report, "group_topk_kernel")
    assert c.constexprs["BLOCK_GROUP"] * c.constexprs["BLOCK_EXPERT"] <= 1 << 20
    assert "numel (16777216) exceeds" in c.label


def test_a_static_assertion_on_an_assumed_tile(report):
    c = _compiled(report, "split_k_kernel")
    assert c.constexprs["K"] % c.constexprs["BLOCK_K"] == 0 and "retried with" in c.label, c.label


def test_a_size_too_large_to_represent_is_retried_smaller(report):
    c = _compiled(report, "fixed_point_kernel")
    assert c.constexprs["LOG2_SCALE"] == 16 and "Nonrepresentable integer" in c.label


def test_no_retry_for_a_pin_and_an_uncured_error_stays_a_hint(report):
    (pinned,) = report.kernel("pinned_block_kernel").configs
    assert pinned.error is not None and pinned.constexprs == {"BLOCK": 1024} and "retried" not in pinned.label
    (odd,) = report.kernel("odd_block_kernel").configs
    assert odd.error is not None and "BLOCK must leave 3 over 5" in odd.error.message and odd.source == "assumed"
    (f,) = [f for f in findings_from(report) if f.code == "TL105" and f.kernel == "odd_block_kernel"]
    assert f.severity == Severity.WARNING


def test_the_comparison_of_a_remainder_is_not_the_tiles_value():
    (cfg,) = static_configs_of_text(FIXTURE.read_text())[0]["split_k_kernel"]
    assert cfg["args"]["BLOCK_K"]["value"] != 0 and cfg["retry"]["BLOCK_K"]
    (pinned,) = static_configs_of_text(FIXTURE.read_text())[0]["pinned_block_kernel"]
    assert "retry" not in pinned
    (mode,) = static_configs_of_text(FIXTURE.read_text())[0]["mode_kernel"]
    assert mode["args"]["MODE"]["value"] == 0 and "MODE" not in mode["retry"] and mode["retry"]["BLOCK"]


def test_a_static_assert_on_a_derived_tile_moves_the_names_it_is_derived_from(report):
    # Triton says "tl.static_assert(BLOCK_SIZE <= 4096)" at the def; BLOCK_SIZE = TOKENS * K_POW2
    c = _compiled(report, "scatter_rows_kernel")
    assert c.constexprs["TOKENS"] * c.constexprs["K_POW2"] <= 4096
    assert "retried with TOKENS=16, K_POW2=16 (TOKENS=4096, K_POW2=4096 did not compile" in c.label


def test_a_change_that_still_fails_the_assertion_is_not_compiled():
    # TOKENS=K_POW2=128 makes BLOCK_SIZE 16384, still over 4096: worked out, not compiled (a large
    # tile of a sort takes Triton minutes); 16 each passes, and what cannot be worked out is tried
    from tritonlens.profiling.worker.compile_retry import refuted

    text = FIXTURE.read_text()
    error = {"message": "at 10:4:\ndef scatter_rows_kernel(\n    tl.static_assert(BLOCK_SIZE <= 4096)\n    ^"}
    cfg = {"args": {"TOKENS": {"kind": "constexpr", "value": 4096}, "K_POW2": {"kind": "constexpr", "value": 4096}}}
    assert refuted(error, text, cfg, {"TOKENS": 128, "K_POW2": 128})
    assert not refuted(error, text, cfg, {"TOKENS": 16, "K_POW2": 16})
    unknown = {"message": "tl.static_assert(BLOCK_SIZE <= triton.cdiv(N, 2))"}
    assert not refuted(unknown, text, cfg, {"TOKENS": 128, "K_POW2": 128})


def test_a_call_wrapped_over_lines_moves_the_names_on_all_its_lines(report):
    # Triton points at `q = tl.reshape(`; TN, R and TK are on the lines below, WIDTH elsewhere
    c = _compiled(report, "repack_wrapped_kernel")
    assert "retried with TN=32, TK=32, R=32 (TN=16, TK=16, R=16 did not compile" in c.label
