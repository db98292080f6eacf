"""Rotary position embedding (the rotate-half form) applied to fp16 queries [tokens, heads, dim]
with per-token fp32 cos/sin tables [tokens, dim / 2].

Typical inefficiency: one program per (token, head) pair: 2^19 programs of 128 elements each at
the real size, and every head of a token loads the token's cos and sin again.
"""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl

BOUND = "memory"


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, stride_xt, stride_xh, stride_ot, stride_oh, stride_ct,
                n_heads, half, BLOCK_HALF: tl.constexpr):
    pid = tl.program_id(0)
    t = pid // n_heads
    h = pid % n_heads
    offs = tl.arange(0, BLOCK_HALF)
    mask = offs < half
    x_row = x_ptr + t * stride_xt + h * stride_xh
    x1 = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_row + half + offs, mask=mask, other=0.0).to(tl.float32)
    c = tl.load(cos_ptr + t * stride_ct + offs, mask=mask, other=0.0)
    s = tl.load(sin_ptr + t * stride_ct + offs, mask=mask, other=0.0)
    o_row = out_ptr + t * stride_ot + h * stride_oh
    tl.store(o_row + offs, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(o_row + half + offs, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty), mask=mask)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    T, H, D = x.shape
    half = D // 2
    out = torch.empty_like(x)
    rope_kernel[(T * H,)](x, cos, sin, out, x.stride(0), x.stride(1), out.stride(0), out.stride(1), cos.stride(0),
                          H, half, BLOCK_HALF=triton.next_power_of_2(half), num_warps=4)
    return out


def reference(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:2 * half].float()
    c, s = cos[:, None, :half], sin[:, None, :half]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


def work(args, out) -> dict:
    x, cos, _sin = args
    return {"bytes": 2 * x.numel() * x.element_size() + 2 * cos.numel() * cos.element_size(), "flops": None}


def tritonlens_cases():
    gen = torch.Generator(device=DEVICE).manual_seed(0)

    def case(T, H, D):
        x = torch.randn(T, H, D, generator=gen, device=DEVICE).half()
        angle = torch.rand(T, D // 2, generator=gen, device=DEVICE) * 6.28
        return apply_rope, (x, torch.cos(angle), torch.sin(angle))

    yield case(16384, 32, 128) if DEVICE == "cuda" else case(16, 8, 64)  # performance shape: 2^26 fp16
    yield case(7, 3, 64)  # heads not a power of two
