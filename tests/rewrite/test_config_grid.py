"""A wrapper whose grid repeats the block sizes as literals (`triton.cdiv(M, 64)` beside
`BLOCK_M=64`): the config search moves those literals with the block, leaves them alone (and the
blocks too) where it cannot tell whose size a literal is, and the result verifies in a real worker
under Triton's interpreter."""

from __future__ import annotations

import ast

from tritonlens.rewrite.config_edits import with_autotune, with_literals
from tritonlens.rewrite.propose_config import analyse

H100 = {"mode": "gpu", "name": "NVIDIA H100 80GB HBM3"}

MATMUL = '''import triton
import triton.language as tl


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    offs_m = (pid // num_pid_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = (pid % num_pid_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k + offs_k)[None, :], mask=offs_m[:, None] < M, other=0.0)
        b = tl.load(b_ptr + (k + offs_k)[:, None] * N + offs_n[None, :], mask=offs_n[None, :] < N, other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def mm(a, b, c):
    M, K = a.shape
    N = b.shape[1]
{grid}
'''

SCALE = '''import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)


def scale(x, out):
    n = x.numel()
{grid}
'''


def _grid_of(text: str, fn: str) -> str:
    """The source of the grid the wrapper launches with (its variable's value when it has one)."""
    wrapper = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == fn)
    launch = next(n for n in ast.walk(wrapper) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript))
    grid = launch.func.slice
    if isinstance(grid, ast.Name):
        grid = next(n.value for n in ast.walk(wrapper) if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == grid.id for t in n.targets))
    return ast.unparse(grid)


def _config(plan, **sizes) -> dict:
    return next(c for c in plan.space if all(c.get(k) == v for k, v in sizes.items()))


def test_both_divisors_of_a_product_grid_move_with_block_m_and_block_n():
    text = MATMUL.format(grid='''    grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64),)
    mm_kernel[grid](a, b, c, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4)''')
    plan = analyse(text, "mm_kernel", H100)
    cfg = _config(plan, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64)
    out = with_literals(text, plan, cfg)
    assert _grid_of(out, "mm") == "(triton.cdiv(M, 128) * triton.cdiv(N, 256),)"
    assert "BLOCK_M=128, BLOCK_N=256, BLOCK_K=64" in out
    tuned = with_autotune(text, plan, plan.space[:3])
    assert _grid_of(tuned, "mm") == "lambda META: (triton.cdiv(M, META['BLOCK_M']) * triton.cdiv(N, META['BLOCK_N']),)"


def test_an_inline_floor_division_grid_pairs_each_divisor_by_its_size_name():
    # N's divisor comes first and BLOCK_N differs from BLOCK_M: the names, not the order, decide
    # (a floored grid covers whole tiles: the blocks may only shrink to divisors, so they start large)
    text = MATMUL.format(grid='''    mm_kernel[(N // 128, M // 256)](a, b, c, M, N, K, BLOCK_M=256, BLOCK_N=128, BLOCK_K=32)''')
    plan = analyse(text, "mm_kernel", H100)
    out = with_literals(text, plan, _config(plan, BLOCK_M=128, BLOCK_N=64))
    assert _grid_of(out, "mm") == "(N // 64, M // 128)"


def test_a_one_d_block_moves_its_cdiv_and_a_rounded_up_division():
    text = SCALE.format(grid='''    scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)''')
    plan = analyse(text, "scale_kernel")
    out = with_literals(text, plan, _config(plan, BLOCK=4096))
    assert _grid_of(out, "scale") == "(triton.cdiv(n, 4096),)"
    for rounded, expect in (("(n + 1024 - 1) // 1024", "((n + 4096 - 1) // 4096,)"),
                            ("(n + 1023) // 1024", "((n + 4095) // 4096,)")):
        text = SCALE.format(grid=f'''    grid = ({rounded},)
    scale_kernel[grid](x, out, n, BLOCK=1024)''')
        plan = analyse(text, "scale_kernel")
        assert _grid_of(with_literals(text, plan, _config(plan, BLOCK=4096)), "scale") == expect
        tuned = with_autotune(text, plan, plan.space[:2])
        assert "META" in _grid_of(tuned, "scale") and "1024" not in _grid_of(tuned, "scale")


def test_a_lambda_grid_with_a_copied_literal_reads_the_block_from_its_argument_under_autotune():
    text = SCALE.format(grid='''    scale_kernel[lambda meta: (triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)''')
    plan = analyse(text, "scale_kernel")
    assert _grid_of(with_literals(text, plan, _config(plan, BLOCK=512)), "scale") == "lambda meta: (triton.cdiv(n, 512),)"
    tuned = with_autotune(text, plan, plan.space[:2])
    assert _grid_of(tuned, "scale") == "lambda meta: (triton.cdiv(n, meta['BLOCK']),)"


def test_equal_blocks_over_sizes_without_names_are_left_alone_grid_and_blocks():
    # rows and cols could be either tile's size: a guess could shrink the grid below the tiles
    text = MATMUL.format(grid='''    rows, cols = M, N
    grid = (triton.cdiv(rows, 64), triton.cdiv(cols, 64))
    mm_kernel[grid](a, b, c, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)''')
    plan = analyse(text, "mm_kernel", H100)
    assert plan.space, "BLOCK_K, warps and stages are still tuned"
    assert all("BLOCK_M" not in c and "BLOCK_N" not in c for c in plan.space)
    assert any("BLOCK_M" in n and "BLOCK_N" in n for n in plan.notes)
    for cfg in plan.space:
        out = with_literals(text, plan, cfg)
        assert _grid_of(out, "mm") == "(triton.cdiv(rows, 64), triton.cdiv(cols, 64))"
        assert "BLOCK_M=64, BLOCK_N=64" in out


def test_a_literal_that_is_no_knobs_value_is_not_touched():
    text = SCALE.format(grid='''    scale_kernel[(triton.cdiv(n, 1024), 4)](x, out, n, BLOCK=256)''')
    plan = analyse(text, "scale_kernel")
    out = with_literals(text, plan, _config(plan, BLOCK=1024))
    assert _grid_of(out, "scale") == "(triton.cdiv(n, 1024), 4)"


TILE_FILE = '''import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl


@triton.jit
def shift_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask)
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], x * 2.0 + 1.0, mask=mask)


def shift(x):
    M, N = x.shape
    out = torch.empty_like(x)
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
    shift_kernel[grid](x, out, M, N, BLOCK_M=128, BLOCK_N=128)
    return out


def tritonlens_cases():
    yield shift, (torch.randn(200, 150, device=DEVICE),)
'''


def test_a_smaller_tile_under_a_literal_grid_is_proposed_with_its_grid_and_verifies(tmp_path):
    """The tile-2-D search tries 64x64 first: a grid left at cdiv(M, 128) would cover a quarter
    of the output and the verifier would refuse it; moved with the blocks it is correct."""
    from tritonlens.rewrite.api import OptimizeOptions, optimize_file

    path = tmp_path / "shift.py"
    path.write_text(TILE_FILE, encoding="utf-8")
    report = optimize_file(str(path), OptimizeOptions(proposers=("config",), job_timeout_s=300, budget_s=0))
    literal = next(c for c in report.candidates if c.title.startswith("config "))
    assert "BLOCK_M=64" in literal.title and "BLOCK_N=64" in literal.title
    assert _grid_of(literal.source, "shift") == "(triton.cdiv(M, 64), triton.cdiv(N, 64))"
    assert literal.accepted, literal.reason
    tuned = next(c for c in report.candidates if c.title.startswith("autotune "))
    assert "META" in _grid_of(tuned.source, "shift")
    assert tuned.accepted, tuned.reason


def test_a_block_the_grid_floors_a_size_by_only_shrinks_to_a_divisor():
    # `D // BLOCK` covers whole tiles only (the wrapper asserts D % BLOCK == 0): a larger block
    # could launch zero programs on an axis or leave the tail uncomputed; a divisor still divides D
    text = SCALE.format(grid='''    assert n % 256 == 0
    scale_kernel[(n // BLOCK,)](x, out, n, BLOCK=BLOCK)''').replace("def scale(x, out):",
                                                                    "def scale(x, out):\n    BLOCK = 256")
    plan = analyse(text, "scale_kernel")
    assert plan.knobs["BLOCK"].whole_tiles
    blocks = {cfg["BLOCK"] for cfg in plan.space if "BLOCK" in cfg}
    assert blocks and all(b <= 256 and 256 % b == 0 for b in blocks), blocks
    rounded = SCALE.format(grid='''    scale_kernel[((n + 256 - 1) // 256,)](x, out, n, BLOCK=256)''')
    plan = analyse(rounded, "scale_kernel")
    assert not plan.knobs["BLOCK"].whole_tiles
    assert any(cfg.get("BLOCK", 0) > 256 for cfg in plan.space)
