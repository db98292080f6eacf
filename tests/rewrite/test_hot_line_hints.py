"""Hot lines → which proposers go first: the stall at a load of a row kernel favours coarsening and
block sizes, a starved `tl.dot` favours tiles and stages, a reduction at a barrier num_warps; the
candidates and a config search's variants are ordered by them, never filtered."""

from __future__ import annotations

from hot_line_support import hot, line_of, profile
from rewrite_support import FIXTURES
from tritonlens.analysis.engine import Analyzer
from tritonlens.rewrite import propose_config, propose_rules
from tritonlens.rewrite.candidate import Candidate
from tritonlens.rewrite.context import ProposalContext
from tritonlens.rewrite.hot_line_hints import (
    BLOCK,
    COARSEN,
    STAGES,
    TILE,
    WARPS,
    families_of,
    favour,
    favour_configs,
    hints_for,
    note,
)
from tritonlens.rewrite.hot_lines import current, from_report, read_report

# the examples' profiles recorded on an H100 with --lines
RECORDED = FIXTURES.parent.parent / "fixtures" / "line_profiles"
EXAMPLES = FIXTURES.parents[2] / "examples"

ROWS = (FIXTURES / "hot_rows.py").read_text()
MATMUL = (FIXTURES / "hot_matmul.py").read_text()
ROW_SUM = (FIXTURES / "hot_row_sum.py").read_text()


def test_a_row_kernel_waiting_on_its_load_favours_coarsening_then_blocks():
    x_load = line_of(ROWS, "x = tl.load(")
    hints = hints_for(ROWS, "scale_rows_kernel", profile("scale_rows_kernel",
                                                         hot(x_load, 0.62, {"long_sb": 500, "wait": 40},
                                                             ("global load", "integer arithmetic"))))
    assert [h.families for h in hints] == [(COARSEN, BLOCK)]
    reason = hints[0].reason
    assert reason.startswith(f"line {x_load} (`x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)`, 62%")
    assert "waits on global memory" in reason and "coarsening and larger blocks first" in reason


def test_the_stall_where_the_loaded_data_is_used_counts_for_the_load():
    store = line_of(ROWS, "tl.store(")
    x_load = line_of(ROWS, "x = tl.load(")
    lines = profile("scale_rows_kernel", hot(store, 0.4, {"long_sb": 300}, ("global store",), waits_on=[x_load]))
    hints = hints_for(ROWS, "scale_rows_kernel", lines)
    assert [h.families for h in hints] == [(COARSEN, BLOCK)]
    assert f"(the load on line {x_load})" in hints[0].reason
    # the same line waiting on nothing a load explains points nowhere
    busy = profile("scale_rows_kernel", hot(store, 0.4, {"math": 300}, ("global store",)))
    assert hints_for(ROWS, "scale_rows_kernel", busy) == []


def test_a_starved_dot_favours_tiles_and_stages_unless_its_tensor_pipe_is_busy():
    dot = line_of(MATMUL, "acc = tl.dot(")
    on_operands = profile("mm_kernel", hot(dot, 0.55, {"short_sb": 400, "mio": 80}, ("tensor core",)))
    hints = hints_for(MATMUL, "mm_kernel", on_operands)
    assert [h.families for h in hints] == [(TILE, STAGES)]
    assert "tile sizes and num_stages first" in hints[0].reason
    low_pipe = profile("mm_kernel", hot(dot, 0.55, {"long_sb": 400}, ("tensor core",)))
    hints = hints_for(MATMUL, "mm_kernel", low_pipe, tensor_pipe_pct=18.0)
    assert [h.families for h in hints] == [(TILE, STAGES)] and "the tensor pipe 18% busy" in hints[0].reason
    assert hints_for(MATMUL, "mm_kernel", on_operands, tensor_pipe_pct=82.0) == []


def test_a_matmul_waiting_on_its_operand_loads_favours_stages():
    a_load = line_of(MATMUL, "a = tl.load(")
    hints = hints_for(MATMUL, "mm_kernel", profile("mm_kernel", hot(a_load, 0.3, {"long_sb": 200}, ("global load",))))
    assert [h.families for h in hints] == [(STAGES, TILE)]
    assert "not prefetched far enough" in hints[0].reason


def test_a_reduction_at_its_barrier_favours_num_warps():
    total = line_of(ROW_SUM, "total = tl.sum(")
    hints = hints_for(ROW_SUM, "row_sum_kernel", profile("row_sum_kernel", hot(total, 0.5, {"barrier": 300, "wait": 50},
                                                                                  ("barrier", "warp shuffle"))))
    assert [h.families for h in hints] == [(WARPS,)]
    assert f"line {total} (`total = tl.sum(x, axis=0)`, 50% of the samples) waits at a barrier" in hints[0].reason
    math_bound = profile("row_sum_kernel", hot(total, 0.5, {"math": 300}, ("arithmetic",)))
    assert hints_for(ROW_SUM, "row_sum_kernel", math_bound) == []


def test_cold_lines_and_lines_without_stalls_give_no_hint():
    x_load = line_of(ROWS, "x = tl.load(")
    lines = profile("scale_rows_kernel", hot(x_load, 0.04, {"long_sb": 30}), hot(x_load, 0.5, {}))
    assert hints_for(ROWS, "scale_rows_kernel", lines) == []
    assert hints_for(ROWS, "no_such_kernel", lines) == []


def _ctx(text: str, name: str) -> ProposalContext:
    return ProposalContext(f"{name}.py", text, analysis=Analyzer().analyze(text, f"{name}.py"))


def test_the_rules_come_out_with_the_hinted_family_first_and_nothing_dropped():
    ctx = _ctx(ROWS, "hot_rows")
    plain = propose_rules.propose(ctx)
    titles = [c.title for c in plain]
    assert titles[0].startswith("hoist loop-invariant load of s") and len(titles) > 2  # the proposers' own order
    x_load = line_of(ROWS, "x = tl.load(")
    hints = {"scale_rows_kernel": hints_for(ROWS, "scale_rows_kernel", profile(
        "scale_rows_kernel", hot(x_load, 0.62, {"long_sb": 500}, ("global load",))))}
    ordered = favour(plain, hints)
    assert sorted(c.title for c in ordered) == sorted(titles)
    coarse = [c for c in ordered if families_of(c) == {COARSEN}]
    assert coarse and ordered[:len(coarse)] == coarse
    assert ordered[len(coarse)].title == titles[0]  # the hoist keeps its place among the rest
    assert all(c.meta["favoured"] == hints["scale_rows_kernel"][0].reason for c in coarse)
    assert "favoured" not in ordered[-1].meta
    # without hints: the same list, the same order
    assert [c.title for c in favour(propose_rules.propose(ctx), {})] == titles


def test_a_rule_fix_and_a_config_belong_to_the_families_they_move():
    fix = Candidate("rules", "num_warps for the tile (TL009)", "", kernel="k", meta={"codes": ["TL009"]})
    dot_cfg = Candidate("config", "config", "", kernel="k", meta={"config": {"BLOCK_M": 64, "num_stages": 4}})
    warps = Candidate("config", "config", "", kernel="k", meta={"configs": [{"num_warps": 2}, {"num_warps": 8}]})
    assert families_of(fix) == {WARPS}
    assert families_of(dot_cfg) == {TILE, BLOCK, STAGES}
    assert families_of(warps) == {WARPS}
    llm = Candidate("llm", "round 1", "", kernel="k")
    assert families_of(llm) == set()


def test_a_starved_dot_puts_deeper_pipelines_first_in_the_config_search():
    ctx = _ctx(MATMUL, "hot_matmul")
    plain = propose_config.propose(ctx)
    assert plain[0].meta["config"]["num_stages"] == 3  # the search's own first pick keeps the launch's stages
    dot = line_of(MATMUL, "acc = tl.dot(")
    ctx.hints = {"mm_kernel": hints_for(MATMUL, "mm_kernel", profile("mm_kernel", hot(dot, 0.6, {"short_sb": 400})))}
    hinted = propose_config.propose(ctx)
    assert hinted[0].meta["config"]["num_stages"] == 4
    assert all(cfg["num_stages"] == 4 for cfg in hinted[1].meta["configs"][:2])
    assert len(hinted) == len(plain)


def test_config_variants_moving_the_hinted_knob_the_hinted_way_come_first_in_their_own_order():
    space = [{"BLOCK": 1024, "num_warps": 4}, {"BLOCK": 4096, "num_warps": 8}, {"BLOCK": 512, "num_warps": 2},
             {"BLOCK": 2048, "num_warps": 4}]
    roles = {"BLOCK": "block", "num_warps": "warps"}
    current = {"BLOCK": 1024, "num_warps": 4}
    assert favour_configs(space, current, [BLOCK], roles) == [space[1], space[3], space[0], space[2]]
    assert favour_configs(space, current, [WARPS], roles) == [space[1], space[2], space[0], space[3]]
    assert favour_configs(space, current, [COARSEN], roles) == space  # no config moves it: the order stays


def test_the_report_note_says_what_the_lines_favour_or_that_they_favour_nothing():
    x_load = line_of(ROWS, "x = tl.load(")
    lines = profile("scale_rows_kernel", hot(x_load, 0.62, {"long_sb": 500}, ("global load",)))
    hints = hints_for(ROWS, "scale_rows_kernel", lines)
    assert note("scale_rows_kernel", hints, lines) == (
        f"hot lines of scale_rows_kernel put coarsening, block size candidates first: {hints[0].reason}")
    busy = profile("scale_rows_kernel", hot(x_load, 0.62, {"math": 500}))
    assert note("scale_rows_kernel", [], busy) == (
        f"hot lines of scale_rows_kernel read; none points at a proposer to try first (hottest: line {x_load}, "
        "62% · math pipe busy)")


def test_a_recorded_h100_softmax_profile_at_its_ceiling_favours_nothing_and_off_it_its_reduction():
    # the file the profile was taken of, three lines longer above its kernel: the samples move with it
    text = "# one\n# two\n# three\n" + (EXAMPLES / "softmax.py").read_text()
    hot_lines, notes = current(text, from_report(read_report(str(RECORDED / "softmax.json"))))
    assert notes == []
    sampled = hot_lines["softmax_kernel"]
    x_load, x_max, den = line_of(text, "x = tl.load("), line_of(text, "x_max = tl.max("), line_of(text, "den = tl.sum(")
    assert [s.line for s in sampled.lines.lines[:2]] == [x_max, den]  # moved with the kernel's def
    assert sampled.lines.lines[0].waits_on == [x_load]
    # as measured: at the copy ceiling, where waiting on memory is the floor
    assert sampled.roofline_pct == 101.3
    assert hints_for(text, "softmax_kernel", sampled.lines, sampled.tensor_pipe_pct, sampled.roofline_pct) == []
    assert note("softmax_kernel", [], sampled.lines, sampled.roofline_pct) == (
        f"hot lines of softmax_kernel read, no proposer put first: it runs at 101% of its roofline (hottest: line "
        f"{x_max}, 80% · waiting on the load on line {x_load})")
    # the same lines from a launch far from its ceiling: the reduction waiting on the row load
    hints = hints_for(text, "softmax_kernel", sampled.lines, roofline_pct=40.0)
    assert [(h.line, h.families) for h in hints] == [(x_max, (COARSEN, BLOCK))]
    assert hints[0].reason == (
        f"line {x_max} (`x_max = tl.max(x, axis=0)`, 80% of the samples) waits on global memory (the load on line "
        f"{x_load}): each program has too few loads in flight; coarsening and larger blocks first")