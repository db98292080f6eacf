"""Layer-norm forward: y = (x - mean) / sqrt(var + eps) * w + b over the last dimension.

One program per row; the row is walked in BLOCK_SIZE chunks three times (mean, variance,
normalize), all math in fp32, and mean / rstd are saved for a backward pass.

Deliberate weakness (performance, not correctness): the row base `row * stride` is computed in
int32 (no int64 cast), which overflows once rows * stride passes 2**31 elements; and BLOCK_SIZE /
num_warps are fixed in the wrapper with no autotuning, so the row is re-read from memory three
times even when it would fit in registers in one pass.
"""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run kernels in Triton's interpreter

import triton
import triton.language as tl


@triton.jit
def layer_norm_fwd_kernel(
    X, Y, W, B, Mean, Rstd,
    stride,
    N,
    eps,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride

    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N

    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)

    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        b = tl.load(B + cols, mask=mask).to(tl.float32)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    assert x.stride(-1) == 1
    x2d = x.reshape(-1, x.shape[-1])
    M, N = x2d.shape
    y = torch.empty_like(x2d)
    mean = torch.empty(M, dtype=torch.float32, device=x.device)
    rstd = torch.empty(M, dtype=torch.float32, device=x.device)
    BLOCK_SIZE = 1024
    layer_norm_fwd_kernel[(M,)](
        x2d, y, weight, bias, mean, rstd, x2d.stride(0), N, eps, BLOCK_SIZE=BLOCK_SIZE, num_warps=8
    )
    return y.view_as(x)


def tritonlens_cases():
    gen = torch.Generator().manual_seed(0)

    def case(M, N, dtype):
        x = (torch.randn(M, N, generator=gen) * 2 + 0.5).to(dtype=dtype, device=DEVICE)
        w = torch.rand(N, generator=gen).add_(0.5).to(dtype=dtype, device=DEVICE)
        b = torch.randn(N, generator=gen).to(dtype=dtype, device=DEVICE)
        return layer_norm, (x, w, b)

    if DEVICE == "cuda":
        yield case(4096, 8192, torch.float16)  # performance shape
    else:
        yield case(32, 2048, torch.float32)
    yield case(7, 1500, torch.float32)  # ragged: N not a multiple of BLOCK_SIZE
    yield case(3, 100, torch.float32)  # N smaller than one block


def test_layer_norm():
    for fn, (x, w, b) in tritonlens_cases():
        ref = torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), w.float(), b.float(), 1e-5).to(x.dtype)
        tol = 1e-2 if x.dtype == torch.float16 else 1e-4
        torch.testing.assert_close(fn(x, w, b), ref, rtol=tol, atol=tol)


if __name__ == "__main__":
    test_layer_norm()
    print("OK")
