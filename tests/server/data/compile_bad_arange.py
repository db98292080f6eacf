"""Test data: a tail path with tl.arange over 48 elements (not a power of two). The harness never
takes that path, so the interpreter runs; Triton's compiler refuses the whole kernel."""
import torch
import triton
import triton.language as tl


@triton.jit
def bad_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if n > 4096:
        offs = tl.arange(0, 48)
    tl.store(x_ptr + offs, x + 1, mask=offs < n)


def bump(x):
    bad_kernel[(1,)](x, x.numel(), BLOCK=64)
    return x


def tritonlens_cases():
    yield bump, (torch.zeros(64),)
