"""Hand variant of ../rope.py: one program per token rotating all its heads as one
[heads, dim / 2] tile, the token's cos and sin loaded once and broadcast over the heads (BLOCK_H = 1
is the original's one program per head, for a config-only comparison)."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, stride_xt, stride_xh, stride_ot, stride_oh, stride_ct,
                n_heads, half, BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    t = tl.program_id(0)
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    offs = tl.arange(0, BLOCK_HALF)
    d_ok = offs < half
    mask = (heads < n_heads)[:, None] & d_ok[None, :]
    c = tl.load(cos_ptr + t * stride_ct + offs, mask=d_ok, other=0.0)[None, :]
    s = tl.load(sin_ptr + t * stride_ct + offs, mask=d_ok, other=0.0)[None, :]
    x_rows = x_ptr + t * stride_xt + heads[:, None] * stride_xh + offs[None, :]
    x1 = tl.load(x_rows, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_rows + half, mask=mask, other=0.0).to(tl.float32)
    o_rows = out_ptr + t * stride_ot + heads[:, None] * stride_oh + offs[None, :]
    tl.store(o_rows, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(o_rows + half, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty), mask=mask)


def apply_rope(x, cos, sin, num_warps=4, BLOCK_H=None):
    T, H, D = x.shape
    half = D // 2
    out = torch.empty_like(x)
    BLOCK_H = BLOCK_H or triton.next_power_of_2(H)
    rope_kernel[(T, triton.cdiv(H, BLOCK_H))](x, cos, sin, out, x.stride(0), x.stride(1), out.stride(0), out.stride(1),
                                              cos.stride(0), H, half, BLOCK_H=BLOCK_H,
                                              BLOCK_HALF=triton.next_power_of_2(half), num_warps=num_warps)
    return out


VARIANTS = {"a token a program, 4 warps": {}, "a token a program, 8 warps": {"num_warps": 8},
            "a head a program, 1 warp (config only)": {"BLOCK_H": 1, "num_warps": 1}}
STRUCTURAL = "more rows per program"
