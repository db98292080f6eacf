#!/usr/bin/env python3
"""Config search + rule fixes (no LLM) on the examples' naive configs, on a GPU.

For each example: the verified A/B timing of the original and of the best accepted rewrite, and the
best rewrite's % of roofline against ceilings measured in the same run (device-to-device copy
bandwidth for memory-bound kernels, cuBLAS through torch.matmul on the same inputs for the matmul).

Memory-bound examples also get a same-size ceiling: the fewest bytes the example must move, moved
by torch under the same timer: a copy of those bytes, or a read of them (torch.sum) when the
example writes next to nothing.

The matmul's % after is its best rewrite against cuBLAS timed in alternating rounds beside it (a
cuBLAS figure taken once at the start, on a cooler GPU, is kept in the JSON as cublas_ms_first).

Timer: profiling/worker/timing.py, the one the verifier and the profiler use (do_bench's shape, but
its L2 flush leaves L2 clean; that file says why). For the record each example's original and best
rewrite are also timed with a plain triton.testing.do_bench, against a copy timed the same way.

    python bench/optimize_gpu.py [--out DIR] [--only matmul,softmax] [--budget-s 420]

Writes optimize_gpu.json and optimize_gpu.md into --out (default bench/results).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import importlib.util
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = [  # (file, bound) in the order they run: the headline first
    ("matmul", "compute"), ("vector_add", "memory"), ("softmax", "memory"), ("layernorm", "memory"),
    ("rmsnorm_autotune", "memory"), ("transpose", "memory"), ("reduction_atomic", "memory"),
]


def _bootstrap() -> None:
    """Import tritonlens from this checkout even where it is not pip-installed (the GPU host)."""
    try:
        import tritonlens.rewrite.api
        return
    except ImportError:
        pass
    sys.path.insert(0, ROOT)
    import tritonlens

    for sub in ("analysis", "profiling", "rewrite", "server", "docs"):
        folder = os.path.join(ROOT, sub)
        init = os.path.join(folder, "__init__.py")
        if not os.path.exists(init):
            continue
        spec = importlib.util.spec_from_file_location(f"tritonlens.{sub}", init, submodule_search_locations=[folder])
        module = importlib.util.module_from_spec(spec)
        sys.modules[f"tritonlens.{sub}"] = module
        setattr(tritonlens, sub, module)
        spec.loader.exec_module(module)


def _timing():
    sys.path.insert(0, os.path.join(ROOT, "profiling", "worker"))
    import timing

    return timing


def measure_ceilings():
    import torch
    from triton.testing import do_bench

    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda").normal_()
    dst = torch.empty_like(src)
    copy = functools.partial(dst.copy_, src)
    ms = _timing().bench(copy)
    ms_do_bench = do_bench(copy, warmup=25, rep=100, return_mode="median")
    moved = 2 * src.numel() * 4
    del src, dst
    torch.cuda.empty_cache()
    return {"copy_tb_s": moved / (ms * 1e-3) / 1e12, "copy_tb_s_do_bench": moved / (ms_do_bench * 1e-3) / 1e12,
            "timer": _timing().METHOD}


def same_size_ceiling(read_bytes: int, written_bytes: int) -> dict:
    """torch moving the example's own bytes under the same timer: a copy, or a read when the
    example writes under 1% of what it reads."""
    import torch

    bench = _timing().bench
    total = read_bytes + written_bytes
    if written_bytes < 0.01 * read_bytes:
        src = torch.empty(max(1, read_bytes // 4), dtype=torch.float32, device="cuda").normal_()
        ms = bench(functools.partial(torch.sum, src))
        what = f"torch.sum over the same {read_bytes / 2**20:.0f} MB"
        del src
    else:
        src = torch.empty(max(1, total // 8), dtype=torch.float32, device="cuda").normal_()
        dst = torch.empty_like(src)
        ms = bench(functools.partial(dst.copy_, src))
        what = f"a {total / 2**20:.0f} MB copy (read + write)"
        del src, dst
    torch.cuda.empty_cache()
    return {"ms": ms, "what": what, "tb_s": total / (ms * 1e-3) / 1e12}


def _first_case(path: str, module_name: str):
    spec = importlib.util.spec_from_file_location(module_name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return next(iter(mod.tritonlens_cases()))[:2]


def _first_case_of_source(source: str, module_name: str):
    """_first_case of a rewrite's text (the module is imported, and its kernels parsed, before the
    temporary file goes)."""
    import tempfile

    fd, tmp = tempfile.mkstemp(suffix=".py", prefix=f"{module_name}_")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(source)
        return _first_case(tmp, module_name)
    finally:
        os.unlink(tmp)


def do_bench_record(name: str, best_source: str | None) -> dict:
    """The original's and the best rewrite's first case under a plain do_bench, for the record."""
    import torch
    from triton.testing import do_bench

    out = {}
    loaders = {"orig_ms": lambda: _first_case(os.path.join(ROOT, "examples", f"{name}.py"), f"do_bench_{name}_orig")}
    if best_source:
        loaders["opt_ms"] = lambda: _first_case_of_source(best_source, f"do_bench_{name}_opt")
    for key, load in loaders.items():
        fn, args = load()
        call = functools.partial(fn, *args)
        call()
        out[key] = do_bench(call, warmup=25, rep=100, return_mode="median")
        del fn, args, call
        torch.cuda.empty_cache()
    out.setdefault("opt_ms", out["orig_ms"])
    return out


def interleaved_vs_cublas(name: str, best_source: str, rounds: int = 5) -> dict:
    """The best rewrite's first case and torch.matmul on the same inputs, timed in alternating
    rounds: cuBLAS timed once at the start, on a GPU still cool from idling, runs at higher clocks
    than a candidate timed minutes later, after the config search has heated it."""
    import statistics

    import torch

    fn, args = _first_case_of_source(best_source, f"interleaved_{name}")
    a, b = args
    sides = {"cand": functools.partial(fn, *args), "cublas": functools.partial(torch.matmul, a, b)}
    for f in sides.values():
        f()
    times: dict[str, list] = {k: [] for k in sides}
    for r in range(rounds):
        for key in (("cand", "cublas") if r % 2 == 0 else ("cublas", "cand")):
            times[key].append(_timing().bench(sides[key], warmup_ms=25, rep_ms=60))
    out = {"cand_ms": statistics.median(times["cand"]), "cublas_ms": statistics.median(times["cublas"]),
           "rounds_ms": times}
    del fn, args, a, b, sides
    torch.cuda.empty_cache()
    return out


def workload(name: str):
    """(bytes moved at least once, flops, cuBLAS ms on the same inputs or None, bytes read, bytes
    written) of the first case."""
    import torch

    fn, args = _first_case(os.path.join(ROOT, "examples", f"{name}.py"), f"bench_{name}")
    out = fn(*args)
    outs = out if isinstance(out, (tuple, list)) else [out]
    read = sum(t.numel() * t.element_size() for t in args if isinstance(t, torch.Tensor))
    written = sum(t.numel() * t.element_size() for t in outs if isinstance(t, torch.Tensor))
    nbytes = read + written
    flops, cublas_ms = None, None
    if name == "matmul":
        a, b = args
        flops = 2 * a.shape[0] * a.shape[1] * b.shape[1]
        cublas_ms = _timing().bench(lambda: torch.matmul(a, b))
    del args, out, outs
    torch.cuda.empty_cache()
    return nbytes, flops, cublas_ms, read, written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--only", default="")
    ap.add_argument("--budget-s", type=float, default=420.0)
    ap.add_argument("--optimize-budget-s", type=float, default=120.0, help="one optimize's own budget (0: none)")
    ap.add_argument("--run", default="", help="label of this run, kept in each row (merged tables mix runs)")
    ap.add_argument("--merge", nargs=2, metavar=("NEW_JSON", "INTO_JSON"),
                    help="no GPU needed: replace INTO_JSON's rows by NEW_JSON's rows of the same example, "
                         "then rewrite INTO_JSON and the .md beside it")
    opts = ap.parse_args()
    if opts.merge:
        return merge(*opts.merge)
    _bootstrap()
    import torch
    import triton
    from tritonlens.profiling.worker.reports import ProfileReport
    from tritonlens.rewrite.api import OptimizeOptions, optimize_file

    if not torch.cuda.is_available():
        print("no GPU: this benchmark measures speed, it has nothing to say on a CPU", file=sys.stderr)
        return 2
    os.makedirs(opts.out, exist_ok=True)
    start = time.monotonic()
    report = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
              "torch": torch.__version__, "triton": triton.__version__, "ceilings": measure_ceilings(),
              "examples": []}
    copy_tbs = report["ceilings"]["copy_tb_s"]
    wanted = {x for x in opts.only.split(",") if x}
    for name, bound in EXAMPLES:
        if wanted and name not in wanted:
            continue
        if time.monotonic() - start > opts.budget_s:
            report["examples"].append({"example": name, "skipped": "time budget spent"})
            continue
        t0 = time.monotonic()
        entry = {"example": name, "bound": bound, "run": opts.run or report["date"]}
        try:
            nbytes, flops, cublas_ms, read, written = workload(name)
            entry.update(bytes=nbytes, bytes_read=read, bytes_written=written, flops=flops, cublas_ms=cublas_ms)
            if bound == "memory":
                entry["same_size"] = same_size_ceiling(read, written)
            options = OptimizeOptions(proposers=("rules", "config"), timing={"rounds": 5, "rep_ms": 25},
                                      job_timeout_s=400, budget_s=opts.optimize_budget_s)
            result = optimize_file(os.path.join(ROOT, "examples", f"{name}.py"), options,
                                   profile=ProfileReport(file=name),  # an empty profile: none is taken
                                   progress=lambda m, f: print(f"  [{name}] {m}", flush=True)).to_json()
        except Exception as exc:  # one example's failure must not lose the others' figures
            entry["error"] = f"{type(exc).__name__}: {exc}"
            report["examples"].append(entry)
            print(f"{name}: ERROR {entry['error']}", flush=True)
            continue
        best = result["best"]
        entry.update(baseline_ms=result["baseline_ms"], mode=result["mode"],
                     candidates=[{k: c.get(k) for k in ("proposer", "title", "accepted", "reason", "speedup",
                                                        "orig_ms", "cand_ms", "max_rel_error", "checks")}
                                 for c in result["candidates"]],
                     best=None if best is None else {k: best.get(k) for k in ("title", "speedup", "orig_ms", "cand_ms",
                                                                               "quick_fix_title", "diff")})
        orig_ms = (best or {}).get("orig_ms") or result["baseline_ms"]
        opt_ms = (best or {}).get("cand_ms") or orig_ms
        side = None
        if bound == "compute" and flops and (best or {}).get("source"):
            try:
                side = interleaved_vs_cublas(name, best["source"])
                entry.update(interleaved=side, cublas_ms_first=cublas_ms, cublas_ms=side["cublas_ms"])
                cublas_ms = side["cublas_ms"]
            except Exception as exc:  # the one-off figure stays; the failure is on record
                entry["interleaved"] = {"error": f"{type(exc).__name__}: {exc}"}
                side = None

        def pct(ms):
            if not ms:
                return None
            if bound == "compute" and flops:
                return 100.0 * (flops / (ms * 1e-3)) / (flops / (cublas_ms * 1e-3))
            return 100.0 * (nbytes / (ms * 1e-3) / 1e12) / copy_tbs

        # After: the rewrite against cuBLAS timed beside it when there is such a pair (verifier's own
        # figure otherwise); before: the verifier's original against the same cuBLAS figure.
        pct_after = 100.0 * side["cublas_ms"] / side["cand_ms"] if side else pct(opt_ms)
        entry.update(orig_ms=orig_ms, opt_ms=opt_ms, pct_before=pct(orig_ms), pct_after=pct_after,
                     versus=("copy bandwidth" if bound != "compute" else
                             "cuBLAS (torch.matmul, same inputs, timed in rounds alternating with the rewrite)" if side
                             else "cuBLAS (torch.matmul, same inputs)"),
                     seconds=round(time.monotonic() - t0, 1))
        if bound == "compute" and flops:
            entry["tflops_before"] = flops / (orig_ms * 1e-3) / 1e12
            entry["tflops_after"] = flops / (opt_ms * 1e-3) / 1e12
            entry["cublas_tflops"] = flops / (cublas_ms * 1e-3) / 1e12
        else:
            try:
                db = do_bench_record(name, (best or {}).get("source"))
                copy_db = report["ceilings"]["copy_tb_s_do_bench"]
                db.update(pct_before=100.0 * nbytes / (db["orig_ms"] * 1e-3) / 1e12 / copy_db,
                          pct_after=100.0 * nbytes / (db["opt_ms"] * 1e-3) / 1e12 / copy_db)
                entry["do_bench"] = db
            except Exception as exc:  # the record is extra: its failure loses nothing else
                entry["do_bench"] = {"error": f"{type(exc).__name__}: {exc}"}
            entry["tb_s_before"] = nbytes / (orig_ms * 1e-3) / 1e12
            entry["tb_s_after"] = nbytes / (opt_ms * 1e-3) / 1e12
            same = entry["same_size"]["ms"]
            entry["pct_same_size_before"] = 100.0 * same / orig_ms
            entry["pct_same_size_after"] = 100.0 * same / opt_ms
        report["examples"].append(entry)
        print(f"{name}: {orig_ms:.4g} ms -> {opt_ms:.4g} ms ({entry['pct_before']:.0f}% -> {entry['pct_after']:.0f}% "
              f"of {entry['versus']}) best: {(best or {}).get('title')}", flush=True)
        with open(os.path.join(opts.out, "optimize_gpu.json"), "w") as fh:
            json.dump(report, fh, indent=2, default=str)
    with open(os.path.join(opts.out, "optimize_gpu.json"), "w") as fh:
        json.dump(report, fh, indent=2, default=str)
    table = render(report)
    with open(os.path.join(opts.out, "optimize_gpu.md"), "w") as fh:
        fh.write(table)
    print(table)
    return 0


def merge(new_path: str, into_path: str) -> int:
    """Rows of a later run replace the same examples' rows of an earlier report; every row keeps
    the run it came from and that run's ceilings."""
    with open(new_path) as fh:
        new = json.load(fh)
    with open(into_path) as fh:
        into = json.load(fh)
    for report in (into, new):
        for e in report["examples"]:
            e.setdefault("run", report["date"])
            e.setdefault("run_ceilings", report["ceilings"])
            e.setdefault("run_versions", {k: report[k] for k in ("gpu", "torch", "triton")})
    fresh = {e["example"]: e for e in new["examples"] if not e.get("skipped")}
    into["examples"] = [fresh.pop(e["example"], e) for e in into["examples"]] + list(fresh.values())
    into["runs"] = sorted({e["run"] for e in into["examples"]})
    with open(into_path, "w") as fh:
        json.dump(into, fh, indent=2, default=str)
    with open(os.path.splitext(into_path)[0] + ".md", "w") as fh:
        fh.write(render(into))
    return 0


def render(report: dict) -> str:
    c = report["ceilings"]
    runs = {}
    for e in report["examples"]:
        if e.get("run") and e.get("run_ceilings"):
            runs.setdefault(e["run"], e["run_ceilings"])
    runs = dict(sorted(runs.items()))
    if len(runs) > 1:
        where = ("rows from several runs on the same GPU model, each % against the ceilings of its own run: "
                 + "; ".join(f"{run}: copy bandwidth {rc['copy_tb_s']:.2f} TB/s" for run, rc in runs.items())
                 + " (read + write).")
    else:
        where = f"measured in the same run: copy bandwidth {c['copy_tb_s']:.2f} TB/s (read + write)."
    timer = c.get("timer") or "triton.testing.do_bench, L2 flushed"
    lines = [f"# tritonlens optimize (config search + rule fixes, no LLM) on {report['gpu']}",
             "", f"{report['date']}, torch {report['torch']}, triton {report['triton']}; {where}",
             f"Times: medians of interleaved A/B rounds of the harness's first case; timer: {timer}.",
             "Last column: the same two sources under a plain triton.testing.do_bench (its flush leaves dirty L2 "
             "lines the kernel writes back), against a 1 GiB copy timed the same way.",
             "", ("| example | baseline ms | optimized ms | speedup | % of roofline before → after | vs | "
                  "% of same-size ceiling before → after | best rewrite | run | under do_bench: % of copy |"),
             "|---|---|---|---|---|---|---|---|---|---|"]
    for e in report["examples"]:
        if e.get("skipped") or e.get("error"):
            lines.append(f"| {e['example']} | – | – | – | – | – | – | {e.get('skipped') or e.get('error')} | "
                         f"{e.get('run', '')} | – |")
            continue
        speed = e["orig_ms"] / e["opt_ms"] if e.get("opt_ms") else None
        vs = e["versus"] + (f" ({e['cublas_tflops']:.0f} TFLOP/s)" if e.get("cublas_tflops") else "")
        same = (f"{e['pct_same_size_before']:.0f}% → {e['pct_same_size_after']:.0f}% of {e['same_size']['what']} "
                f"({e['same_size']['ms'] * 1e3:.1f} µs)" if e.get("same_size") else "–")
        db = e.get("do_bench") or {}
        db_cell = (f"{db['pct_before']:.0f}% → {db['pct_after']:.0f}% ({db['orig_ms'] * 1e3:.1f} → "
                   f"{db['opt_ms'] * 1e3:.1f} µs)" if "pct_before" in db else "–")
        lines.append(f"| {e['example']} | {e['orig_ms']:.4g} | {e['opt_ms']:.4g} | {speed:.2f}x | "
                     f"{e['pct_before']:.0f}% → {e['pct_after']:.0f}% | {vs} | {same} | "
                     f"{(e.get('best') or {}).get('title') or 'none accepted'} | {e.get('run', '')} | {db_cell} |")
    if report.get("notes"):
        lines += [""] + [f"- {note}" for note in report["notes"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
