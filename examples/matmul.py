"""Tutorial-style fp16 matmul: C[M, N] = A[M, K] @ B[K, N], fp32 accumulator, fp16 output.

Deliberate weaknesses (performance, not correctness):
- naive 32x32x32 tiles with num_warps=4, num_stages=1 hard-coded at the launch, no autotuning:
  tiles this small cannot feed the tensor cores, and one stage means no software pipelining;
- the 1-D program id is mapped row-major onto the tile grid with no grouped (L2) ordering, so
  consecutive programs sweep a whole row of C tiles and re-fetch all of B from DRAM.
"""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run kernels in Triton's interpreter

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c = acc.to(tl.float16)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0], "incompatible shapes"
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    matmul_kernel[grid](
        a, b, c,
        M, N, K,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
        num_warps=4, num_stages=1,
    )
    return c


def tritonlens_cases():
    gen = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=gen).to(dtype=torch.float16, device=DEVICE)

    if DEVICE == "cuda":
        yield matmul, (rand(4096, 4096), rand(4096, 4096))  # performance shape
    else:
        yield matmul, (rand(128, 128), rand(128, 128))
    yield matmul, (rand(100, 70), rand(70, 45))  # ragged in M, N and the K tail
    yield matmul, (rand(64, 96), rand(128, 96).t())  # B not contiguous


def test_matmul():
    for fn, (a, b) in tritonlens_cases():
        ref = (a.float() @ b.float()).half()
        torch.testing.assert_close(fn(a, b), ref, rtol=1e-2, atol=1e-2)


if __name__ == "__main__":
    test_matmul()
    print("OK")
