"""Weight-only int8 matmul: C = A @ (W * scale) with A fp16 [M, K], W int8 [K, N] and one fp16
scale per output column, the way a first port of a quantized linear layer is written.

Typical inefficiency: 64 x 64 x 32 tiles in row-major program order, and the scale multiplied into
every W tile inside the K loop (K / BK times per tile) instead of once into the accumulator.
"""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl

BOUND = "compute"


@triton.jit
def dequant_matmul_kernel(a_ptr, w_ptr, scale_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_wk, stride_wn,
                          stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    scale = tl.load(scale_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k + offs_k)[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & ((k + offs_k)[None, :] < K), other=0.0)
        w = tl.load(w_ptr + (k + offs_k)[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                    mask=((k + offs_k)[:, None] < K) & (offs_n[None, :] < N), other=0)
        b = (w.to(tl.float32) * scale[None, :].to(tl.float32)).to(tl.float16)
        acc += tl.dot(a, b)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def dequant_matmul(a: torch.Tensor, w: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    N = w.shape[1]
    c = torch.empty((M, N), dtype=torch.float16, device=a.device)
    grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64),)
    dequant_matmul_kernel[grid](a, w, scale, c, M, N, K, a.stride(0), a.stride(1), w.stride(0), w.stride(1),
                                c.stride(0), c.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4)
    return c


def reference(a, w, scale):
    return (a.float() @ (w.float() * scale.float()[None, :])).half()


def work(args, out) -> dict:
    a, w, scale = args
    M, K = a.shape
    return {"bytes": a.numel() * 2 + w.numel() + scale.numel() * 2 + out.numel() * 2, "flops": 2 * M * K * w.shape[1]}


def tritonlens_cases():
    gen = torch.Generator(device=DEVICE).manual_seed(0)

    def case(M, N, K):
        a = torch.randn(M, K, generator=gen, device=DEVICE).half()
        w = torch.randint(-127, 128, (K, N), generator=gen, device=DEVICE).to(torch.int8)
        scale = (torch.rand(N, generator=gen, device=DEVICE) * 0.01 + 0.001).half()
        return dequant_matmul, (a, w, scale)

    yield case(4096, 4096, 4096) if DEVICE == "cuda" else case(64, 64, 128)  # performance shape
    yield case(50, 70, 96)  # ragged tiles
