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
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "profiling", "worker"))
import timing  # noqa: E402
from memory_bound_variants import (  # noqa: E402 - beside this script
    layernorm_persistent_variants,
    layernorm_variants,
    reduction_extra_variants,
    reduction_variants,
)


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
    """Does the verifier's launch tracker (profiling/worker/verify_tracking.py) make a short kernel's
    do_bench time CPU-bound? The reduction example, naive and with BLOCK 8192 / 16 warps, timed
    with and without the tracker installed."""
    import importlib.util
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(root, "profiling", "worker"))
    import verify_tracking

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
        with verify_tracking.Tracker():
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
