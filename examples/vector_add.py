"""Element-wise vector add: out = x + y, one masked block per program.

Deliberate weakness (performance, not correctness): the wrapper launches with
BLOCK_SIZE = 64, so each program moves only 64 elements and the launch is dominated by
per-program overhead; a memory-bound element-wise kernel wants 1024+ elements per program.
"""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run kernels in Triton's interpreter

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    assert x.shape == y.shape and x.is_contiguous() and y.is_contiguous()
    out = torch.empty_like(x)
    n = out.numel()
    BLOCK_SIZE = 64
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE)
    return out


def tritonlens_cases():
    gen = torch.Generator().manual_seed(0)

    def rand(n):
        return torch.randn(n, generator=gen).to(DEVICE)

    n = 1 << 24 if DEVICE == "cuda" else 1 << 12
    yield add, (rand(n), rand(n))  # performance shape
    yield add, (rand(1000), rand(1000))  # ragged: not a multiple of BLOCK_SIZE
    yield add, (rand(3), rand(3))  # smaller than one block


def test_add():
    for fn, (x, y) in tritonlens_cases():
        torch.testing.assert_close(fn(x, y), x + y)


if __name__ == "__main__":
    test_add()
    print("OK")
