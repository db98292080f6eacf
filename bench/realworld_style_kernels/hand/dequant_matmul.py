"""Hand variant of ../dequant_matmul.py: the column scale applied once to the accumulator after the
K loop (W tiles only converted to fp16 inside it), grouped program order, 128 x 128 x 64 tiles,
8 warps, 3 stages."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl


@triton.jit
def dequant_matmul_kernel(a_ptr, w_ptr, scale_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_wk, stride_wn,
                          stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                          GROUP_M: tl.constexpr, SCALE_AFTER: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    scale = tl.load(scale_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k + offs_k)[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & ((k + offs_k)[None, :] < K), other=0.0)
        w = tl.load(w_ptr + (k + offs_k)[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                    mask=((k + offs_k)[:, None] < K) & (offs_n[None, :] < N), other=0)
        if SCALE_AFTER:
            b = w.to(tl.float16)  # int8 values are exact in fp16
        else:
            b = (w.to(tl.float32) * scale[None, :]).to(tl.float16)
        acc += tl.dot(a, b)
    if SCALE_AFTER:
        acc = acc * scale[None, :]
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def dequant_matmul(a, w, scale, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3,
                   SCALE_AFTER=True):
    M, K = a.shape
    N = w.shape[1]
    c = torch.empty((M, N), dtype=torch.float16, device=a.device)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    dequant_matmul_kernel[grid](a, w, scale, c, M, N, K, a.stride(0), a.stride(1), w.stride(0), w.stride(1),
                                c.stride(0), c.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                                GROUP_M=GROUP_M, SCALE_AFTER=SCALE_AFTER, num_warps=num_warps, num_stages=num_stages)
    return c


VARIANTS = {"scale after the loop, 128x128x64, 8 warps, 3 stages": {},
            "scale after the loop, 128x256x64, 8 warps, 3 stages": {"BLOCK_N": 256},
            "scale in the loop, 128x128x64, 8 warps, 3 stages (config only)": {"SCALE_AFTER": False},
            "scale after the loop, original 64x64x32 tiles, 4 warps": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32,
                                                                       "GROUP_M": 1, "num_warps": 4}}
STRUCTURAL = "scale hoisted out of the K loop"
