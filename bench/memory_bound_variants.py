"""The hand-written variants bench/probe_memory_bound.py times: a sum reduction (one atomic per
program, persistent grids, two-stage) and layernorm (three passes, one pass, persistent)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


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
