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
    elif name == "float_exponent":
        x = torch.tensor([0.0, 1.0, 3.0, 0.25, -8.0, float("inf"), float("nan"), 1e-40])
        out = torch.zeros(8, dtype=torch.int32)
        float_exponent[(1,)](x, out, 8, BLOCK=8)
    elif name == "gelu_tanh":
        x = torch.linspace(-3, 3, 8)
        gelu_tanh[(1,)](x, out, 8, BLOCK=8)
        return (out - gelu_reference(x)).abs().max().reshape(1).round(decimals=5)
    else:
        raise ValueError(name)
    return out


from triton.language.extra import libdevice  # noqa: E402
from triton.language.extra.cuda.libdevice import rsqrt  # noqa: E402  # by name, from the vendor module


@triton.jit
def gelu_tanh(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """libdevice through the generic module, by name from the cuda one, and an int64 result."""
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = 0.5 * x * (1 + libdevice.tanh(0.7978845608 * (x + 0.044715 * libdevice.pow(x, 3.0))))
    y = y * rsqrt(x * 0 + 4.0) * 2 + libdevice.llrint(x * 0.0).to(tl.float32)
    tl.store(out_ptr + offs, y, mask=mask)


def gelu_reference(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x, approximate="tanh")


@triton.jit
def float_exponent(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """A minifloat cast's exponent: libdevice.ilogb, an int32 result compared with an int."""
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    e = libdevice.ilogb(tl.load(x_ptr + offs, mask=mask, other=1.0))
    tl.store(out_ptr + offs, tl.where(e < -200, -200, e), mask=mask)
