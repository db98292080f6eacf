"""A small library file as projects write them: autotune configs built by a helper function,
device helpers, constexpr locals, and names with leading and inner underscores."""

import torch
import triton
import triton.language as tl


def _norm_configs():
    return [triton.Config({"BLOCK_SIZE": bs}, num_warps=w) for bs in (1024, 2048) for w in (4, 8)]


@triton.jit
def _mean_square(x, n_cols, BLOCK_SIZE: tl.constexpr):
    return tl.sum(x * x, axis=0) / n_cols


@triton.autotune(configs=_norm_configs(), key=["n_cols"])
@triton.jit
def _rms_norm_forward_kernel(x_ptr, w_ptr, out_ptr, row_stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    HALF: tl.constexpr = BLOCK_SIZE // 2
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * row_stride + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(_mean_square(x, n_cols, BLOCK_SIZE) + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    y = x * rstd * w
    tl.store(out_ptr + row * row_stride + offs, y, mask=mask & (offs < HALF * 2))


@triton.jit
def _tile_product(a_ptrs, b_ptrs, acc, K, stride_k, BLOCK_K: tl.constexpr):
    for _ in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_k
    return acc


@triton.jit
def small_mm_kernel(a_ptr, b_ptr, c_ptr, K, stride_k,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_k + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * BLOCK_N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc = _tile_product(a_ptrs, b_ptrs, acc, K, stride_k, BLOCK_K)
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], acc)


def rms_norm(x, w, eps=1e-6):
    out = torch.empty_like(x)
    n_rows, n_cols = x.shape
    _rms_norm_forward_kernel[(n_rows,)](x, w, out, x.stride(0), n_cols, eps)
    return out


def small_mm(a, b):
    c = torch.empty((64, 64), device=a.device, dtype=torch.float32)
    small_mm_kernel[(1,)](a, b, c, a.shape[1], a.stride(0), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    return c
