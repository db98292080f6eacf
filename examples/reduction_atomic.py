"""Sum of a 1-D fp32 tensor: each program reduces one block, then `tl.atomic_add`s its partial
sum into a single-element output.

Deliberate weakness (performance, not correctness): every program hits the same address, so the
atomics serialize at one L2 slice; with 2**24 elements and BLOCK_SIZE=1024 that is 16384 atomics
on one word. A two-pass reduction (partials, then one small reduce) avoids the contention. The
atomic order also makes the fp32 result non-deterministic in its last bits.
"""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run kernels in Triton's interpreter

import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    partial = tl.sum(x, axis=0)
    tl.atomic_add(out_ptr, partial)


def block_sum(x: torch.Tensor) -> torch.Tensor:
    assert x.ndim == 1 and x.is_contiguous() and x.dtype == torch.float32
    out = torch.zeros(1, device=x.device, dtype=torch.float32)  # atomics accumulate into it
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    sum_kernel[grid](x, out, n, BLOCK_SIZE=1024)
    return out


def tritonlens_cases():
    gen = torch.Generator().manual_seed(0)

    def rand(n):
        return torch.rand(n, generator=gen).sub_(0.25).to(DEVICE)

    n = 1 << 24 if DEVICE == "cuda" else 1 << 15
    yield block_sum, (rand(n),)  # performance shape
    yield block_sum, (rand(5000),)  # ragged: not a multiple of BLOCK_SIZE
    yield block_sum, (rand(7),)  # smaller than one block


def test_block_sum():
    for fn, (x,) in tritonlens_cases():
        ref = x.double().sum().float().reshape(1)
        # fp32 partials land in arbitrary order, each add rounding the running sum; over 16384
        # blocks that random walk stays well under 1e-5 of the summed magnitudes.
        atol = 1e-5 * x.abs().sum().item() + 1e-6
        torch.testing.assert_close(fn(x), ref, rtol=1e-5, atol=atol)


if __name__ == "__main__":
    test_block_sum()
    print("OK")
