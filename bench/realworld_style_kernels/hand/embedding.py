"""Hand variant of ../embedding.py: ROWS tokens per program as one [ROWS, D] gather, so each thread
moves 16-byte vectors and there are 16x fewer programs."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl


@triton.jit
def embedding_kernel(ids_ptr, weight_ptr, out_ptr, n, stride_w, stride_o, D, ROWS: tl.constexpr,
                     BLOCK_D: tl.constexpr):
    toks = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    tok_ok = toks < n
    idx = tl.load(ids_ptr + toks, mask=tok_ok, other=0)
    cols = tl.arange(0, BLOCK_D)
    mask = tok_ok[:, None] & (cols[None, :] < D)
    rows = tl.load(weight_ptr + idx[:, None] * stride_w + cols[None, :], mask=mask)
    tl.store(out_ptr + toks[:, None] * stride_o + cols[None, :], rows, mask=mask)


def embedding(ids, weight, ROWS=16, num_warps=4):
    n = ids.numel()
    D = weight.shape[1]
    out = torch.empty((n, D), dtype=weight.dtype, device=weight.device)
    embedding_kernel[(triton.cdiv(n, ROWS),)](ids, weight, out, n, weight.stride(0), out.stride(0), D, ROWS=ROWS,
                                              BLOCK_D=triton.next_power_of_2(D), num_warps=num_warps)
    return out


VARIANTS = {"16 tokens a program, 4 warps": {}, "32 tokens a program, 8 warps": {"ROWS": 32, "num_warps": 8},
            "1 token a program, 1 warp (config only)": {"ROWS": 1, "num_warps": 1}}
STRUCTURAL = "more rows per program"
