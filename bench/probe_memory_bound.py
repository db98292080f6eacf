#!/usr/bin/env python3
"""Hand-written variants of two memory-bound examples, timed on a GPU, to learn which rewrite
reaches >= 90% of copy bandwidth before teaching the optimizer to find it (issue 5).

    python bench/probe_memory_bound.py [--out DIR]

- reduction_atomic (sum of 2**24 fp32, one atomic per program): larger blocks; a persistent grid
  whose programs loop over blocks with a scalar (or vector) fp32 accumulator and one atomic each;
  a two-stage reduction (partials, then one small kernel).
- layernorm (4096 x 8192 fp16): the original three passes at several BLOCK/num_warps; a single
  pass with the row held in registers; eviction hints.
Every variant is checked against torch before it is timed. Times: do_bench median (L2 flushed).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile

import torch
import triton
import triton.language as tl
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "profiling", "worker"))
import timing  # noqa: E402


# -- reduction ----------------------------------------------------------------------------------
@triton.jit
def sum_orig(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    partial = tl.sum(x, axis=0)
    tl.atomic_add(out_ptr, partial)


@triton.jit
def sum_persist_scalar(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    acc = 0.0
    for pid in range(tl.program_id(0), tl.cdiv(n_elements, BLOCK_SIZE), tl.num_programs(0)):
        offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        partial = tl.sum(x, axis=0)
        acc += partial
    tl.atomic_add(out_ptr, acc)


@triton.jit
def sum_persist_vector(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for pid in range(tl.program_id(0), tl.cdiv(n_elements, BLOCK_SIZE), tl.num_programs(0)):
        offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        acc += tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


@triton.jit
def sum_partials(x_ptr, part_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0.0)
    tl.store(part_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def sum_final(part_ptr, out_ptr, n_parts, BLOCK_SIZE: tl.constexpr):
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n_parts, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(part_ptr + offs, mask=offs < n_parts, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


@triton.jit
def sum_persist_staged(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, STAGES: tl.constexpr):
    """The persistent scalar loop, software-pipelined by tl.range so several blocks are in flight."""
    acc = 0.0
    for pid in tl.range(tl.program_id(0), tl.cdiv(n_elements, BLOCK_SIZE), tl.num_programs(0), num_stages=STAGES):
        offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0.0)
        acc += tl.sum(x, axis=0)
    tl.atomic_add(out_ptr, acc)


@triton.jit
def sum_persist_unroll2(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVICT: tl.constexpr):
    """Two blocks loaded before either is reduced: twice the bytes in flight per program."""
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    step = 2 * tl.num_programs(0)
    for pid in range(2 * tl.program_id(0), tl.cdiv(n_elements, BLOCK_SIZE), step):
        o0 = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        o1 = o0 + BLOCK_SIZE
        if EVICT:
            a = tl.load(x_ptr + o0, mask=o0 < n_elements, other=0.0, eviction_policy="evict_first")
            b = tl.load(x_ptr + o1, mask=o1 < n_elements, other=0.0, eviction_policy="evict_first")
        else:
            a = tl.load(x_ptr + o0, mask=o0 < n_elements, other=0.0)
            b = tl.load(x_ptr + o1, mask=o1 < n_elements, other=0.0)
        acc += a + b
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


@triton.jit
def sum_chunked(x_ptr, out_ptr, n_elements, chunk, BLOCK_SIZE: tl.constexpr):
    """Each program streams one contiguous chunk (chunk a multiple of BLOCK_SIZE)."""
    start = tl.program_id(0) * chunk
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(start, start + chunk, BLOCK_SIZE):
        o = off + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_ptr + o, mask=o < n_elements, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


@triton.jit
def sum_cg(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    acc = 0.0
    for pid in range(tl.program_id(0), tl.cdiv(n_elements, BLOCK_SIZE), tl.num_programs(0)):
        offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0.0, cache_modifier=".cg")
        acc += tl.sum(x, axis=0)
    tl.atomic_add(out_ptr, acc)


def reduction_extra_variants(sms):
    """Aimed at the read rate itself (the sweep under a clean-L2 timer): more bytes in flight,
    contiguous per-program streams, streaming cache hints."""
    out = {}

    def launch(kernel, grid_of, warps, **consts):
        def run(x, o=None):
            o = torch.zeros(1, device=x.device, dtype=torch.float32) if o is None else o
            n = x.numel()
            kernel[grid_of(n)](x, o, n, num_warps=warps, **consts)
            return o
        return run

    for b, w, k in ((2048, 4, 8), (4096, 8, 4), (4096, 8, 8), (8192, 16, 2), (4096, 4, 8)):
        for s in (2, 3, 4):
            out[f"staged B{b} w{w} x{k} s{s}"] = launch(
                sum_persist_staged, lambda n, b=b, k=k: (min(triton.cdiv(n, b), k * sms),), w, BLOCK_SIZE=b, STAGES=s)
    for b, w, k in ((2048, 4, 8), (4096, 8, 4), (4096, 8, 8), (2048, 8, 8), (4096, 16, 4), (8192, 16, 2)):
        for ev in (False, True):
            out[f"unroll2 B{b} w{w} x{k}{' evict' if ev else ''}"] = launch(
                sum_persist_unroll2, lambda n, b=b, k=k: (min(triton.cdiv(n, 2 * b), k * sms),), w,
                BLOCK_SIZE=b, EVICT=ev)
    for b, w, k in ((2048, 4, 8), (4096, 8, 4), (4096, 8, 8), (8192, 16, 2), (2048, 8, 4)):
        def chunk_run(x, o=None, b=b, w=w, k=k):
            o = torch.zeros(1, device=x.device, dtype=torch.float32) if o is None else o
            n = x.numel()
            progs = k * sms
            chunk = triton.cdiv(triton.cdiv(n, progs), b) * b
            sum_chunked[(triton.cdiv(n, chunk),)](x, o, n, chunk, BLOCK_SIZE=b, num_warps=w)
            return o
        out[f"chunked B{b} w{w} x{k}"] = chunk_run
    for b, w, k in ((4096, 8, 8), (2048, 4, 8), (8192, 16, 2)):
        out[f"cg B{b} w{w} x{k}"] = launch(sum_cg, lambda n, b=b, k=k: (min(triton.cdiv(n, b), k * sms),), w,
                                           BLOCK_SIZE=b)
    return out


def reduction_variants(sms):
    out = {}

    def plain(block, warps):
        def run(x, o=None):
            o = torch.zeros(1, device=x.device, dtype=torch.float32) if o is None else o
            n = x.numel()
            sum_orig[(triton.cdiv(n, block),)](x, o, n, BLOCK_SIZE=block, num_warps=warps)
            return o
        return run

    def persist(kernel, block, warps, per_sm, stages=None):
        def run(x, o=None):
            o = torch.zeros(1, device=x.device, dtype=torch.float32) if o is None else o
            n = x.numel()
            grid = (min(triton.cdiv(n, block), per_sm * sms),)
            extra = {} if stages is None else {"num_stages": stages}
            kernel[grid](x, o, n, BLOCK_SIZE=block, num_warps=warps, **extra)
            return o
        return run

    def two_stage(block, warps):
        def run(x, o=None):
            o = torch.zeros(1, device=x.device, dtype=torch.float32) if o is None else o
            n = x.numel()
            parts = torch.empty(triton.cdiv(n, block), device=x.device, dtype=torch.float32)
            sum_partials[(parts.numel(),)](x, parts, n, BLOCK_SIZE=block, num_warps=warps)
            sum_final[(1,)](parts, o, parts.numel(), BLOCK_SIZE=1024, num_warps=4)
            return o
        return run

    out["orig B1024 w4"] = plain(1024, 4)
    for b, w in ((4096, 8), (8192, 16), (16384, 16), (16384, 32)):
        out[f"plain B{b} w{w}"] = plain(b, w)
    for b in (1024, 2048, 4096, 8192):
        for w in (4, 8, 16):
            if b // (32 * w) < 4:
                continue
            for k in (1, 2, 4, 8, 16):
                out[f"persist-scalar B{b} w{w} x{k}"] = persist(sum_persist_scalar, b, w, k)
    for b, w, k in ((2048, 4, 4), (4096, 8, 4), (4096, 8, 2), (8192, 8, 2), (8192, 16, 1), (2048, 8, 8)):
        out[f"persist-vector B{b} w{w} x{k}"] = persist(sum_persist_vector, b, w, k)
    for b, w in ((4096, 8), (8192, 16), (16384, 16)):
        out[f"two-stage B{b} w{w}"] = two_stage(b, w)
    return out


# -- layernorm ----------------------------------------------------------------------------------
@triton.jit
def ln_three_pass(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        b = tl.load(B + cols, mask=mask).to(tl.float32)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def ln_unrolled(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    """The three passes with their single iteration written out (BLOCK_SIZE >= N): x loaded thrice."""
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    cols = tl.arange(0, BLOCK_SIZE)
    a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(a, axis=0) / N
    x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    x = tl.where(cols < N, x - mean, 0.0)
    var = tl.sum(x * x, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    mask = cols < N
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    b = tl.load(B + cols, mask=mask).to(tl.float32)
    x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
    y = (x - mean) * rstd * w + b
    tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def ln_single(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr, HINTS: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    if HINTS:
        a = tl.load(X + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        w = tl.load(W + cols, mask=mask, eviction_policy="evict_last").to(tl.float32)
        b = tl.load(B + cols, mask=mask, eviction_policy="evict_last").to(tl.float32)
    else:
        a = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        b = tl.load(B + cols, mask=mask).to(tl.float32)
    mean = tl.sum(a, axis=0) / N
    x = tl.where(mask, a - mean, 0.0)
    var = tl.sum(x * x, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    y = x * rstd * w + b
    tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def ln_persistent(X, Y, W, B, Mean, Rstd, stride, M, N, eps, BLOCK_SIZE: tl.constexpr):
    """Single pass, a few programs per SM each looping over rows; w and b loaded once."""
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    b = tl.load(B + cols, mask=mask).to(tl.float32)
    for row in range(tl.program_id(0), M, tl.num_programs(0)):
        a = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(a, axis=0) / N
        x = tl.where(mask, a - mean, 0.0)
        var = tl.sum(x * x, axis=0) / N
        rstd = 1 / tl.sqrt(var + eps)
        tl.store(Mean + row, mean)
        tl.store(Rstd + row, rstd)
        y = x * rstd * w + b
        tl.store(Y + row * stride + cols, y.to(Y.dtype.element_ty), mask=mask)


def layernorm_persistent_variants(sms):
    out = {}

    def make(per_sm, warps, stages):
        def run(x, w, b):
            M, N = x.shape
            y = torch.empty_like(x)
            mean = torch.empty(M, dtype=torch.float32, device=x.device)
            rstd = torch.empty(M, dtype=torch.float32, device=x.device)
            ln_persistent[(min(M, per_sm * sms),)](x, y, w, b, mean, rstd, x.stride(0), M, N, 1e-5,
                                                   BLOCK_SIZE=8192, num_warps=warps, num_stages=stages)
            return y
        return run

    for k in (1, 2, 3, 4):
        for w in (8, 16):
            for s in (1, 2, 3):
                out[f"persist-rows B8192 w{w} x{k} s{s}"] = make(k, w, s)
    return out


def layernorm_variants():
    out = {}

    def make(kernel, block, warps, stages=None, **consts):
        def run(x, w, b):
            M, N = x.shape
            y = torch.empty_like(x)
            mean = torch.empty(M, dtype=torch.float32, device=x.device)
            rstd = torch.empty(M, dtype=torch.float32, device=x.device)
            extra = {} if stages is None else {"num_stages": stages}
            kernel[(M,)](x, y, w, b, mean, rstd, x.stride(0), N, 1e-5, BLOCK_SIZE=block, num_warps=warps,
                         **consts, **extra)
            return y
        return run

    out["orig B1024 w8"] = make(ln_three_pass, 1024, 8)
    for b, w in ((4096, 16), (4096, 8), (8192, 8), (8192, 16), (8192, 32), (2048, 8), (2048, 4)):
        out[f"three-pass B{b} w{w}"] = make(ln_three_pass, b, w)
    for w in (4, 8, 16, 32):
        out[f"unrolled B8192 w{w}"] = make(ln_unrolled, 8192, w)
    for w in (4, 8, 16, 32):
        for hints in (False, True):
            out[f"single B8192 w{w}{' hints' if hints else ''}"] = make(ln_single, 8192, w, HINTS=hints)
    for w, s in ((8, 1), (16, 1), (8, 2)):
        out[f"single B8192 w{w} s{s}"] = make(ln_single, 8192, w, stages=s, HINTS=False)
    return out


def time_it(fn, *args):
    return do_bench(lambda: fn(*args), warmup=25, rep=100, return_mode="median")


def time_clean(fn, *args):
    """The clean-L2 timer the verifier and the profiler use (profiling/worker/timing.py).
    probe_memory_bound_timers.txt and probe_memory_bound_clean.json were taken before it existed,
    with the same flush (256 MB zeroed, then read) around 60 calls."""
    return timing.bench(functools.partial(fn, *args))


def _reduction_case():
    """The reduction example's performance input, a check of a variant's result, its bytes."""
    x = torch.rand(1 << 24, device="cuda").sub_(0.25)
    ref, tol = x.double().sum().item(), 1e-5 * x.abs().sum().item()
    return (x,), (lambda got: abs(got.item() - ref) <= tol), x.numel() * 4 + 4


def _layernorm_case():
    M, N = 4096, 8192
    xs = (torch.randn(M, N, device="cuda") * 2 + 0.5).half()
    w = (torch.rand(N, device="cuda") + 0.5).half()
    b = torch.randn(N, device="cuda").half()
    ref = torch.nn.functional.layer_norm(xs.float(), (N,), w.float(), b.float(), 1e-5)
    return ((xs, w, b), (lambda got: bool(((got.float() - ref).norm() / ref.norm()).item() < 1e-2)),
            2 * xs.numel() * 2 + 2 * N * 2)


def _measure(rows, kernel, variants, args, check, timer, nbytes, copy_tbs, kernel_only_args=None):
    """Check, then time, each variant; one that fails to compile or run is a row with its error."""
    for name, fn in variants.items():
        try:
            ok = check(fn(*args))
            ms = timer(fn, *args)
            row = {"kernel": kernel, "variant": name, "ok": ok, "ms": ms}
            if kernel_only_args is not None:
                row["kernel_only_ms"] = timer(fn, *kernel_only_args)
        except Exception as exc:  # noqa: BLE001 - a variant that does not compile is a finding
            rows.append({"kernel": kernel, "variant": name, "error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        row["pct_copy"] = 100 * nbytes / (ms * 1e-3) / 1e12 / copy_tbs
        rows.append(row)


def _print_rows(rows):
    for kernel in ("reduction", "layernorm"):
        for r in sorted((r for r in rows if r["kernel"] == kernel), key=lambda r: r.get("ms") or 1e9):
            if r.get("error"):
                print(f"{kernel:10s} {r['variant']:34s} ERROR {r['error'][:100]}")
            else:
                ko = f" kernel-only {r['kernel_only_ms'] * 1e3:6.2f}" if r.get("kernel_only_ms") else ""
                print(f"{kernel:10s} {r['variant']:34s} {r['ms'] * 1e3:8.2f} us {r['pct_copy']:5.1f}%{ko} "
                      f"{'' if r['ok'] else 'WRONG'}")


def timers() -> int:
    """Same kernels, two timers: do_bench (its flush leaves ~50 MB of dirty L2 lines that the timed
    kernel writes back) and a clean flush."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = []

    def row(name, nbytes, fn, *args):
        a = time_it(fn, *args)
        c = time_clean(fn, *args)
        out.append((name, nbytes, a, c))

    for n_mb in (64, 1024):
        src = torch.empty(n_mb << 18, dtype=torch.float32, device="cuda").normal_()
        dst = torch.empty_like(src)
        row(f"copy {n_mb} MB", 2 * src.numel() * 4, dst.copy_, src)
        row(f"read {n_mb} MB (torch.sum)", src.numel() * 4, torch.sum, src)
        del src, dst
    args, _, nbytes = _reduction_case()
    red = reduction_variants(sms)
    for name in ("orig B1024 w4", "plain B8192 w16", "persist-scalar B4096 w8 x8", "persist-scalar B2048 w4 x8"):
        row("reduction " + name, nbytes, red[name], *args)
    row("reduction zeros(1) only", 4, lambda: torch.zeros(1, device="cuda"))
    del args
    args, check, nbytes = _layernorm_case()
    ln = layernorm_variants()
    for name in ("orig B1024 w8", "three-pass B4096 w16", "single B8192 w8 s2", "single B8192 w8"):
        row("layernorm " + name, nbytes, ln[name], *args)
    for name, fn in layernorm_persistent_variants(sms).items():
        if not check(fn(*args)):
            print("WRONG", name)
            continue
        row("layernorm " + name, nbytes, fn, *args)
    copy_tbs = next(2 * (1024 << 20) / (a * 1e-3) / 1e12 for n, _, a, _ in out if n == "copy 1024 MB")
    print(f"copy 1 GB (do_bench) {copy_tbs:.2f} TB/s")
    print(f"{'variant':44s} {'do_bench us':>11s} {'clean us':>9s} {'%copy':>6s} {'%copy clean':>11s}")
    for name, nbytes, a, c in out:
        print(f"{name:44s} {a * 1e3:11.2f} {c * 1e3:9.2f} {100 * nbytes / (a * 1e-3) / 1e12 / copy_tbs:6.1f} "
              f"{100 * nbytes / (c * 1e-3) / 1e12 / copy_tbs:11.1f}")
    return 0


def clean_sweep(out_dir: str) -> int:
    """Every reduction and layernorm variant under the clean-L2 timer, beside the fixed costs a
    64 MB reduction cannot avoid (an empty timed window, the zeros(1) its atomics need)."""
    torch.manual_seed(0)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    report = {"gpu": torch.cuda.get_device_name(0), "sms": sms, "timer": "clean", "rows": []}
    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda").normal_()
    dst = torch.empty_like(src)
    copy_ms = time_clean(dst.copy_, src)
    copy_tbs = 2 * src.numel() * 4 / (copy_ms * 1e-3) / 1e12
    report["copy_1g_tb_s"] = copy_tbs
    del src, dst
    torch.cuda.empty_cache()
    args, check, nbytes = _reduction_case()
    x = args[0]
    fixed = {
        "empty window": time_clean(lambda: None),
        "zeros(1)": time_clean(lambda: torch.zeros(1, device="cuda")),
        "torch.sum 64 MB": time_clean(torch.sum, x),
    }
    y = torch.empty_like(x)
    fixed["copy 64 MB (128 MB moved)"] = time_clean(y.copy_, x)
    del y
    report["fixed_ms"] = fixed
    variants = dict(reduction_variants(sms))
    variants.update(reduction_extra_variants(sms))
    # kernel-only: the same launches into a preallocated output, without the zeros(1)
    _measure(report["rows"], "reduction", variants, args, check, time_clean, nbytes, copy_tbs,
             kernel_only_args=(x, torch.zeros(1, device="cuda")))
    del x, args
    args, check, nbytes = _layernorm_case()
    _measure(report["rows"], "layernorm", layernorm_variants(), args, check, time_clean, nbytes, copy_tbs)
    with open(os.path.join(out_dir, "probe_memory_bound_clean.json"), "w") as fh:
        json.dump(report, fh, indent=2)
    print(f"# clean-L2 timer; {report['gpu']}, {sms} SMs; 1 GB copy {copy_tbs:.2f} TB/s")
    for k, v in fixed.items():
        print(f"fixed  {k:40s} {v * 1e3:8.2f} us")
    _print_rows(report["rows"])
    return 0


def tracker_overhead() -> int:
    """Does the verifier's launch tracker (profiling/worker/job_verify.py) make a short kernel's
    do_bench time CPU-bound? The reduction example, naive and with BLOCK 8192 / 16 warps, timed
    with and without the tracker installed."""
    import importlib.util
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(root, "profiling", "worker"))
    import job_verify

    with open(os.path.join(root, "examples", "reduction_atomic.py")) as fh:
        text = fh.read()
    variants = {"naive": text, "B8192 w16": text.replace("BLOCK_SIZE=1024)", "BLOCK_SIZE=8192, num_warps=16)")}
    x = torch.rand(1 << 24, device="cuda").sub_(0.25)
    for name, src in variants.items():
        path = os.path.join(tempfile.gettempdir(), f"probe_red_{name.replace(' ', '_')}.py")
        with open(path, "w") as fh:
            fh.write(src)
        spec = importlib.util.spec_from_file_location(f"probe_red_{len(name)}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        plain = [time_it(mod.block_sum, x) for _ in range(3)]
        with job_verify.Tracker():
            tracked = [time_it(mod.block_sum, x) for _ in range(3)]
        print(f"reduction {name:10s} plain {[round(t * 1e3, 1) for t in plain]} us; "
              f"under the verifier's tracker {[round(t * 1e3, 1) for t in tracked]} us")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--timers", action="store_true", help="compare do_bench with a clean-L2 timer")
    ap.add_argument("--tracker", action="store_true", help="time the reduction under the verifier's tracker")
    ap.add_argument("--clean-sweep", action="store_true", help="every variant under the clean-L2 timer")
    opts = ap.parse_args()
    if opts.clean_sweep:
        return clean_sweep(opts.out)
    if opts.tracker:
        return tracker_overhead()
    if opts.timers:
        return timers()
    torch.manual_seed(0)
    dev = torch.cuda.get_device_properties(0)
    sms = dev.multi_processor_count
    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda").normal_()
    dst = torch.empty_like(src)
    copy_ms = time_it(dst.copy_, src)
    copy_tbs = 2 * src.numel() * 4 / (copy_ms * 1e-3) / 1e12
    del src, dst
    rows = []
    report = {"gpu": torch.cuda.get_device_name(0), "sms": sms, "copy_tb_s": copy_tbs, "rows": rows}

    args, check, nbytes = _reduction_case()
    report["zeros1_ms"] = time_it(lambda: torch.zeros(1, device="cuda"))
    report["torch_sum_ms"] = time_it(torch.sum, *args)
    _measure(rows, "reduction", reduction_variants(sms), args, check, time_it, nbytes, copy_tbs)
    del args
    args, check, nbytes = _layernorm_case()
    xs, w, b = args
    report["torch_layer_norm_ms"] = time_it(lambda: torch.nn.functional.layer_norm(xs, (xs.shape[1],), w, b, 1e-5))
    _measure(rows, "layernorm", layernorm_variants(), args, check, time_it, nbytes, copy_tbs)

    with open(os.path.join(opts.out, "probe_memory_bound.json"), "w") as fh:
        json.dump(report, fh, indent=2)
    print(f"{report['gpu']}: {sms} SMs, copy {copy_tbs:.2f} TB/s; zeros(1) {report['zeros1_ms'] * 1e3:.1f} us; "
          f"torch sum {report['torch_sum_ms'] * 1e3:.1f} us; torch layer_norm {report['torch_layer_norm_ms'] * 1e3:.1f} us")
    _print_rows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
