"""Structural rewrites for row-wise kernels (rewrite/transform_coarsen_lift.py, rewrite/transform_fuse_passes.py):
what they emit, that the rules proposer offers them, that the verifier accepts them in the
interpreter and refuses broken variants of them, and that they stay silent where they would be wrong."""

from __future__ import annotations

import ast

import pytest
from rewrite_support import FIXTURES
from tritonlens.rewrite import propose_rules
from tritonlens.rewrite.candidate import Candidate
from tritonlens.rewrite.context import ProposalContext
from tritonlens.rewrite.transform_fuse_passes import online_max_sum
from tritonlens.rewrite.transform_coarsen_lift import rows_per_program
from tritonlens.rewrite.verify import Verifier

QUANT = (FIXTURES / "quant_rows_small.py").read_text()
LSE = (FIXTURES / "logsumexp_two_pass.py").read_text()


def _fn(text: str, name: str) -> ast.FunctionDef:
    return next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)


def test_rows_rewrite_lifts_the_row_to_a_column_of_rows():
    cand = rows_per_program(QUANT, "quant_kernel")
    assert cand is not None and cand.meta["structural"]
    kernel = _fn(cand.source, "quant_kernel")
    assert [a.arg for a in kernel.args.args][-2:] == ["n_rows", "ROWS"]
    assert "row = tl.minimum(tl.program_id(0) * ROWS + tl.arange(0, ROWS), n_rows - 1)[:, None]" in cand.source
    assert "tl.max(tl.abs(x), axis=-1, keep_dims=True)" in cand.source
    assert "rows_per_program = max(1, 4096 // (triton.next_power_of_2(N)))" in cand.source
    assert "grid = (triton.cdiv(M, rows_per_program),)" in cand.source
    assert "num_warps=4, n_rows=M, ROWS=rows_per_program)" in cand.source
    # the rest of the kernel is untouched: the broadcasting does the lifting
    assert "tl.store(scale_ptr + row, scale)" in cand.source


def test_rows_rewrite_lifts_accumulators_and_scans():
    cand = rows_per_program(LSE, "lse_kernel")
    assert cand is not None
    assert 'm = tl.full([ROWS, BLOCK], float("-inf"), dtype=tl.float32)' in cand.source
    assert "acc = tl.zeros([ROWS, BLOCK], dtype=tl.float32)" in cand.source
    assert "tl.sum(acc, axis=-1, keep_dims=True)" in cand.source


@pytest.mark.parametrize("fixture,kernel,why", [
    ("vadd.py", "add_kernel", "the program id only scales a block: a block size, config search's job"),
    ("matmul_small.py", None, "2-D tiles and tl.dot"),
    ("sum_atomic.py", "sum_kernel", "an atomic: a repeated last row would add twice"),
])
def test_rows_rewrite_stays_silent_where_it_does_not_apply(fixture, kernel, why):
    text = (FIXTURES / fixture).read_text()
    names = [kernel] if kernel else [f.name for f in ast.parse(text).body if isinstance(f, ast.FunctionDef)
                                     and any("jit" in ast.unparse(d) for d in f.decorator_list)]
    assert names, why
    for name in names:
        assert rows_per_program(text, name) is None, why


@pytest.mark.parametrize("old,new,why", [
    ("    row = tl.program_id(0)\n", "    row = tl.program_id(0)\n    if N > 64:\n        N = 64\n", "control flow"),
    ("tl.max(tl.abs(x), axis=0)", "tl.max(tl.abs(x))", "a reduction over every axis"),
    ("    row = tl.program_id(0)\n", "    row = tl.program_id(0)\n    col = tl.program_id(1)\n", "a second axis"),
    ("@triton.jit\ndef quant_kernel", ('@triton.autotune(configs=[triton.Config({})], key=["N"])\n@triton.jit\n'
                                      "def quant_kernel"), "autotuned"),
    ("    grid = (M,)\n", "    grid = lambda meta: (M,)\n", "a grid it does not read"),
])
def test_rows_rewrite_refuses_what_it_cannot_lift(old, new, why):
    assert QUANT.count(old) == 1, why
    assert rows_per_program(QUANT.replace(old, new), "quant_kernel") is None, why


def test_online_pass_merges_the_max_walk_into_the_sum_walk():
    cand = online_max_sum(LSE, "lse_kernel")
    assert cand is not None and cand.meta["structural"]
    kernel = _fn(cand.source, "lse_kernel")
    loops = [n for n in kernel.body if isinstance(n, ast.For)]
    assert len(loops) == 1
    body = [ast.unparse(st) for st in loops[0].body]
    assert body[-4:] == ["m_new = tl.maximum(m, x)", "shift = tl.where(m_new == float('-inf'), 0.0, m_new)",
                         "acc = acc * tl.exp(m - shift) + tl.exp(x - shift)", "m = m_new"]
    after = [ast.unparse(st) for st in kernel.body[kernel.body.index(loops[0]) + 1:]]
    assert after[:2] == ["row_max = tl.max(m, axis=0)", "acc = acc * tl.exp(m - row_max)"]
    before = [ast.unparse(st) for st in kernel.body[:kernel.body.index(loops[0])]]
    assert "acc = tl.zeros([BLOCK], dtype=tl.float32)" in before


@pytest.mark.parametrize("old,new,why", [
    ("        acc += tl.exp(x - row_max)", "        acc += tl.exp(x - 1.0)", "the sum is not relative to the max"),
    ("    acc = tl.zeros([BLOCK], dtype=tl.float32)\n",
     "    acc = tl.zeros([BLOCK], dtype=tl.float32)\n    tl.store(out_ptr + row, row_max)\n", "another statement between"),
    ("        acc += tl.exp(x - row_max)", "        acc += tl.exp(x - row_max) * 2", "a different sum"),
    (("    for off in range(0, N, BLOCK):\n        cols = off + tl.arange(0, BLOCK)\n        x = tl.load(base + cols, "
     "mask=cols < N, other=float(\"-inf\"))\n        acc"),
     ("    for off in range(0, N, BLOCK):\n        cols = off + tl.arange(0, BLOCK)\n        x = tl.load(base + cols, "
     "mask=cols < N, other=0.0)\n        acc"), "the second walk loads something else"),
    ('m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)', "m = tl.zeros([BLOCK], dtype=tl.float32)",
     "the max does not start at -inf"),
])
def test_online_pass_stays_silent_where_it_would_be_wrong(old, new, why):
    assert LSE.count(old) == 1, why
    assert online_max_sum(LSE.replace(old, new), "lse_kernel") is None, why
    assert online_max_sum(QUANT, "quant_kernel") is None  # one walk already


def test_rules_proposer_offers_both_rewrites():
    for text, path, title in ((QUANT, "quant_rows_small.py", "more rows per program"),
                              (LSE, "logsumexp_two_pass.py", "one online pass for the max and the sum of exponentials")):
        cands = propose_rules.propose(ProposalContext(path, text, device={"mode": "interpreter"}))
        assert title in [c.title for c in cands], path


def _verify(fixture: str, text: str, cands: list[Candidate]):
    with Verifier(str(FIXTURES / fixture), text, timeout=300) as verifier:
        return verifier.verify(cands, isolate=False)


def test_verifier_accepts_the_rows_rewrite_and_refuses_broken_ones():
    cand = rows_per_program(QUANT, "quant_kernel")
    broken = [
        ("rows reduced across each other", cand.source.replace("axis=-1, keep_dims=True", "axis=0, keep_dims=True")),
        ("each row's scale broadcast along the wrong axis", cand.source.replace(", keep_dims=True", "")),
        ("programs overlap and miss rows", cand.source.replace("tl.program_id(0) * ROWS + ", "tl.program_id(0) + ")),
    ]
    for what, src in broken:
        assert src != cand.source, what
    good, *bad = _verify("quant_rows_small.py", QUANT, [cand] + [Candidate("mutant", w, s) for w, s in broken])
    assert good.accepted and good.mode == "interpreter" and good.max_rel_error == 0, good.reason
    assert good.checks == good.seeds * good.shapes and good.shapes >= 2
    assert [v.candidate.title for v in bad if v.accepted] == []
    assert all(v.reason.startswith(("wrong result", "fails", "compile error")) for v in bad), [v.reason for v in bad]


def test_verifier_accepts_the_online_pass_and_refuses_broken_ones():
    cand = online_max_sum(LSE, "lse_kernel")
    broken = [
        ("lanes never brought to the row max", cand.source.replace("    acc = acc * tl.exp(m - row_max)", "    pass")),
        ("sum not rescaled when the max grows", cand.source.replace("acc * tl.exp(m - shift) + ", "acc + ")),
    ]
    for what, src in broken:
        assert src != cand.source, what
    good, *bad = _verify("logsumexp_two_pass.py", LSE, [cand] + [Candidate("mutant", w, s) for w, s in broken])
    assert good.accepted and good.max_rel_error < 1e-5, good.reason
    assert [v.candidate.title for v in bad if v.accepted] == []
    assert all(v.reason.startswith(("wrong result", "fails", "compile error")) for v in bad), [v.reason for v in bad]
