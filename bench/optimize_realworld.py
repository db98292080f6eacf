#!/usr/bin/env python3
"""tritonlens optimize (config search + rule fixes, no LLM) on real-world-style kernels at real sizes.

For each kernel in bench/realworld_style_kernels/ (each file's first case is its real size on a
GPU: >= 2^26 elements, or a 4096^3 matmul): the product's optimize_file, as `tritonlens optimize
FILE --proposers config,rules` calls it, timed end to end; whether it raised (a crash); what it
accepted. Then, independently of the verifier's own figures, the original and the accepted best
are run on the full real-size input (outputs compared with each other and the original's with
torch), and timed in --rounds interleaved rounds under both the product's timer
(profiling/worker/timing.py: L2 left clean) and a plain triton.testing.do_bench, the order rotated
each round. % of roofline: the fewest bytes each kernel must move against a 1 GiB copy timed under
the same timer in the same run; the matmul's FLOPs against torch.matmul on fp16 inputs of the same
shape, timed in the same rounds.

The headline: the geometric mean of the speedups (product timer) over the kernels that start below
40% of roofline (none of these kernels' only weakness is a block under 64).

Runs on the GPU host from a bare checkout: the checkout is imported as bench/optimize_gpu.py does.

    python bench/optimize_realworld.py [--only rope,embedding] [--budget-s 420] [--out bench/results]
    python bench/optimize_realworld.py --cpu-smoke --only rowwise_dequant   # interpreter, small cases
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import math
import os
import sys
import time

import realworld_style_support as rw
from optimize_gpu import _bootstrap, _timing, measure_ceilings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLOW_START_PCT = 40.0


def run_optimize(name: str, timeout: float, budget_s: float = 120.0) -> dict:
    """optimize_file on the kernel's file, timed; an exception is a crash, kept with its text."""
    from tritonlens.rewrite.api import OptimizeOptions, optimize_file

    t0 = time.monotonic()
    try:
        options = OptimizeOptions(proposers=("config", "rules"), job_timeout_s=timeout, budget_s=budget_s)
        result = optimize_file(rw.original_path(name), options,
                               progress=lambda m, f: print(f"  [{name}] {m}", flush=True)).to_json()
    except Exception as exc:  # noqa: BLE001 - a crash is a result here, not the end of the run
        return {"seconds": round(time.monotonic() - t0, 1), "crash": f"{type(exc).__name__}: {exc}"}
    best = result.get("best")
    cands = result["candidates"]
    return {"seconds": round(time.monotonic() - t0, 1), "crash": None, "mode": result["mode"],
            "baseline_ms": result["baseline_ms"], "proposed": len(cands),
            "accepted": sum(1 for c in cands if c["accepted"]),
            "refusals": [f"{c['title']}: {c['reason']}" for c in cands if not c["accepted"]][:12],
            "best": None if best is None else {k: best.get(k) for k in ("title", "proposer", "speedup", "orig_ms",
                                                                         "cand_ms", "diff")},
            "best_source": None if best is None else best.get("source")}


def compare_full(name: str, orig, best_mod) -> dict:
    """Outputs of the original against torch, and of the best rewrite against the original, on the
    real-size input (every element)."""
    fn, args = rw.cases(orig)[0][:2]
    out = fn(*args)
    res = {"orig_vs_torch": rw.vs_reference(orig, args, out)}
    if best_mod is not None:
        res["best_vs_orig"] = rw.max_error(out, getattr(best_mod, fn.__name__)(*args))
        res["wrong_accept"] = not res["best_vs_orig"] <= rw.tolerance(orig)
    return res


def retime(orig, best_mod, rounds: int, ceilings: dict) -> dict:
    """Original and best under the product's timer and do_bench, interleaved in the same rounds."""
    import torch
    from triton.testing import do_bench

    fn, args = rw.cases(orig)[0][:2]
    out = fn(*args)
    sides = {"original": functools.partial(fn, *args)}
    if best_mod is not None:
        sides["best"] = functools.partial(getattr(best_mod, fn.__name__), *args)
    if orig.BOUND == "compute":
        a, w, scale = args
        sides["cuBLAS"] = functools.partial(torch.matmul, a, (w.float() * scale.float()[None, :]).half())
    bench = _timing().bench
    timers = {"product": lambda f: bench(f, warmup_ms=25, rep_ms=60),
              "do_bench": lambda f: do_bench(f, warmup=25, rep=60, return_mode="median")}
    both = rw.interleaved({(k, t): functools.partial(timers[t], f) for k, f in sides.items() for t in timers},
                          lambda call: call(), rounds)
    out_fig = {}
    for t, copy_key in (("product", "copy_tb_s"), ("do_bench", "copy_tb_s_do_bench")):
        fig = {k: dict(both[(k, t)]) for k in sides}
        dot = None
        if "cuBLAS" in fig:
            a, w = args[0], args[1]
            dot = 2 * a.shape[0] * a.shape[1] * w.shape[1] / (fig["cuBLAS"]["ms"] * 1e-3) / 1e12
        for f in fig.values():
            f.update(rw.pct_of_roofline(orig, args, out, f["ms"], ceilings[copy_key], dot or rw.H100_FP16_TFLOPS))
        fig["speedup"] = fig["original"]["ms"] / fig["best"]["ms"] if "best" in fig else 1.0
        out_fig[t] = fig
    del args, out, sides
    torch.cuda.empty_cache()
    return out_fig


def geomean(xs: list[float]) -> float | None:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def gpu(opts) -> int:
    _bootstrap()
    import torch
    import triton

    if not torch.cuda.is_available():
        print("no GPU: use --cpu-smoke", file=sys.stderr)
        return 2
    only = {x for x in opts.only.split(",") if x}
    start = time.monotonic()
    report = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
              "torch": torch.__version__, "triton": triton.__version__, "ceilings": measure_ceilings(),
              "product_timer": _timing().METHOD, "rounds": opts.rounds, "kernels": []}
    for name in rw.KERNELS:
        if only and name not in only:
            continue
        if time.monotonic() - start > opts.budget_s:
            report["kernels"].append({"kernel": name, "skipped": "time budget spent"})
            continue
        entry = {"kernel": name, "optimize": run_optimize(name, opts.timeout, opts.optimize_budget_s)}
        source = entry["optimize"].pop("best_source", None)
        try:
            orig = rw.load(name)
            best_mod = rw.load_source(source, f"rw_best_{name}") if source else None
            entry["bound"] = orig.BOUND
            entry["outputs"] = compare_full(name, orig, best_mod)
            entry["timed"] = retime(orig, best_mod, opts.rounds, report["ceilings"])
        except Exception as exc:  # noqa: BLE001 - the optimize figures stay on record
            entry["error"] = f"{type(exc).__name__}: {exc}"
        report["kernels"].append(entry)
        print(row(entry), flush=True)
        summarise(report)
        os.makedirs(opts.out, exist_ok=True)
        with open(os.path.join(opts.out, "optimize_realworld.json"), "w") as fh:
            json.dump(report, fh, indent=2, default=str)
    print(render(report))
    return 0


def summarise(report: dict) -> None:
    done = [e for e in report["kernels"] if "optimize" in e]
    slow = [e for e in done if (e.get("timed") or {}).get("product", {}).get("original", {}).get("pct", 100.0)
            < SLOW_START_PCT]
    report["summary"] = {
        "kernels": len(done), "crashes": sum(1 for e in done if e["optimize"].get("crash")),
        "wrong_accepts": sum(1 for e in done if (e.get("outputs") or {}).get("wrong_accept")),
        "max_optimize_s": max((e["optimize"]["seconds"] for e in done), default=None),
        "slow_start": [e["kernel"] for e in slow],
        "geomean_slow_start_product": geomean([e["timed"]["product"]["speedup"] for e in slow]),
        "geomean_slow_start_do_bench": geomean([e["timed"]["do_bench"]["speedup"] for e in slow]),
    }


def row(e: dict) -> str:
    if e.get("skipped"):
        return f"| {e['kernel']} | skipped: {e['skipped']} | | | | | | |"
    o = e["optimize"]
    if o.get("crash") or e.get("error"):
        return f"| {e['kernel']} | {o['seconds']} s | CRASH/ERROR: {(o.get('crash') or e.get('error'))[:160]} | | | | | |"
    p, d = e["timed"]["product"], e["timed"]["do_bench"]
    best = "best" if "best" in p else "original"
    wrong = (e.get("outputs") or {}).get("wrong_accept")
    return (f"| {e['kernel']} | {o['seconds']} s | {o['accepted']}/{o['proposed']} | "
            f"{(o.get('best') or {}).get('title') or 'none accepted'} | "
            f"{p['original']['ms'] * 1e3:.1f} → {p[best]['ms'] * 1e3:.1f} µs ({p['speedup']:.2f}x) | "
            f"{d['original']['ms'] * 1e3:.1f} → {d[best]['ms'] * 1e3:.1f} µs ({d['speedup']:.2f}x) | "
            f"{p['original']['pct']:.0f}% → {p[best]['pct']:.0f}% | {'WRONG' if wrong else 'same'} |")


def render(report: dict) -> str:
    c, s = report["ceilings"], report.get("summary") or {}
    lines = [f"# tritonlens optimize (config,rules) on real-world-style kernels, {report['gpu']}", "",
             (f"{report['date']}, torch {report['torch']}, triton {report['triton']}; copy {c['copy_tb_s']:.2f} TB/s "
             f"(product timer), {c['copy_tb_s_do_bench']:.2f} TB/s (do_bench); {report['rounds']} interleaved rounds."),
             "", ("| kernel | optimize | accepted | best | product timer | do_bench | % of roofline (product) | "
             "outputs on the full input |"), "|---|---|---|---|---|---|---|---|"]
    lines += [row(e) for e in report["kernels"]]
    if s:
        gp, gd = s.get("geomean_slow_start_product"), s.get("geomean_slow_start_do_bench")
        lines += ["", (f"- crashes {s['crashes']}, wrong accepts {s['wrong_accepts']}, slowest optimize "
                      f"{s['max_optimize_s']} s"),
                  (f"- below {SLOW_START_PCT:.0f}% of roofline at the start: {', '.join(s['slow_start']) or 'none'}; "
                  f"geomean speedup {'–' if gp is None else f'{gp:.2f}x'} (product timer), "
                  f"{'–' if gd is None else f'{gd:.2f}x'} (do_bench)")]
    return "\n".join(lines) + "\n"


def cpu_smoke(opts) -> int:
    """The same flow on the interpreter with the small cases: optimize, then the best against the
    original on every case. No timing (the interpreter's times say nothing about a GPU)."""
    os.environ["TRITON_INTERPRET"] = "1"
    _bootstrap()
    only = [x for x in opts.only.split(",") if x] or rw.KERNELS
    bad = 0
    for name in only:
        o = run_optimize(name, opts.timeout, opts.optimize_budget_s)
        source = o.pop("best_source", None)
        orig = rw.load(name)
        best_mod = rw.load_source(source, f"rw_best_{name}") if source else None
        errs = []
        for fn, args, *_ in rw.cases(orig):
            out = fn(*args)
            errs.append(rw.vs_reference(orig, args, out))
            if best_mod is not None:
                errs.append(rw.max_error(out, getattr(best_mod, fn.__name__)(*args)))
        wrong = max(errs) > rw.tolerance(orig)
        bad += bool(o.get("crash")) or wrong
        print(f"{name}: optimize {o['seconds']} s, crash {o.get('crash')}, accepted {o.get('accepted')}/"
              f"{o.get('proposed')}, best {(o.get('best') or {}).get('title')}, worst error {max(errs):.2g}"
              f"{' WRONG' if wrong else ''}", flush=True)
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=420.0, help="start no new kernel after this many seconds")
    ap.add_argument("--timeout", type=float, default=300.0, help="the verifier's worker timeout")
    ap.add_argument("--optimize-budget-s", type=float, default=120.0, help="one optimize's own budget (0: none)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--cpu-smoke", action="store_true", help="interpreter, small cases, correctness only")
    opts = ap.parse_args()
    return cpu_smoke(opts) if opts.cpu_smoke else gpu(opts)


if __name__ == "__main__":
    sys.exit(main())
