"""Hand variant of ../rowwise_dequant.py: ROWS rows per program as one [ROWS, N] tile, no column
loop: 16-byte int8 loads and 8 rows' scales in one program."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl


@triton.jit
def dequant_rows_kernel(q_ptr, scale_ptr, out_ptr, M, stride_q, stride_o, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    scale = tl.load(scale_ptr + rows, mask=row_ok, other=0.0)
    cols = tl.arange(0, BLOCK)
    mask = row_ok[:, None] & (cols[None, :] < N)
    q = tl.load(q_ptr + rows[:, None] * stride_q + cols[None, :], mask=mask, other=0)
    out = (q.to(tl.float32) * scale[:, None]).to(tl.float16)
    tl.store(out_ptr + rows[:, None] * stride_o + cols[None, :], out, mask=mask)


def dequantize_rows(q, scale, ELEMS=4096, ROWS=None, num_warps=4):
    M, N = q.shape
    BLOCK = triton.next_power_of_2(N)
    ROWS = ROWS or max(1, ELEMS // BLOCK)
    out = torch.empty((M, N), dtype=torch.float16, device=q.device)
    dequant_rows_kernel[(triton.cdiv(M, ROWS),)](q, scale, out, M, q.stride(0), out.stride(0), N, ROWS=ROWS,
                                                 BLOCK=BLOCK, num_warps=num_warps)
    return out


VARIANTS = {"8 rows a program, 4 warps": {}, "16 rows a program, 8 warps": {"ELEMS": 8192, "num_warps": 8},
            "1 row a program, whole row, 4 warps (config only)": {"ROWS": 1},
            "1 row a program, whole row, 1 warp (config only)": {"ROWS": 1, "num_warps": 1}}
STRUCTURAL = "more rows per program"
