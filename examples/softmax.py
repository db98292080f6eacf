"""Row-wise softmax over a 2-D tensor, one program per row (the whole row in one block).

Deliberate weakness (performance, not correctness): num_warps=16 is hard-coded at the launch
with no autotuning, whatever the row length. For short rows (a few hundred columns) 512 threads
share a handful of elements each and most of them sit idle; the kernel also holds the whole row
in registers, so very long rows spill.
"""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run kernels in Triton's interpreter

import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    row_ptr = in_ptr + row * in_row_stride
    # -inf keeps padded lanes out of the max and makes them contribute exp(-inf) = 0 to the sum.
    x = tl.load(row_ptr + col_offsets, mask=mask, other=-float("inf")).to(tl.float32)
    x_max = tl.max(x, axis=0)
    num = tl.exp(x - x_max)
    den = tl.sum(num, axis=0)
    y = num / den
    out_row_ptr = out_ptr + row * out_row_stride
    tl.store(out_row_ptr + col_offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    assert x.ndim == 2 and x.stride(1) == 1
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=16)
    return out


def tritonlens_cases():
    gen = torch.Generator().manual_seed(0)

    def rand(*shape):
        return (3 * torch.randn(*shape, generator=gen)).to(DEVICE)

    if DEVICE == "cuda":
        yield softmax, (rand(8192, 4096),)  # performance shape
    else:
        yield softmax, (rand(64, 256),)
    yield softmax, (rand(37, 781),)  # ragged: n_cols not a power of two
    yield softmax, (rand(5, 1),)  # single column


def test_softmax():
    for fn, (x,) in tritonlens_cases():
        torch.testing.assert_close(fn(x), torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    test_softmax()
    print("OK")
