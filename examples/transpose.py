"""2-D transpose: out[j, i] = x[i, j] for an (M, N) tensor of any strides, on a 2-D grid of
BLOCK_M x BLOCK_N tiles.

Deliberate weaknesses (performance, not correctness):
- the store multiplies the tile's fastest axis (offs_n) by the runtime stride `stride_om`, so
  neighbouring lanes write M elements apart instead of into one contiguous segment: the writes
  are uncoalesced unless the compiler re-lays the tile out through shared memory;
- tile offsets `pid * BLOCK` times a stride stay in int32;
- 32x32 tiles and num_warps=4 are hard-coded at the launch.
"""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run kernels in Triton's interpreter

import triton
import triton.language as tl


@triton.jit
def transpose_kernel(
    x_ptr, out_ptr,
    M, N,
    stride_xm, stride_xn,
    stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn, mask=mask)
    # out has shape (N, M): element (m, n) of the tile goes to out[n, m].
    tl.store(out_ptr + offs_n[None, :] * stride_om + offs_m[:, None] * stride_on, tile, mask=mask)


def transpose(x: torch.Tensor) -> torch.Tensor:
    assert x.ndim == 2
    M, N = x.shape
    out = torch.empty((N, M), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N = 32, 32
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    transpose_kernel[grid](
        x, out, M, N,
        x.stride(0), x.stride(1),
        out.stride(0), out.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4,
    )
    return out


def tritonlens_cases():
    gen = torch.Generator().manual_seed(0)

    def rand(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=gen).to(dtype=dtype, device=DEVICE)

    if DEVICE == "cuda":
        yield transpose, (rand(8192, 8192),)  # performance shape
    else:
        yield transpose, (rand(256, 128),)
    yield transpose, (rand(100, 45, dtype=torch.float16),)  # ragged in both dims
    yield transpose, (rand(64, 96)[:, ::2],)  # strided input


def test_transpose():
    for fn, (x,) in tritonlens_cases():
        torch.testing.assert_close(fn(x), x.t().contiguous(), rtol=0, atol=0)


if __name__ == "__main__":
    test_transpose()
    print("OK")
