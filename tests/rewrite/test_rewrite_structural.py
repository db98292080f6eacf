"""Structural rewrites (rewrite/transform_persistent.py, rewrite/transform_row_in_block.py): what they emit, that the verifier accepts
them in the interpreter, that broken variants of them are refused, and that they stay silent on
kernels where they would be wrong."""

from __future__ import annotations

import ast

import pytest
from rewrite_support import FIXTURES
from tritonlens.rewrite import propose_rules
from tritonlens.rewrite.candidate import Candidate
from tritonlens.rewrite.context import ProposalContext
from tritonlens.rewrite.transform_persistent import persistent_atomic_reduction
from tritonlens.rewrite.transform_row_in_block import row_in_one_block
from tritonlens.rewrite.verify import Verifier

SUM = (FIXTURES / "sum_atomic.py").read_text()
LAYERNORM = (FIXTURES / "layernorm_small.py").read_text()


def _signature(text: str, name: str) -> str:
    fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.dump(fn.args)


def test_rules_proposer_offers_a_persistent_grid_for_a_one_address_atomic():
    cands = propose_rules.propose(ProposalContext("sum_atomic.py", SUM, device={"mode": "interpreter"}))
    (cand,) = [c for c in cands if "TL012" in c.title]
    src = cand.source
    assert cand.meta["structural"] and cand.kernel == "sum_kernel"
    kernel = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "sum_kernel")
    atomics = [n for n in ast.walk(kernel) if isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.atomic_add"]
    assert len(atomics) == 1 and ast.unparse(atomics[0]) == "tl.atomic_add(out_ptr, acc)"
    loop = next(n for n in kernel.body if isinstance(n, ast.For))
    assert ast.unparse(loop.iter) == ("range(tl.program_id(0), tl.cdiv(n_elements, BLOCK_SIZE), "
                                      "tl.num_programs(0))")
    assert atomics[0] not in list(ast.walk(loop))  # the one atomic sits after the loop
    assert 'grid = lambda meta: (min(triton.cdiv(n, meta["BLOCK_SIZE"]), programs),)' in src
    assert "multi_processor_count if out.is_cuda else" in src
    for name in ("sum_kernel", "block_sum"):  # kernel and wrapper keep their signatures
        assert _signature(src, name) == _signature(SUM, name)
    assert "sum_kernel[grid](x, out, n, BLOCK_SIZE=256)" in src  # the launch itself is untouched


def test_persistent_grid_translates_a_tuple_grid_into_the_kernel():
    text = SUM.replace('    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)\n'
                       '    sum_kernel[grid](x, out, n, BLOCK_SIZE=256)',
                       "    BLOCK = 256\n    sum_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK_SIZE=BLOCK)")
    cand = persistent_atomic_reduction(text, "sum_kernel")
    assert cand is not None
    assert "tl.cdiv(n_elements, BLOCK_SIZE)" in cand.source
    assert "sum_kernel[min(triton.cdiv(n, BLOCK), programs),]" in cand.source or \
        "sum_kernel[(min(triton.cdiv(n, BLOCK), programs),)]" in cand.source


@pytest.mark.parametrize("old,new,why", [
    ("tl.atomic_add(out_ptr, partial)", "tl.atomic_add(out_ptr + pid, partial)", "address depends on the program"),
    ("tl.atomic_add(out_ptr, partial)", "tl.atomic_max(out_ptr, partial)", "not an add"),
    ("tl.atomic_add(out_ptr, partial)", "tl.atomic_add(out_ptr, partial, mask=pid < 3)", "masked atomic"),
    ("    tl.atomic_add(out_ptr, partial)",
     "    tl.store(x_ptr + offsets, x * 2, mask=mask)\n    tl.atomic_add(out_ptr, partial)", "another store"),
    ("    partial = tl.sum(x, axis=0)", "    partial = tl.sum(x, axis=0)\n    q = tl.program_id(1)",
     "a second grid axis"),
    ("tl.atomic_add(out_ptr, partial)", "tl.atomic_add(out_ptr, x)", "adds a block, not a partial"),
    ('(triton.cdiv(n, meta["BLOCK_SIZE"]),)', "(len(x) // 256 + 1,)", "grid not in kernel terms"),
])
def test_persistent_grid_stays_silent_where_it_would_be_wrong(old, new, why):
    assert SUM.count(old) == 1, why
    assert persistent_atomic_reduction(SUM.replace(old, new), "sum_kernel") is None, why


def test_row_rewrite_adds_a_one_block_twin_and_keeps_the_chunked_kernel():
    cand = row_in_one_block(LAYERNORM, "layer_norm_fwd_kernel")
    assert cand is not None and cand.meta["structural"]
    tree = ast.parse(cand.source)
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert "layer_norm_fwd_kernel" in names and "layer_norm_fwd_kernel_one_block" in names
    twin = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "layer_norm_fwd_kernel_one_block")
    assert not [n for n in ast.walk(twin) if isinstance(n, ast.For)]
    assert ast.unparse(next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "layer_norm_fwd_kernel")) \
        == ast.unparse(next(n for n in ast.parse(LAYERNORM).body if isinstance(n, ast.FunctionDef) and n.name == "layer_norm_fwd_kernel"))
    assert "if 0 < N <= 8192:" in cand.source and "BLOCK_SIZE=triton.next_power_of_2(N)" in cand.source


@pytest.mark.parametrize("edit,why", [
    (lambda t: t.replace("@triton.jit\ndef layer_norm_fwd_kernel",
                         '@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 64})], key=["N"])\n'
                         "@triton.jit\ndef layer_norm_fwd_kernel"), "autotuned BLOCK"),
    (lambda t: t.replace("for off in range(0, N, BLOCK_SIZE):", "for off in range(0, N, 2 * BLOCK_SIZE):", 1),
     "a loop of another stride"),
    (lambda t: t.replace("for off in range(0, N, BLOCK_SIZE):", "for off in range(BLOCK_SIZE, N, BLOCK_SIZE):", 1),
     "a loop that does not start at 0"),
])
def test_row_rewrite_stays_silent_where_it_would_be_wrong(edit, why):
    text = edit(LAYERNORM)
    assert text != LAYERNORM, why
    assert row_in_one_block(text, "layer_norm_fwd_kernel") is None, why
    assert row_in_one_block((FIXTURES / "vadd.py").read_text(), "add_kernel") is None  # no row loop at all


def test_verifier_accepts_the_structural_rewrites_and_refuses_broken_ones():
    cand = persistent_atomic_reduction(SUM, "sum_kernel")
    broken = [
        ("every program walks every block", cand.source.replace("tl.num_programs(0))", "1)")),
        ("loop stops one block short", cand.source.replace("tl.cdiv(n_elements, BLOCK_SIZE), tl.num_programs",
                                                           "n_elements // BLOCK_SIZE, tl.num_programs")),
        ("accumulator reset each block", cand.source.replace("        acc += partial.to(", "        acc = partial.to(")),
    ]
    for what, src in broken:
        assert src != cand.source, what
    cands = [cand] + [Candidate("mutant", what, src) for what, src in broken]
    with Verifier(str(FIXTURES / "sum_atomic.py"), SUM, timeout=300) as verifier:
        verdicts = verifier.verify(cands, isolate=False)
    good, *bad = verdicts
    assert good.accepted and good.speedup is None and good.mode == "interpreter", good.reason
    assert good.seeds == 3 and good.checks == good.seeds * good.shapes and good.shapes >= 3
    assert [v.candidate.title for v in bad if v.accepted] == []
    assert all(v.reason.startswith(("wrong result", "fails")) for v in bad), [v.reason for v in bad]

    row = row_in_one_block(LAYERNORM, "layer_norm_fwd_kernel")
    with Verifier(str(FIXTURES / "layernorm_small.py"), LAYERNORM, timeout=300) as verifier:
        (v,) = verifier.verify([row], isolate=False)
    assert v.accepted and v.max_rel_error < 1e-5, v.reason
