"""Masked select (x[mask] as a flat tensor), written the way a project writes it first: a count
kernel per block, a prefix sum of the counts on the host side, then a scatter kernel that places
each kept element at its block's start plus its rank inside the block.

Typical inefficiency: 256-element blocks, so 2^18 programs per launch at the real size and a
prefix sum over 2^18 counts between the two launches.
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
def block_count_kernel(mask_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    keep = tl.load(mask_ptr + offs, mask=offs < n, other=0).to(tl.int32)
    tl.store(counts_ptr + pid, tl.sum(keep, axis=0))


@triton.jit
def block_scatter_kernel(x_ptr, mask_ptr, starts_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    keep = tl.load(mask_ptr + offs, mask=inside, other=0).to(tl.int32)
    rank = tl.cumsum(keep, axis=0) - 1
    start = tl.load(starts_ptr + pid)
    x = tl.load(x_ptr + offs, mask=inside)
    tl.store(out_ptr + start + rank, x, mask=inside & (keep != 0))


def masked_select(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    x = x.reshape(-1)
    mask = mask.reshape(-1)
    n = x.numel()
    BLOCK = 256
    blocks = triton.cdiv(n, BLOCK)
    counts = torch.empty(blocks, dtype=torch.int32, device=x.device)
    block_count_kernel[(blocks,)](mask, counts, n, BLOCK=BLOCK)
    ends = torch.cumsum(counts, 0, dtype=torch.int32)
    starts = ends - counts
    total = int(ends[-1]) if blocks else 0
    out = torch.empty(total, dtype=x.dtype, device=x.device)
    block_scatter_kernel[(blocks,)](x, mask, starts, out, n, BLOCK=BLOCK)
    return out


def reference(x, mask):
    return torch.masked_select(x.reshape(-1), mask.reshape(-1))


def work(args, out) -> dict:
    """The fewest bytes: x and mask read once, the kept elements written once."""
    x, mask = args
    return {"bytes": x.numel() * x.element_size() + mask.numel() + out.numel() * out.element_size(), "flops": None}


def tritonlens_cases():
    gen = torch.Generator(device=DEVICE).manual_seed(0)

    def case(n):
        x = torch.randn(n, generator=gen, device=DEVICE)
        mask = torch.rand(n, generator=gen, device=DEVICE) < 0.5
        return masked_select, (x, mask)

    yield case(1 << 26 if DEVICE == "cuda" else 4096)  # performance shape: 2^26 fp32
    yield case(3001)  # ragged: the last block partly filled
