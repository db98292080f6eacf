"""Row-wise int8 dequantization: out[r, :] = q[r, :] * scale[r] in fp16, rows of 512.

Typical inefficiency: one program per row walking it in 128-wide chunks: one int8 byte a thread
per load, and 2^17 programs at the real size.
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
def dequant_rows_kernel(q_ptr, scale_ptr, out_ptr, stride_q, stride_o, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    scale = tl.load(scale_ptr + row)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        q = tl.load(q_ptr + row * stride_q + cols, mask=mask, other=0)
        tl.store(out_ptr + row * stride_o + cols, (q.to(tl.float32) * scale).to(tl.float16), mask=mask)


def dequantize_rows(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    M, N = q.shape
    out = torch.empty((M, N), dtype=torch.float16, device=q.device)
    dequant_rows_kernel[(M,)](q, scale, out, q.stride(0), out.stride(0), N, BLOCK=128, num_warps=4)
    return out


def reference(q, scale):
    return (q.float() * scale[:, None]).half()


def work(args, out) -> dict:
    q, scale = args
    return {"bytes": q.numel() + scale.numel() * 4 + out.numel() * 2, "flops": None}


def tritonlens_cases():
    gen = torch.Generator(device=DEVICE).manual_seed(0)

    def case(M, N):
        q = torch.randint(-127, 128, (M, N), generator=gen, device=DEVICE).to(torch.int8)
        return dequantize_rows, (q, torch.rand(M, generator=gen, device=DEVICE) * 0.05)

    yield case(1 << 17, 512) if DEVICE == "cuda" else case(32, 512)  # performance shape: 2^26 int8
    yield case(9, 300)  # ragged rows
