#!/usr/bin/env python3
"""The verifier at a kernel's real size: an fp32 elementwise kernel of our own on 2^27 elements
(512 MiB a tensor), or (--kernel matmul) a 4096^3 fp16 matmul, each with a second, small case, and
a trivially correct candidate (a bigger block),
verified the way optimize verifies: the original checked first, then the candidate in the same
worker, timed A/B on the largest case. Prints the worker's time by phase and the wall time, and
writes bench/results/verify_real_size[_matmul].json. The target: under 120 s in all.

    python bench/verify_real_size.py            # on a GPU
    python bench/verify_real_size.py --kernel matmul
    python bench/verify_real_size.py --small    # 2^16 elements, anywhere (Triton's interpreter on a CPU)
    python bench/verify_real_size.py --optimize [--kernel matmul]   # the whole optimize on that file
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUDGET_S = 120.0

KERNEL = '''"""y = 2x + 1 over a flat fp32 tensor (bench/verify_real_size.py writes this file)."""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl


@triton.jit
def affine_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0 + 1.0, mask=mask)


def affine(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    BLOCK = 1024
    affine_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, y, x.numel(), BLOCK=BLOCK)
    return y


def tritonlens_cases():
    yield affine, (torch.randn(REAL, device=DEVICE),)  # performance shape
    yield affine, (torch.randn(SMALL, device=DEVICE),)
'''


MATMUL = '''"""C = A @ B in fp16 with fp32 accumulation (bench/verify_real_size.py writes this file)."""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=torch.float16, device=a.device)
    BM, BN, BK = 64, 64, 32
    mm_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK)
    return c


def tritonlens_cases():
    for n in (REAL, SMALL):  # performance shape first
        yield matmul, (torch.randn(n, n, device=DEVICE).half(), torch.randn(n, n, device=DEVICE).half())
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="2^16 elements (runs on a CPU, in the interpreter)")
    parser.add_argument("--kernel", choices=("affine", "matmul"), default="affine",
                        help="affine: 2^27 fp32 elements; matmul: 4096^3 in fp16")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    parser.add_argument("--optimize", action="store_true",
                        help="run the whole optimize (config,rules) on the file instead of one candidate's verification")
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    from optimize_gpu import (
        _bootstrap,  # tritonlens from this checkout, installed or not
    )

    _bootstrap()
    from tritonlens.rewrite.candidate import Candidate
    from tritonlens.rewrite.verify import Verifier

    if args.kernel == "matmul":
        real, small = (64, 32) if args.small else (4096, 512)
        text = MATMUL.replace("SMALL", str(small)).replace("REAL", str(real))
        candidate = Candidate("bench", "BK=64", text.replace("BM, BN, BK = 64, 64, 32", "BM, BN, BK = 64, 64, 64"))
        elements = 2 * real * real  # its two inputs: what makes a case the real size
    else:
        real, small = (1 << 16, 1 << 10) if args.small else (1 << 27, 1 << 16)
        text = KERNEL.replace("SMALL", str(small)).replace("REAL", str(real))
        candidate = Candidate("bench", "BLOCK=2048", text.replace("BLOCK = 1024", "BLOCK = 2048"))
        elements = real
    assert candidate.source != text
    folder = tempfile.mkdtemp(prefix="tl_verify_real_size_")
    path = os.path.join(folder, f"{args.kernel}.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    if args.optimize:
        return _optimize(args, path, real)
    started = time.perf_counter()
    with Verifier(path, text, timeout=600) as verifier:
        if args.small:
            verifier.real_size = elements  # the interpreter's real size is a small one
        verifier._run(verifier.job("check", []), fresh=False)  # as optimize does: the original first
        checked_original = time.perf_counter() - started
        verdict = verifier.verify([candidate], isolate=False)[0]
        wall = time.perf_counter() - started
        phases, line = dict(verifier.phases), verifier.time_line()
    ev = verdict.evidence
    timing = ev.get("timing") or {}
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": verifier.device, "mode": verifier.mode, "kernel": args.kernel, "size": real, "small_case": small,
        "wall_s": round(wall, 2), "original_check_s": round(checked_original, 2), "budget_s": BUDGET_S,
        "within_budget": wall <= BUDGET_S, "phases_s": {k: round(v, 3) for k, v in phases.items()},
        "time_line": line, "accepted": verdict.accepted, "reason": verdict.reason, "speedup": verdict.speedup,
        "checks": [(c["seed"], c["case"], c["shapes"], c["ok"]) for c in ev.get("checks", [])],
        "planned": ev.get("planned"), "one_seed": ev.get("one_seed"),
        "timing_rounds": timing.get("rounds"), "timing_stopped": timing.get("stopped"),
        "timing_rep_ms": timing.get("rep_ms"),
    }
    print(f"{verifier.device} ({verifier.mode}): {args.kernel} at {real}, verified in {wall:.1f} s "
          f"(budget {BUDGET_S:.0f} s: {'within' if wall <= BUDGET_S else 'OVER'})")
    print(line)
    print(f"verdict: {'accepted' if verdict.accepted else 'refused'}: {verdict.reason}")
    if timing:
        print(f"timing: {timing.get('rounds')} rounds of {timing.get('rep_ms')} ms a sample, stopped: {timing.get('stopped')}")
    os.makedirs(args.out, exist_ok=True)
    name = "verify_real_size" + ("" if args.kernel == "affine" else f"_{args.kernel}") + ("_small" if args.small else "")
    name += ".json"
    with open(os.path.join(args.out, name), "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
        fh.write("\n")
    return 0 if verdict.accepted else 1


def _optimize(args, path: str, real: int) -> int:
    """`tritonlens optimize` as a user runs it on the file: every proposer's candidates verified and
    timed at the real size; the wall time against the same budget, and where the worker's time went."""
    from tritonlens.rewrite.api import OptimizeOptions, optimize_file, summary

    started = time.perf_counter()
    report = optimize_file(path, OptimizeOptions(proposers=("config", "rules"), job_timeout_s=600))
    wall = time.perf_counter() - started
    best = report.best
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": report.device, "mode": report.mode, "kernel": args.kernel, "size": real,
        "wall_s": round(wall, 1), "budget_s": BUDGET_S, "within_budget": wall <= BUDGET_S,
        "candidates": len(report.candidates), "accepted": sum(1 for c in report.candidates if c.accepted),
        "summary": summary(report), "time_line": report.time_line,
        "best": None if best is None else {"title": best.title, "speedup": best.speedup},
    }
    print(f"{report.device} ({report.mode}): optimize {args.kernel} at {real}: {wall:.1f} s "
          f"(budget {BUDGET_S:.0f} s: {'within' if wall <= BUDGET_S else 'OVER'}), {result['candidates']} candidates")
    print(report.time_line)
    print(f"result: {result['summary']}")
    os.makedirs(args.out, exist_ok=True)
    name = f"optimize_real_size_{args.kernel}" + ("_small" if args.small else "") + ".json"
    with open(os.path.join(args.out, name), "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
