import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def _scale(x, FACTOR: tl.constexpr):
    return x * FACTOR


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8),
    ],
    key=["M", "N"],
)
@triton.jit
def tile_kernel(x_ptr, y_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs_m[:, None] * stride + offs_n[None, :], mask=mask, other=0.0)
    acc = _scale(x.to(tl.float32), 2)
    row = tl.sum(acc, axis=1)
    y = libdevice.exp(acc)
    tl.store(y_ptr + offs_m[:, None] * stride + offs_n[None, :], y, mask=mask)


def tile(x, y):
    M, N = x.shape
    tile_kernel[lambda m: (triton.cdiv(M, m["BLOCK_M"]),)](x, y, M, N, x.stride(0))
