"""Kernels written the way real projects write them, each hitting one gap of Triton's interpreter
that a GPU run does not have. `run(name)` launches one on CPU tensors and returns its output."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_by_eps(x_ptr, out_ptr, eps, n, BLOCK: tl.constexpr):
    """A float scalar used as a typed value (an RMS norm's eps.to(tl.float32))."""
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x + eps.to(tl.float32), mask=mask)


@triton.jit
def fill_like_scalar(out_ptr, value, n, BLOCK: tl.constexpr):
    """A float scalar's dtype read (tl.full(..., value.dtype)) and a cast of an int scalar."""
    offs = tl.arange(0, BLOCK)
    count = n.to(tl.int64)
    tl.store(out_ptr + offs, tl.full([BLOCK], 2, value.dtype) * value, mask=offs < count)


def run(name: str) -> torch.Tensor:
    x = torch.arange(8, dtype=torch.float32)
    out = torch.zeros(8)
    if name == "scale_by_eps":
        scale_by_eps[(1,)](x, out, 0.5, 8, BLOCK=8)
    elif name == "fill_like_scalar":
        fill_like_scalar[(1,)](out, 1.5, 8, BLOCK=8)
    else:
        raise ValueError(name)
    return out
