"""Config search and rule fixes as source transformations (no worker: what they emit)."""

from __future__ import annotations

import ast

from rewrite_support import FIXTURES
from tritonlens.rewrite import propose_config, propose_rules
from tritonlens.rewrite.context import ProposalContext


def _ctx(name, device=None):
    return ProposalContext(name, (FIXTURES / name).read_text(), device=device or {"mode": "interpreter"})


def test_config_search_reads_structure_and_respects_shared_memory():
    plan = propose_config.analyse((FIXTURES / "matmul_small.py").read_text(), "matmul_kernel",
                                  {"name": "NVIDIA H100 80GB HBM3", "mode": "gpu"})
    assert plan.kind == "dot" and plan.size_params == ["M", "N", "K"]
    for cfg in plan.space:
        smem = cfg["num_stages"] * (cfg["BLOCK_M"] * cfg["BLOCK_K"] + cfg["BLOCK_K"] * cfg["BLOCK_N"]) * 2
        assert smem <= 227 * 1024
        assert all(v & (v - 1) == 0 for k, v in cfg.items() if k != "num_stages")
    small = propose_config.analyse((FIXTURES / "matmul_small.py").read_text(), "matmul_kernel",
                                   {"name": "some GPU", "mode": "gpu"})  # unknown GPU: a 99 KB budget
    assert len(small.space) < len(plan.space)
    soft = propose_config.analyse((FIXTURES / "softmax_rows.py").read_text(), "softmax_kernel")
    assert soft.kind == "warps_only" and any("BLOCK_SIZE" in n for n in soft.notes)
    assert all(set(c) == {"num_warps"} for c in soft.space)


def test_an_attention_loop_tunes_both_tiles_with_pipeline_stages():
    # a dot whose reduction width is the head's (fixed by the data): the query and key tiles are the
    # knobs, and the key loop is pipelined, so num_stages is searched with them
    text = (FIXTURES / "attention_small.py").read_text()
    plan = propose_config.analyse(text, "attn_fwd")
    assert list(plan.knobs)[:2] == ["BLOCK_M", "BLOCK_N"]
    assert plan.unmovable == ["HEAD_DIM: unpacked from a value the wrapper computes"]
    assert plan.space[0] == {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3}
    assert {c.get("num_stages") for c in plan.space} == {2, 3}
    edited = propose_config.with_literals(text, plan, plan.space[0])
    assert "BLOCK_M = 128\n    BLOCK_N = 64\n" in edited
    assert "BLOCK_N=BLOCK_N, num_warps=8, num_stages=3)" in edited


def test_config_emits_literals_and_an_autotune_decorator_with_a_meta_grid():
    cands = {c.title: c for c in propose_config.propose(_ctx("vadd.py"))}
    literal = next(c for t, c in cands.items() if t.startswith("config "))
    assert "BLOCK_SIZE = 1024" in literal.source and "num_warps=4" in literal.source
    auto = cands["autotune 4 configs"]
    ast.parse(auto.source)
    assert "@triton.autotune(" in auto.source and 'key=["n_elements"]' in auto.source
    assert 'grid = lambda META: (triton.cdiv(n, META["BLOCK_SIZE"]),)' in auto.source
    assert "add_kernel[grid](x, y, out, n)" in auto.source  # the tuned keyword left the launch


def test_grouped_ordering_rewrite_for_tl010():
    (cand,) = [c for c in propose_rules.propose(_ctx("matmul_small.py")) if "TL010" in c.title]
    src = cand.source
    assert "GROUP_M: tl.constexpr" in src and "GROUP_M=8" in src
    assert "group_size_m = min(num_pid_m - first_pid_m, GROUP_M)" in src
    assert "pid_m = pid // num_pid_n" not in src


def test_hoisting_a_loop_invariant_load_for_tl011():
    text = (FIXTURES / "layernorm_small.py").read_text().replace(
        "        b = tl.load(B + cols, mask=mask).to(tl.float32)\n",
        "        b = tl.load(B + cols, mask=mask).to(tl.float32)\n        scale = tl.load(W)\n")
    text = text.replace("y = (x - mean) * rstd * w + b", "y = (x - mean) * rstd * w * scale + b")
    cand = propose_rules.hoist_invariant_loads(text, "layer_norm_fwd_kernel")
    assert cand is not None and "scale" in cand.title
    lines = cand.source.splitlines()
    hoisted = lines.index("    scale = tl.load(W)")
    assert lines[hoisted + 1].lstrip().startswith("for off in range(0, N, BLOCK_SIZE)")
    # loads that depend on the loop variable stay where they are
    assert "        w = tl.load(W + cols, mask=mask).to(tl.float32)" in lines


def test_int64_program_ids_for_tl006():
    cand = propose_rules.int64_program_ids((FIXTURES / "layernorm_small.py").read_text(), "layer_norm_fwd_kernel")
    assert "row = tl.program_id(0).to(tl.int64)" in cand.source


def test_optimize_times_speed_fixes_only_never_correctness_fixes():
    from tritonlens.analysis.engine import Analyzer

    def context(path, text):
        return ProposalContext(str(path), text, analysis=Analyzer().analyze(text, str(path)))

    path = FIXTURES.parents[1] / "fixtures" / "rules" / "TL006" / "positive_row_offsets.py"
    ctx = context(path, path.read_text())
    assert any(f.code == "TL006" and f.fix is not None for f in ctx.findings()), "the fixture has a TL006 fix"
    titles = [c.title for c in propose_rules.propose(ctx)]
    assert not [t for t in titles if "TL006" in t or "int64" in t], titles
    small = (FIXTURES / "vadd.py").read_text().replace("BLOCK_SIZE = 64", "BLOCK_SIZE = 4")
    ctx = context(FIXTURES / "vadd.py", small)
    assert any(c.title.endswith("(TL015)") for c in propose_rules.propose(ctx))
