"""Test data: a 128×128×128 fp16 matmul tile with 4 stages needs 262,144 B of shared memory."""
import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(tl.float16))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = a.new_empty((M, N))
    matmul_kernel[(triton.cdiv(M, 128),)](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
                                          BLOCK_M=128, BLOCK_N=128, BLOCK_K=128, num_warps=8, num_stages=4)
    return c


def tritonlens_cases():
    a = torch.randn(256, 256, dtype=torch.float16)
    b = torch.randn(256, 256, dtype=torch.float16)
    yield matmul, (a, b)
