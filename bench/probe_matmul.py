#!/usr/bin/env python3
"""What is left between the tuned tutorial matmul (fp16 4096^3, 128x256x64, GROUP_M=8, 8 warps)
and cuBLAS under the verifier's timer (profiling/worker/timing.py)? Variants of the example's
kernel that differ only in their masks, and ones that load through tensor descriptors (TMA), plain
or persistent (one program per SM, with and without tl.range's warp specialization),
timed in interleaved rounds beside torch.matmul (issue 5).

    python bench/probe_matmul.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "profiling", "worker"))
import timing  # noqa: E402


@triton.jit
def _grouped_tile(tile_id, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of output tile `tile_id` in grouped order: GROUP_M row-tiles share B in L2."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_in_group = GROUP_M * tl.cdiv(N, BLOCK_N)
    first_pid_m = (tile_id // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    return first_pid_m + ((tile_id % num_pid_in_group) % group_size_m), (tile_id % num_pid_in_group) // group_size_m


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
       MASK_MN: tl.constexpr, MASK_K: tl.constexpr):
    pid_m, pid_n = _grouped_tile(tl.program_id(axis=0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    if not MASK_MN:  # the tutorial's wrap-around: rows past M re-read valid rows, never stored
        offs_m = offs_m % M
        offs_n = offs_n % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        if MASK_MN:
            a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        elif MASK_K:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        else:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def mm_tma(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
           GROUP_M: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    pid_m, pid_n = _grouped_tile(tl.program_id(axis=0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc += tl.dot(a, b)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


@triton.jit
def mm_tma_persistent(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, FLATTEN: tl.constexpr,
                      WS: tl.constexpr):
    """One program per SM walking output tiles in grouped order; loads and the store through TMA."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    for tile_id in tl.range(tl.program_id(0), num_tiles, NUM_SMS, flatten=FLATTEN, warp_specialize=WS):
        pid_m, pid_n = _grouped_tile(tile_id, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
            b = b_desc.load([ki * BLOCK_K, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--rounds", type=int, default=5)
    opts = ap.parse_args()
    torch.manual_seed(0)
    M = N = K = 4096
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    ref = torch.matmul(a, b)
    flops = 2 * M * N * K

    def triton_variant(mask_mn, mask_k, bm=128, bn=256, bk=64, w=8, s=4):
        def run():
            c = torch.empty((M, N), device="cuda", dtype=torch.float16)
            grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
            mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                     BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, MASK_MN=mask_mn, MASK_K=mask_k,
                     num_warps=w, num_stages=s)
            return c
        return run

    def tma_variant(bm=128, bn=256, bk=64, w=8, s=4):
        def run():
            c = torch.empty((M, N), device="cuda", dtype=torch.float16)
            grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
            mm_tma[grid](a, b, c, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=w, num_stages=s)
            return c
        return run

    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def tma_persistent(bm=128, bn=256, bk=64, w=8, s=3, flatten=False, ws=False):
        def run():
            c = torch.empty((M, N), device="cuda", dtype=torch.float16)
            tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
            mm_tma_persistent[(min(sms, tiles),)](a, b, c, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                                                  NUM_SMS=sms, FLATTEN=flatten, WS=ws, num_warps=w, num_stages=s)
            return c
        return run

    def alloc(size, align, stream):
        return torch.empty(size, dtype=torch.int8, device="cuda")

    triton.set_allocator(alloc)
    variants = {
        "cuBLAS": lambda: torch.matmul(a, b),
        "masks M,N,K (example, tuned) s4": triton_variant(True, True),
        "masks M,N,K s3": triton_variant(True, True, s=3),
        "mask K only (wrap M,N) s4": triton_variant(False, True),
        "no masks s4": triton_variant(False, False),
        "no masks s3": triton_variant(False, False, s=3),
        "tma s4": tma_variant(),
        "tma s3": tma_variant(s=3),
        "tma persistent s3": tma_persistent(),
        "tma persistent s4": tma_persistent(s=4),
        "tma persistent flatten s3": tma_persistent(flatten=True),
        "tma persistent 128x128x64 s4": tma_persistent(bn=128, s=4),
        "tma persistent warp-specialized s3": tma_persistent(ws=True, flatten=True),
    }
    times: dict[str, list] = {}
    errors = {}
    for name, fn in list(variants.items()):
        try:
            got = fn()
            torch.cuda.synchronize()
            err = ((got.float() - ref.float()).norm() / ref.float().norm()).item()
            if not err < 1e-2:
                errors[name] = f"wrong result: relative error {err:.3g}"
                del variants[name]
        except Exception as exc:  # noqa: BLE001 - a variant that does not compile is a finding
            errors[name] = f"{type(exc).__name__}: {exc}"[:300]
            del variants[name]
    for r in range(opts.rounds):
        order = list(variants.items())
        if r % 2:
            order.reverse()
        for name, fn in order:
            times.setdefault(name, []).append(timing.bench(fn, warmup_ms=25, rep_ms=60))
    cublas = statistics.median(times["cuBLAS"])
    rows = []
    for name, ts in times.items():
        ms = statistics.median(ts)
        rows.append({"variant": name, "ms": ms, "tflops": flops / (ms * 1e-3) / 1e12, "pct_cublas": 100 * cublas / ms,
                     "rounds_ms": ts})
    report = {"gpu": torch.cuda.get_device_name(0), "triton": triton.__version__, "torch": torch.__version__,
              "timer": timing.METHOD, "rows": rows, "errors": errors}
    with open(os.path.join(opts.out, "probe_matmul.json"), "w") as fh:
        json.dump(report, fh, indent=2)
    print(f"# {report['gpu']}, triton {report['triton']}; fp16 4096^3; {opts.rounds} interleaved rounds")
    for r in sorted(rows, key=lambda r: r["ms"]):
        print(f"{r['variant']:36s} {r['ms'] * 1e3:8.1f} us {r['tflops']:6.0f} TFLOP/s {r['pct_cublas']:5.1f}% of cuBLAS "
              f"(rounds {min(r['rounds_ms']) * 1e3:.1f}-{max(r['rounds_ms']) * 1e3:.1f})")
    for name, e in errors.items():
        print(f"{name:36s} {e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
