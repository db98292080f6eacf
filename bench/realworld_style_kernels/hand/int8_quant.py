"""Hand variant of ../int8_quant.py: ROWS rows per program as one [ROWS, BLOCK] tile, so a program
moves 4096 elements and the row maxima are per-warp reductions along axis 1."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl


@triton.jit
def quantize_rows_kernel(x_ptr, q_ptr, scale_ptr, M, stride_x, stride_q, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    row_ok = rows < M
    mask = row_ok[:, None] & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    absmax = tl.max(tl.abs(x), axis=1)
    scale = tl.maximum(absmax, 1e-6) / 127.0
    y = x / scale[:, None]
    q = tl.where(y >= 0, y + 0.5, y - 0.5).to(tl.int8)
    tl.store(q_ptr + rows[:, None] * stride_q + cols[None, :], q, mask=mask)
    tl.store(scale_ptr + rows, scale, mask=row_ok)


def quantize_rows(x, ELEMS=4096, ROWS=None, num_warps=8):
    M, N = x.shape
    BLOCK = triton.next_power_of_2(N)
    ROWS = ROWS or max(1, ELEMS // BLOCK)
    q = torch.empty((M, N), dtype=torch.int8, device=x.device)
    scale = torch.empty(M, dtype=torch.float32, device=x.device)
    quantize_rows_kernel[(triton.cdiv(M, ROWS),)](x, q, scale, M, x.stride(0), q.stride(0), N, ROWS=ROWS, BLOCK=BLOCK,
                                                  num_warps=num_warps)
    return q, scale


VARIANTS = {"16 rows a program, 8 warps": {}, "16 rows a program, 4 warps": {"num_warps": 4},
            "1 row a program, 1 warp (config only)": {"ROWS": 1, "num_warps": 1},
            "1 row a program, 2 warps (config only)": {"ROWS": 1, "num_warps": 2}}
STRUCTURAL = "more rows per program"
