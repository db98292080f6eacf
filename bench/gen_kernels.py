"""Generated files of realistic kernels and wrappers, for latency benchmarks.

`generate(40)`: 2,000 lines of 40 kernels, each with a test function. `typing_file()`: the file
the editing benchmarks type into, ~2,100 lines of 64 kernels and their wrappers (no tests), so
that an edit that re-checks every kernel costs what it costs on a kernel-dense real file.
"""

from __future__ import annotations

HEADER = '''import torch
import triton
import triton.language as tl

DEVICE = "cuda"
'''

ELEMENTWISE = '''

@triton.jit
def scale_add_{i}(x_ptr, y_ptr, out_ptr, n_elements, alpha, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    z = x * alpha + y
    z = tl.where(z > 0, z, 0.0)
    z = z * 0.5 + 0.25
    tl.store(out_ptr + offsets, z, mask=mask)


def scale_add_{i}_launch(x, y, alpha):
    out = torch.empty_like(x)
    n_elements = out.numel()
    BLOCK_SIZE = {block}
    grid = (triton.cdiv(n_elements, BLOCK_SIZE),)
    scale_add_{i}[grid](x, y, out, n_elements, alpha, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return out
'''

MATMUL = '''

@triton.jit
def matmul_{i}(a_ptr, b_ptr, c_ptr, M, N, K,
               stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul_{i}_launch(a, b):
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, {bm}) * triton.cdiv(N, {bm}),)
    matmul_{i}[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                     c.stride(0), c.stride(1), BLOCK_M={bm}, BLOCK_N={bm}, BLOCK_K=32, num_warps=4, num_stages=3)
    return c
'''

SOFTMAX = '''

@triton.jit
def softmax_{i}(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    row_start = in_ptr + row * in_row_stride
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(row_start + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(out_ptr + row * out_row_stride + cols, y, mask=mask)


def softmax_{i}_launch(x):
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    y = torch.empty_like(x)
    softmax_{i}[(n_rows,)](y, x, x.stride(0), y.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
    return y
'''


LAYERNORM = '''

@triton.jit
def layernorm_{i}(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    """Layer-norm forward of one row: two passes over the columns, then normalize."""
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    # mean
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # variance
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # normalize and apply the affine transform
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


def layernorm_{i}_launch(x, weight, bias, eps=1e-5):
    """Normalize each row of a 2-D tensor."""
    y = torch.empty_like(x)
    M, N = x.shape
    mean = torch.empty((M,), dtype=torch.float32, device=x.device)
    rstd = torch.empty((M,), dtype=torch.float32, device=x.device)
    MAX_FUSED_SIZE = 65536 // x.element_size()
    BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(N))
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    layernorm_{i}[(M,)](x, y, weight, bias, mean, rstd, x.stride(0), N, eps,
                        BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return y, mean, rstd
'''


TEST = '''

def test_kernel_{i}():
    """Check kernel {i} against a torch reference on a ragged shape."""
    torch.manual_seed({i})
    size = 98432 + {i}
    x = torch.rand(size, device=DEVICE)
    y = torch.rand(size, device=DEVICE)
    expected = x * 2 + y
    got = torch.empty_like(x)
    got.copy_(expected)
    # A second, smaller shape catches a missing mask on the tail.
    x2 = x[: size // 3]
    y2 = y[: size // 3]
    expected2 = x2 * 2 + y2
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(expected2, x2 * 2 + y2)
    print("kernel {i}: ok")
'''


TYPING_KERNELS = 64


def generate(n_kernels: int = 40, tests: bool = True) -> str:
    parts = [HEADER]
    for i in range(n_kernels):
        kind = i % 4
        if kind == 3:
            parts.append(LAYERNORM.format(i=i))
        elif kind == 0:
            parts.append(ELEMENTWISE.format(i=i, block=[64, 128, 1024, 100][i % 4]))
        elif kind == 1:
            parts.append(MATMUL.format(i=i, bm=[32, 64, 128][i % 3]))
        else:
            parts.append(SOFTMAX.format(i=i))
        if tests:
            parts.append(TEST.format(i=i))
    return "".join(parts)


def typing_file() -> str:
    return generate(TYPING_KERNELS, tests=False)


if __name__ == "__main__":
    print(generate())
