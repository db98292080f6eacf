"""Program coarsening (rewrite/transform_coarsen.py): what it emits for each grid form, that the
verifier accepts it in the interpreter on ragged tails and refuses broken variants, that Triton
compiles it for a real GPU target, and that it refuses, with its reason, kernels whose programs
communicate and grids it does not own."""

from __future__ import annotations

import ast
import importlib.util

import pytest
from rewrite_support import FIXTURES
from tritonlens.rewrite import propose_rules
from tritonlens.rewrite.candidate import Candidate
from tritonlens.rewrite.coarsen_check import Refusal
from tritonlens.rewrite.context import ProposalContext
from tritonlens.rewrite.static_check import race_problems
from tritonlens.rewrite.transform_coarsen import (
    MAX_CANDIDATES,
    coarsen,
    coarsenings,
    plan_axes,
)
from tritonlens.rewrite.verify import Verifier

ROWS = (FIXTURES / "coarsen_rows.py").read_text()
DEQUANT = (FIXTURES / "coarsen_dequant_2d.py").read_text()
EMBED = (FIXTURES / "coarsen_embedding.py").read_text()
ROPE = (FIXTURES / "coarsen_rope.py").read_text()
VADD = (FIXTURES / "vadd.py").read_text()
SUM_ATOMIC = (FIXTURES / "sum_atomic.py").read_text()

HEADER = "import torch\nimport triton\nimport triton.language as tl\n\n\n"


def _fn(text: str, name: str) -> ast.FunctionDef:
    return next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)


def _params(fn: ast.FunctionDef) -> list[str]:
    return [a.arg if a.annotation is None else f"{a.arg}: {ast.unparse(a.annotation)}" for a in fn.args.args]


def _line_with(text: str, needle: str) -> str:
    return next(line.strip() for line in text.splitlines() if needle in line)


def test_one_dimensional_grid_moves_the_body_into_a_helper_and_loops_over_its_ids():
    cand = coarsen(ROWS, "scale_rows_kernel", axis=0, factor=4)
    assert isinstance(cand, Candidate), cand
    assert cand.title == "coarsen axis 0 by 4 (4 programs' work per program)"
    assert cand.meta == {"codes": [], "structural": True, "transform": "coarsen", "lowering": "loop", "axis": 0,
                         "factor": 4}
    assert "fixed cost" in cand.description and "identical" in cand.description
    assert _line_with(cand.source, "scale_rows_kernel[") == (
        "scale_rows_kernel[(triton.cdiv(M, 4),)](x, w, out, x.stride(0), N, M - 1, "
        "BLOCK=triton.next_power_of_2(N), n_programs_0=M, COARSEN_0=4)")
    original = ["x_ptr", "w_ptr", "out_ptr", "stride", "N", "n_valid", "BLOCK: tl.constexpr"]
    kernel, helper = _fn(cand.source, "scale_rows_kernel"), _fn(cand.source, "scale_rows_kernel_one")
    assert _params(kernel) == original + ["n_programs_0", "COARSEN_0: tl.constexpr"]
    assert _params(helper) == original + ["pid_0"]
    assert [ast.unparse(d) for d in helper.decorator_list] == ["triton.jit"]
    assert [ast.unparse(st) for st in kernel.body] == [
        ("for _i in tl.static_range(COARSEN_0):\n"
         "    _pid = tl.program_id(0) * COARSEN_0 + _i\n"
         "    if _pid < n_programs_0:\n"
         "        scale_rows_kernel_one(x_ptr, w_ptr, out_ptr, stride, N, n_valid, BLOCK, _pid)")]
    # the body is the original one, its program id now the parameter, its early return kept
    assert ast.unparse(helper.body[0]) == "row = pid_0"
    assert "return" in ast.unparse(helper.body[1]) and "program_id" not in ast.unparse(helper)
    assert ast.unparse(helper.body[2:]) == ast.unparse(_fn(ROWS, "scale_rows_kernel").body[2:])


def test_two_dimensional_rows_by_chunks_grid_is_coarsened_along_the_rows():
    cand = coarsen(DEQUANT, "dequant_kernel", axis=0, factor=4)
    assert isinstance(cand, Candidate), cand
    assert "    grid = (triton.cdiv(M, 4), triton.cdiv(N, BLOCK))\n" in cand.source
    assert _line_with(cand.source, "dequant_kernel[grid]").endswith("BLOCK=BLOCK, n_programs_0=M, COARSEN_0=4)")
    helper = ast.unparse(_fn(cand.source, "dequant_kernel_one"))
    assert "row = pid_0" in helper and "chunk = tl.program_id(1)" in helper  # the other axis is left alone
    along_chunks = coarsen(DEQUANT, "dequant_kernel", axis=1, factor=2)
    assert "grid = (M, triton.cdiv(triton.cdiv(N, BLOCK), 2))" in along_chunks.source
    assert "n_programs_1=triton.cdiv(N, BLOCK), COARSEN_1=2)" in along_chunks.source


GRID_LINE = "    grid = (triton.cdiv(n, BLOCK_SIZE),)\n"


@pytest.mark.parametrize("grid_line,launch,divided,n_prog", [
    (GRID_LINE, "add_kernel[grid]", "grid = (triton.cdiv(triton.cdiv(n, BLOCK_SIZE), 4),)",
     "n_programs_0=triton.cdiv(n, BLOCK_SIZE)"),
    ("", "add_kernel[(triton.cdiv(n, BLOCK_SIZE),)]", "add_kernel[(triton.cdiv(triton.cdiv(n, BLOCK_SIZE), 4),)]",
     "n_programs_0=triton.cdiv(n, BLOCK_SIZE)"),
    ("    grid = lambda meta: (triton.cdiv(n, meta['BLOCK_SIZE']),)\n", "add_kernel[grid]",
     "grid = lambda meta: (triton.cdiv(triton.cdiv(n, meta['BLOCK_SIZE']), 4),)", "n_programs_0=triton.cdiv(n, (BLOCK_SIZE))"),
    ("    grid = ((n + BLOCK_SIZE - 1) // BLOCK_SIZE,)\n", "add_kernel[grid]",
     "grid = (triton.cdiv((n + BLOCK_SIZE - 1) // BLOCK_SIZE, 4),)", "n_programs_0=(n + BLOCK_SIZE - 1) // BLOCK_SIZE"),
    ("    grid = (-(-n // BLOCK_SIZE),)\n", "add_kernel[grid]", "grid = (triton.cdiv(-(-n // BLOCK_SIZE), 4),)",
     "n_programs_0=-(-n // BLOCK_SIZE)"),
])
def test_every_grid_form_gets_its_axis_divided(grid_line, launch, divided, n_prog):
    text = VADD.replace(GRID_LINE, grid_line).replace("add_kernel[grid]", launch)
    assert text.count(launch) == 1 and (grid_line == "" or grid_line in text)
    cand = coarsen(text, "add_kernel", axis=0, factor=4)
    assert isinstance(cand, Candidate), cand
    assert divided in cand.source
    assert _line_with(cand.source, "add_kernel[").endswith(f"BLOCK_SIZE=BLOCK_SIZE, {n_prog}, COARSEN_0=4)")


def test_autotuned_kernel_keeps_its_decorators_and_gets_the_factor_at_the_launch():
    text = VADD.replace("@triton.jit\ndef add_kernel", (
        "@triton.autotune(configs=[triton.Config({}, num_warps=2), triton.Config({}, num_warps=4)], key=['n_elements'])\n"
        "@triton.jit\ndef add_kernel"))
    cand = coarsen(text, "add_kernel", axis=0, factor=2)
    assert isinstance(cand, Candidate), cand
    decorators = [ast.unparse(d).split("(")[0] for d in _fn(cand.source, "add_kernel").decorator_list]
    assert decorators == ["triton.autotune", "triton.jit"]
    assert [ast.unparse(d) for d in _fn(cand.source, "add_kernel_one").decorator_list] == ["triton.jit"]
    assert "n_programs_0=triton.cdiv(n, BLOCK_SIZE), COARSEN_0=2)" in cand.source


def test_fresh_names_do_not_clash_with_the_file():
    text = ROWS.replace("    row = tl.program_id(0)\n", "    row = tl.program_id(0)\n    pid_0 = row\n")
    text = text.replace("def scale_rows(", "def scale_rows_kernel_one():\n    pass\n\n\ndef scale_rows(")
    cand = coarsen(text, "scale_rows_kernel", axis=0, factor=2)
    assert isinstance(cand, Candidate), cand
    assert "def scale_rows_kernel_one2(" in cand.source and ", pid_02):" in cand.source


# -- refusals, each with its reason --------------------------------------------------------------
COUNTER = HEADER + '''@triton.jit
def count_kernel(x_ptr, counter_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(counter_ptr, tl.sum((x > 0).to(tl.int32), axis=0))


def count(x, counter):
    count_kernel[(triton.cdiv(x.numel(), 64),)](x, counter, x.numel(), BLOCK=64)
'''

GRID_STRIDE = HEADER + '''@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def copy(x, y):
    copy_kernel[(132,)](x, y, x.numel(), BLOCK=64)
'''

HELPER_ATOMIC = HEADER + '''@triton.jit
def _bump(ptr):
    tl.atomic_max(ptr, 1)


@triton.jit
def flag_kernel(x_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)
    _bump(flag_ptr)


def flag(x, f):
    flag_kernel[(triton.cdiv(x.numel(), 64),)](x, f, x.numel(), BLOCK=64)
'''

GRID_PARAM = VADD.replace("def add(x: torch.Tensor, y: torch.Tensor)", "def add(x: torch.Tensor, y: torch.Tensor, grid)") \
    .replace(GRID_LINE, "")
AUTOTUNED_BLOCK = VADD.replace("@triton.jit\ndef add_kernel", (
    "@triton.autotune(configs=[triton.Config({'BLOCK_SIZE': 64}), triton.Config({'BLOCK_SIZE': 128})], key=['n_elements'])\n"
    "@triton.jit\ndef add_kernel")).replace(GRID_LINE, "    grid = lambda meta: (triton.cdiv(n, meta['BLOCK_SIZE']),)\n") \
    .replace(", BLOCK_SIZE=BLOCK_SIZE)", ")")
SHARED_GRID = VADD.replace("    return out\n", "    add_kernel[grid](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE)\n    return out\n", 1)
SHARED_LAMBDA = SHARED_GRID.replace(GRID_LINE, "    grid = lambda meta: (triton.cdiv(n, meta['BLOCK_SIZE']),)\n")


@pytest.mark.parametrize("text,kernel,reason", [
    (COUNTER, "count_kernel", "atomics: tl.atomic_add"),
    (SUM_ATOMIC, "sum_kernel", "atomics: tl.atomic_add"),
    (HELPER_ATOMIC, "flag_kernel", "atomics: tl.atomic_max (in the helper _bump)"),
    (GRID_STRIDE, "copy_kernel", "tl.num_programs(0)"),
    (GRID_PARAM, "add_kernel", "the grid grid is passed in as a parameter of add"),
    (AUTOTUNED_BLOCK, "add_kernel", "reads meta['BLOCK_SIZE'], which the launch does not pass"),
    (SHARED_LAMBDA, "add_kernel", "used by more than this launch and is not a tuple it can index"),
])
def test_refuses_with_its_reason(text, kernel, reason):
    assert text not in (VADD, ROWS), "the variant was built"
    refusal = coarsen(text, kernel, axis=0, factor=4)
    assert isinstance(refusal, Refusal) and reason in refusal.reason, refusal
    assert [c for c in coarsenings(text, kernel) if c.meta.get("lowering") == "loop"] == []


def test_a_kernel_whose_programs_communicate_is_refused_on_every_axis():
    axes, why = plan_axes(COUNTER, "count_kernel")
    assert axes == [] and "atomic" in why[0].reason
    # the same kernel without its atomic is independent: the refusal is the atomic's, nothing else
    plain = COUNTER.replace("tl.atomic_add(counter_ptr, ", "tl.store(counter_ptr + pid, ")
    assert plan_axes(plain, "count_kernel")[0] == [0]


def test_the_rules_proposer_offers_a_few_coarsenings_per_kernel():
    cands = propose_rules.propose(ProposalContext("coarsen_dequant_2d.py", DEQUANT, device={"mode": "interpreter"}))
    coarse = [c for c in cands if c.meta.get("transform") == "coarsen"]
    assert 0 < len(coarse) <= MAX_CANDIDATES
    assert [(c.meta["axis"], c.meta["factor"]) for c in coarse][:3] == [(0, 2), (0, 4), (0, 8)]
    titles = [c.title for c in propose_rules.propose(ProposalContext("quant_rows_small.py",
              (FIXTURES / "quant_rows_small.py").read_text(), device={"mode": "interpreter"}))]
    assert "more rows per program" in titles and "coarsen axis 0 by 4 (4 programs' work per program)" in titles


# -- the verifier, in the interpreter ------------------------------------------------------------
def _verify(fixture: str, text: str, cands: list[Candidate]):
    with Verifier(str(FIXTURES / fixture), text, timeout=300) as verifier:
        return verifier.verify(cands, isolate=False)


@pytest.mark.slow
@pytest.mark.parametrize("fixture,kernel,text,axes", [
    ("coarsen_rows.py", "scale_rows_kernel", ROWS, [(0, 4), (0, 8)]),  # 11 rows, 3 rows: ragged tails
    ("coarsen_dequant_2d.py", "dequant_kernel", DEQUANT, [(0, 4), (1, 2)]),
    ("coarsen_embedding.py", "embed_kernel", EMBED, [(0, 4)]),
    ("coarsen_rope.py", "rope_kernel", ROPE, [(0, 2), (1, 4)]),
])
def test_verifier_accepts_coarsenings_and_refuses_a_broken_one(fixture, kernel, text, axes):
    cands = [coarsen(text, kernel, a, r) for a, r in axes]
    assert all(isinstance(c, Candidate) for c in cands), cands
    overlap = cands[0].source.replace(" * COARSEN_", " * 1 * 0 + 0 * COARSEN_")
    assert overlap != cands[0].source
    *good, bad = _verify(fixture, text, cands + [Candidate("mutant", "programs overlap and miss ids", overlap)])
    for v in good:
        assert v.accepted and v.mode == "interpreter" and v.max_rel_error == 0, (v.candidate.title, v.reason)
        assert v.shapes >= 2 and v.checks == v.seeds * v.shapes
    assert not bad.accepted and bad.reason.startswith(("wrong result", "fails", "unwritten")), bad.reason


@pytest.mark.slow
@pytest.mark.parametrize("form", ["lambda", "shared local"])
def test_verifier_accepts_the_lambda_and_shared_grid_coarsenings(form):
    text = {"lambda": VADD.replace(GRID_LINE, "    grid = lambda meta: (triton.cdiv(n, meta['BLOCK_SIZE']),)\n"),
            "shared local": SHARED_GRID}[form]
    assert text != VADD
    cand = coarsen(text, "add_kernel", 0, 8)  # 512 / 64 = 8 programs, 300 / 64 = 5: a tail, 3 / 64 = 1
    (verdict,) = _verify("vadd.py", text, [cand])
    assert verdict.accepted and verdict.max_rel_error == 0, verdict.reason


# -- a real compile for a GPU target (no GPU needed) ---------------------------------------------
@pytest.mark.slow
def test_triton_compiles_the_coarsened_kernel_with_an_early_return_for_sm90(tmp_path, monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    cand = coarsen(ROWS, "scale_rows_kernel", 0, 4)
    kernels = cand.source[cand.source.index("@triton.jit"):cand.source.index("def scale_rows(")]
    path = tmp_path / "coarsened_rows.py"
    path.write_text(HEADER + kernels)
    spec = importlib.util.spec_from_file_location("coarsened_rows", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    signature = {"x_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32", "stride": "i32", "N": "i32",
                 "n_valid": "i32", "BLOCK": "constexpr", "n_programs_0": "i32", "COARSEN_0": "constexpr"}
    compiled = triton.compile(ASTSource(module.scale_rows_kernel, signature, {(6,): 64, (8,): 4}),
                              target=GPUTarget("cuda", 90, 32))
    ptx = compiled.asm["ptx"]
    assert ".entry scale_rows_kernel" in ptx and ptx.count("ctaid.x") >= 1


def test_parameters_with_defaults_get_defaulted_new_parameters_and_the_helper_gets_them_all():
    text = ROWS.replace("n_valid, BLOCK: tl.constexpr):", "n_valid, BLOCK: tl.constexpr = 64):")
    assert text != ROWS
    cand = coarsen(text, "scale_rows_kernel", axis=0, factor=2)
    assert isinstance(cand, Candidate), cand
    assert ("def scale_rows_kernel(x_ptr, w_ptr, out_ptr, stride, N, n_valid, BLOCK: tl.constexpr = 64, "
            "n_programs_0=None, COARSEN_0: tl.constexpr = 1):") in cand.source
    assert ("def scale_rows_kernel_one(x_ptr, w_ptr, out_ptr, stride, N, n_valid, BLOCK: tl.constexpr, "
            "pid_0):") in cand.source


def test_a_kernel_also_called_as_a_device_function_is_refused():
    text = ROWS.replace("def scale_rows(", (
        "@triton.jit\ndef twice_kernel(x_ptr, w_ptr, out_ptr, stride, N, n_valid, BLOCK: tl.constexpr):\n"
        "    scale_rows_kernel(x_ptr, w_ptr, out_ptr, stride, N, n_valid, BLOCK)\n\n\ndef scale_rows("))
    refusal = coarsen(text, "scale_rows_kernel", axis=0, factor=2)
    assert isinstance(refusal, Refusal) and "called as a device function by twice_kernel" in refusal.reason


def test_the_race_screen_follows_the_program_id_into_the_helper():
    cand = coarsen(ROWS, "scale_rows_kernel", axis=0, factor=4)
    assert race_problems(ROWS, cand.source) == []
    every_program_row_0 = cand.source.replace("BLOCK, _pid)", "BLOCK, 0)")
    assert every_program_row_0 != cand.source
    problems = race_problems(ROWS, every_program_row_0)
    assert problems and all("in scale_rows_kernel_one every program stores" in p for p in problems), problems


THREE_AXES = HEADER + '''@triton.jit
def fill_kernel(out_ptr, s0, s1, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * s0 + tl.program_id(1) * s1 + tl.program_id(2) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 1.0)


def fill(out, a, b, c):
    fill_kernel[(a, b, c)](out, b * c * 32, c * 32, BLOCK=32)
'''


def test_the_search_stays_small_and_skips_axes_of_extent_one():
    cands = coarsenings(THREE_AXES, "fill_kernel")
    assert [(c.meta["axis"], c.meta["factor"]) for c in cands] == [(0, 2), (0, 4), (1, 2), (1, 4), (2, 2), (2, 4)]
    assert len(cands) <= MAX_CANDIDATES
    one_wide = THREE_AXES.replace("[(a, b, c)]", "[(a, 1, c)]")
    assert one_wide != THREE_AXES
    axes, why = plan_axes(one_wide, "fill_kernel")
    assert axes == [0, 2] and "extent 1" in why[1].reason


def test_a_grid_local_shared_by_two_launches_is_indexed_at_each_launch_and_left_as_written():
    cand = coarsen(SHARED_GRID, "add_kernel", axis=0, factor=4)
    assert isinstance(cand, Candidate), cand
    assert GRID_LINE in cand.source  # the other launch's grid is untouched
    assert cand.source.count("add_kernel[(triton.cdiv(grid[0], 4),)](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE, "
                             "n_programs_0=grid[0], COARSEN_0=4)") == 2


def test_the_config_search_tunes_a_coarsened_kernel_without_unrolling_its_factor():
    from tritonlens.rewrite.propose_config import analyse

    text = (FIXTURES / "coarsen_rows.py").read_text()
    kernel = next(n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)
                  and any("jit" in ast.unparse(d) for d in n.decorator_list) and not n.name.endswith("_one"))
    cands = [c for c in coarsenings(text, kernel) if c.meta.get("lowering") == "loop"]
    assert cands
    plan = analyse(cands[0].source, kernel)
    assert plan is not None and plan.space
    assert all(not k.startswith("COARSEN_") for cfg in plan.space for k in cfg)


LAMBDA_BLOCK = HEADER + '''@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def double(x):
    out = torch.empty_like(x)
    n = out.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    double_kernel[grid](x, out, n, BLOCK=64)
    return out


def tritonlens_cases():
    gen = torch.Generator().manual_seed(0)
    yield double, (torch.randn(1000, generator=gen),)
'''


def test_a_coarsened_kernels_program_count_moves_with_its_block_and_is_never_autotuned(tmp_path):
    # coarsening passes the original grid's count (n_programs_0=cdiv(n, 64)) beside a meta grid: a
    # config that moved BLOCK alone would leave programs uncomputed, and an autotune cannot reach it
    from tritonlens.rewrite.config_edits import NotAutotunable, with_autotune, with_literals
    from tritonlens.rewrite.propose_config import analyse

    coarse = coarsen(LAMBDA_BLOCK, "double_kernel", 0, 2)
    assert "n_programs_0=triton.cdiv(n, (64))" in coarse.source
    plan = analyse(coarse.source, "double_kernel")
    smaller = with_literals(coarse.source, plan, {"BLOCK": 32})
    assert "BLOCK=32" in smaller and "cdiv(n, (32))" in smaller
    with pytest.raises(NotAutotunable, match="also sizes the launch argument n_programs_0"):
        with_autotune(coarse.source, plan, plan.space[:2])
    path = tmp_path / "double.py"
    path.write_text(LAMBDA_BLOCK)
    with Verifier(str(path), LAMBDA_BLOCK, timeout=300) as verifier:
        [verdict] = verifier.verify([Candidate("config", "BLOCK=32 + coarsen", smaller)], isolate=False)
    assert verdict.evidence["correct"], verdict.reason
