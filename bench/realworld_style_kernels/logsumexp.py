"""Row-wise logsumexp over long fp32 rows (a vocabulary of 32768), the row walked in chunks.

Typical inefficiency: two passes over each row (the max, then the sum of exponentials), so every
row is read from memory twice: 2048 rows of 128 KB do not stay in a 50 MB L2 between the passes.
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
def logsumexp_kernel(x_ptr, out_ptr, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * stride
    running_max = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < N, other=float("-inf"))
        running_max = tl.maximum(running_max, x)
    row_max = tl.max(running_max, axis=0)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < N, other=float("-inf"))
        total += tl.exp(x - row_max)
    tl.store(out_ptr + row, row_max + tl.log(tl.sum(total, axis=0)))


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    out = torch.empty(M, dtype=torch.float32, device=x.device)
    logsumexp_kernel[(M,)](x, out, x.stride(0), N, BLOCK=1024, num_warps=4)
    return out


def reference(x):
    return torch.logsumexp(x.float(), dim=1)


def work(args, out) -> dict:
    (x,) = args
    return {"bytes": x.numel() * x.element_size() + out.numel() * 4, "flops": None}


def tritonlens_cases():
    gen = torch.Generator(device=DEVICE).manual_seed(0)

    def case(M, N):
        return logsumexp, (torch.randn(M, N, generator=gen, device=DEVICE) * 4,)

    yield case(2048, 32768) if DEVICE == "cuda" else case(8, 4096)  # performance shape: 2^26 fp32
    yield case(5, 1500)  # ragged: the last chunk partly filled
