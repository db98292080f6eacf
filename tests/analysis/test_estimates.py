"""Static estimates on realistic kernels: exact bytes, FLOPs, shared memory, programs."""

from __future__ import annotations

import pytest
from tritonlens.analysis import gpus
from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.estimates import (
    Estimate,
    estimate,
    estimates_for,
    largest_tile,
)

VECTOR_ADD = '''
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE)
    return out
'''

# The Triton tutorial's matmul (grouped ordering, fp16 in, fp32 accumulator, fp16 out), autotuned.
MATMUL = '''
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=5, num_warps=2),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul(a, b):
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]), )
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    return c
'''


def _kernel(text, name):
    result = Analyzer().analyze(text)
    return result.module.kernel(name), result.module


def test_vector_add_per_program_and_per_launch():
    k, module = _kernel(VECTOR_ADD, "add_kernel")
    (e,) = estimates_for(k, module)
    assert isinstance(e, Estimate)
    # two fp32 loads and one fp32 store of 1024 elements
    assert (e.bytes_loaded, e.bytes_stored, e.flops) == (8192, 4096, 0)
    assert e.shared_bytes == 0 and e.intensity == 0 and e.bound_hint == "memory"
    assert e.programs is None  # n = out.numel(): unknown statically
    assert any("4-byte" in n for n in e.notes)
    assert e.largest_tile == 1024 and e.num_warps == 4
    e2 = estimate(k, k.configs[0], module, scalars={"n_elements": 1 << 24})
    assert e2.programs == (1 << 24) // 1024
    assert e2.per_launch_bytes == 12 * (1 << 24)


def test_vector_add_real_dtypes():
    k, module = _kernel(VECTOR_ADD, "add_kernel")
    e = estimate(k, k.configs[0], module, elem_bytes={"x_ptr": 2, "y_ptr": 2, "out_ptr": 2})
    assert (e.bytes_loaded, e.bytes_stored) == (4096, 2048)
    assert not any("4-byte" in n for n in e.notes)


def test_matmul_tutorial_per_iteration_and_resolved():
    k, module = _kernel(MATMUL, "matmul_kernel")
    big, small = estimates_for(k, module)
    # K unknown: per-iteration figures, flagged
    assert big.per_iteration and any("trip count" in n for n in big.notes)
    # fp16 (the kernel converts to tl.float16): A 128x64 + B 64x256 per iteration
    assert big.bytes_loaded == (128 * 64 + 64 * 256) * 2 == 49152
    assert big.bytes_stored == 128 * 256 * 2
    assert big.flops == 2 * 128 * 256 * 64
    assert big.shared_bytes == 3 * (128 * 64 + 64 * 256) * 2 == 147456
    assert small.shared_bytes == 5 * (64 * 32 + 32 * 64) * 2 == 40960
    assert big.per_launch_bytes is None and big.per_launch_flops is None

    sizes = {"M": 4096, "N": 4096, "K": 4096}
    e = estimate(k, k.configs[0], module, scalars=sizes)
    assert not e.per_iteration
    assert e.bytes_loaded == 64 * 49152  # 4096 / 64 iterations
    assert e.flops == 2 * 128 * 256 * 4096
    assert e.programs == (4096 // 128) * (4096 // 256) == 512
    assert e.per_launch_flops == 2 * 4096 ** 3
    assert e.per_launch_bytes == 512 * (64 * 49152 + 65536)
    assert e.intensity == pytest.approx(e.flops / (e.bytes_loaded + e.bytes_stored))
    assert e.intensity == pytest.approx(83.59, abs=0.01)
    # below the H100 ridge (714 TFLOP/s / 2.97 TB/s ≈ 240 FLOP/byte) if every tile came from DRAM
    assert e.bound_hint == "memory" and e.ridge == pytest.approx(240.4, abs=0.1)


def test_access_breakdown_for_hover():
    k, module = _kernel(MATMUL, "matmul_kernel")
    e = estimate(k, k.configs[0], module, scalars={"K": 4096})
    kinds = [(a.kind, a.base, a.shape, a.elem_bytes, a.trips) for a in e.accesses]
    assert ("load", "a_ptr", (128, 64), 2, 64) in kinds
    assert ("load", "b_ptr", (64, 256), 2, 64) in kinds
    assert ("store", "c_ptr", (128, 256), 2, 1) in kinds
    dot = next(a for a in e.accesses if a.kind == "dot")
    assert dot.flops == 2 * 128 * 256 * 4096
    at = e.access_at(dot.range.start.line, dot.range.start.column + 3)
    assert at is dot


def test_unknown_block_stays_unknown():
    text = VECTOR_ADD.replace("BLOCK_SIZE = 1024", "BLOCK_SIZE = triton.next_power_of_2(n)")
    k, module = _kernel(text, "add_kernel")
    (e,) = estimates_for(k, module)
    assert e.bytes_loaded is None and e.intensity is None and e.bound_hint is None
    assert largest_tile(k, module, k.configs[0]) is None


def test_reduction_with_row_loop_and_scalar_stores():
    text = '''
import triton
import triton.language as tl

@triton.jit
def rms_kernel(x_ptr, y_ptr, rstd_ptr, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
    tl.store(rstd_ptr + row, tl.rsqrt(tl.sum(acc, axis=0) / N))

def run(x, y, r):
    rms_kernel[(x.shape[0],)](x, y, r, x.stride(0), 4096, BLOCK=1024)
'''
    k, module = _kernel(text, "rms_kernel")
    (e,) = estimates_for(k, module)
    # N=4096 passed as a literal: 4 iterations of a 1024-element fp32 load, one fp32 scalar store
    assert (e.bytes_loaded, e.bytes_stored) == (4 * 4096, 4)
    assert not e.per_iteration


def test_gpu_table():
    h100 = gpus.get("H100")
    assert h100.smem_per_block == 232_448 and h100.measured
    assert h100.ridge == pytest.approx(714e12 / 2.97e12)
    assert gpus.get("sm_80").name == "A100" and gpus.get("h200").bandwidth == 4.8e12
    with pytest.raises(KeyError):
        gpus.get("V100")


BLOCK_PTR_MATMUL = '''
import triton
import triton.language as tl


@triton.jit
def bp_matmul(a_ptr, b_ptr, c_ptr, M, N, K, HAS_BIAS: tl.constexpr, bias_ptr,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (0, 0), (BM, BK), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, 0), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_bp)
        b = tl.load(b_bp)
        acc = tl.dot(a, b, acc)
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    if HAS_BIAS:
        acc += tl.load(bias_ptr + tl.arange(0, BN))[None, :]
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(c_bp, acc.to(tl.bfloat16))


def run(a, b, c, bias):
    bp_matmul[(1,)](a, b, c, 256, 256, 512, False, bias, BM=64, BN=128, BK=32, num_stages=4)
'''


def test_block_pointers_are_sized_and_untaken_branches_not_counted():
    k, module = _kernel(BLOCK_PTR_MATMUL, "bp_matmul")
    (e,) = estimates_for(k, module, {"a_ptr": 2, "b_ptr": 2})
    # K=512 by BK=32: 16 iterations of a 64x32 and a 32x128 fp16 block
    loads = [(a.base, a.shape, a.elem_bytes, a.trips, a.bytes) for a in e.accesses if a.kind == "load"]
    assert loads == [("a_ptr", (64, 32), 2, 16, 16 * 64 * 32 * 2), ("b_ptr", (32, 128), 2, 16, 16 * 32 * 128 * 2)]
    assert e.bytes_loaded == 16 * (64 * 32 + 32 * 128) * 2 == 196608
    # the bias load is under HAS_BIAS=False: not counted, and said so
    assert any("branches this configuration does not take" in n for n in e.notes)
    # the stored value's dtype is the engine's: acc.to(tl.bfloat16)
    store = next(a for a in e.accesses if a.kind == "store")
    assert (store.base, store.shape, store.elem_bytes, store.bytes) == ("c_ptr", (64, 128), 2, 64 * 128 * 2)
    assert e.flops == 16 * 2 * 64 * 128 * 32
    assert e.largest_tile == 64 * 128
    assert e.shared_bytes == 4 * (64 * 32 + 32 * 128) * 2 == 49152
    tile = largest_tile(k, module, k.configs[0])
    assert (tile.elements, tile.complete, tile.from_dot) == (8192, True, False)


def test_taken_branch_is_counted():
    text = BLOCK_PTR_MATMUL.replace("512, False, bias", "512, True, bias")
    k, module = _kernel(text, "bp_matmul")
    (e,) = estimates_for(k, module, {"a_ptr": 2, "b_ptr": 2, "bias_ptr": 4})
    bias = next(a for a in e.accesses if a.base == "bias_ptr")
    assert (bias.shape, bias.elem_bytes, bias.bytes) == ((128,), 4, 512)
    assert e.bytes_loaded == 196608 + 512
    assert not any("branches this configuration does not take" in n for n in e.notes)


def test_shared_memory_uses_operand_dtypes_from_the_engine():
    # operands converted to fp32 in the loop: 4 bytes each, whatever the pointers hold
    text = BLOCK_PTR_MATMUL.replace("acc = tl.dot(a, b, acc)", "acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc)")
    k, module = _kernel(text, "bp_matmul")
    (e,) = estimates_for(k, module)
    assert e.shared_bytes == 4 * (64 * 32 + 32 * 128) * 4 == 98304
