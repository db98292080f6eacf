#!/usr/bin/env python3
"""tritonlens optimize (config search + rule fixes, no LLM) on the held-out TritonBench-G files and
on the development set, at benchmark size, on a GPU.

Sets: `--set heldout` (bench/heldout_set.py: 24 TritonBench-G files, harnesses generated from each
file's own perf script by bench/tritonbench_harness.py), `--set dev` (liger-kernel's ops at
Llama-3-8B sizes, bench/dev_harnesses/liger_ops.py), `--stems a,b` (TritonBench-G stems given by
name), `--only a,b` (a subset of the set). `--shard i/n` takes every n-th item from the i-th.

Per kernel file:
1. its harness (a stem the adapter cannot handle is a row "no harness: <reason>");
2. the original timed on the performance case under the product's timer
   (profiling/worker/timing.py) and placed against the GPU's ceilings measured in the same run: a
   1 GiB copy, and torch.matmul at 8192^3 in the dtype of its inputs for files that use tl.dot.
   Bytes: the sum of the case's tensor arguments and returned tensors (an estimate of the fewest it
   must move); FLOPs: the perf script's own get_tflops (TritonBench-G files using tl.dot only);
   % of roofline = the roofline time of those bytes and FLOPs over the measured time;
3. optimize_file(..., proposers=("config", "rules"), harness=...) under its budget (--budget-s),
   timed; an OptimizeError (an original it cannot verify) is a refusal, any other a crash;
4. independently of the product's figures: original and accepted best on the full performance
   input, outputs compared (the original run twice: a kernel that differs from itself is not
   judged), then timed in --rounds interleaved rounds under the product's timer and do_bench.
   A best whose outputs differ from the original's beyond the tolerance is a wrong accept.

Each kernel runs in a process of its own (a kernel that faults the GPU leaves the CUDA context
unusable: in one process it cost every later kernel of its shard). One JSON per shard in --out; `--merge A.json B.json ...` prints and writes the table and summary
(bench/optimize_heldout_report.py). Runs from a bare checkout on the GPU host (the checkout is
imported as bench/optimize_gpu.py does); the corpus comes from TRITONLENS_CORPUS (.corpus/ after
bench/pack_corpus.sh).

    CUDA_VISIBLE_DEVICES=0 python bench/optimize_heldout.py --set heldout --shard 0/4 --out /tmp/o
    python bench/optimize_heldout.py --merge /tmp/o/*.json --results bench/results
    python bench/optimize_heldout.py --cpu-smoke --stems add_value,kldiv_ops   # interpreter
    python bench/optimize_heldout.py --cpu-smoke --set dev --only softmax
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "dev_harnesses"))

import liger_ops
import optimize_heldout_report as report_mod
import realworld_style_support as rw
import tritonbench_harness as tb
from optimize_gpu import _bootstrap, _timing, measure_ceilings
from optimize_heldout_check import compare, counterpart, load_best

DEV_FILE = os.path.join(HERE, "dev_harnesses", "liger_ops.py")


def items(opts) -> list[dict]:
    """The kernel files to run, in a fixed order, this shard's share."""
    if opts.stems:
        chosen = [{"name": s, "set": "tritonbench"} for s in opts.stems.split(",") if s]
    else:
        chosen = []
        for name in opts.set.split(","):
            if name == "dev":
                chosen += [{"name": n, "set": "dev"} for n in liger_ops.KERNELS]
            elif name == "heldout":
                chosen += [{"name": s, "set": "heldout"} for s in held_out()]
            else:
                raise SystemExit(f"--set: heldout, dev or both (heldout,dev), got {name!r}")
    only = {x for x in opts.only.split(",") if x}
    chosen = [c for c in chosen if not only or c["name"] in only]
    i, n = (int(x) for x in opts.shard.split("/"))
    return chosen[i::n]


def held_out() -> list[str]:
    """The held-out stems: from the list bench/pack_corpus.sh wrote beside a packed corpus (it may
    hold other stems too), else drawn from the full corpus as bench/heldout_set.py does."""
    listed = os.path.join(os.environ.get("TRITONLENS_CORPUS", ""), "heldout.txt")
    if os.environ.get("TRITONLENS_CORPUS") and os.path.isfile(listed):
        with open(listed) as fh:
            return [line.strip() for line in fh if line.strip()]
    import heldout_set

    return heldout_set.drawn()


def tb_root():
    from pathlib import Path

    return Path(tb.tritonbench_root())


def prepare(item: dict, work: str, cpu: bool) -> dict:
    """Kernel file and harness spec; for a TritonBench-G stem, its chosen inputs too."""
    if item["set"] == "dev":
        return {"kernel": liger_ops.kernel_file(item["name"]), "harness": f"{DEV_FILE}::{item['name']}"}
    if cpu:
        tb.KERNEL_DIR = os.path.join(work, "kernels")
        tb.stripped_copy(item["name"], tb.KERNEL_DIR)
    chosen = tb.choose(item["name"], cpu=cpu)
    tb.INPUT_CACHE = os.path.join(work, "inputs")  # load_cases builds them once, here; the workers load them
    return {"kernel": tb.kernel_path(item["name"]), "choose": chosen,
            "harness": tb.write_harness(item["name"], work, chosen["perf_index"], chosen["check"], cpu=cpu)}


def load_cases(item: dict, prep: dict, cpu: bool) -> list:
    if item["set"] == "dev":
        cases = getattr(liger_ops, item["name"])()
    else:
        c = prep["choose"]
        cases = tb.cases(item["name"], c["perf_index"], c["check"], cpu=cpu)
    return [(c[0], tuple(c[1]), dict(c[2]) if len(c) > 2 else {}) for c in cases]


def run_optimize(name: str, kernel: str, harness: str, timeout: float, budget_s: float) -> dict:
    """optimize_file under its own budget; an OptimizeError is a refusal, any other exception a crash."""
    from tritonlens.rewrite.api import OptimizeError, OptimizeOptions, optimize_file

    options = OptimizeOptions(proposers=("config", "rules"), harness=harness, job_timeout_s=timeout,
                              budget_s=budget_s)
    t0 = time.monotonic()
    timeline: list[str] = []  # where the budget went, read from the progress messages

    def progress(message, _fraction):
        timeline.append(f"{time.monotonic() - t0:6.1f} s {message}"[:300])
        print(f"  [{name}] {message}", flush=True)

    try:
        result = optimize_file(kernel, options, progress=progress).to_json()
    except OptimizeError as exc:  # the product's own refusal (an original it cannot verify), said in a line
        return {"seconds": round(time.monotonic() - t0, 1), "budget": "budget_s", "crash": None,
                "refused": str(exc)[:2000], "timeline": timeline}
    except Exception as exc:  # noqa: BLE001 - a crash is a result here, not the end of the run
        return {"seconds": round(time.monotonic() - t0, 1), "budget": "budget_s",
                "crash": f"{type(exc).__name__}: {exc}"[:2000]}
    best = result.get("best")
    cands = result.get("candidates") or []
    return {"seconds": round(time.monotonic() - t0, 1), "budget": "budget_s", "crash": None,
            "notes": result.get("notes") or [],
            "mode": result.get("mode"), "baseline_ms": result.get("baseline_ms"), "proposed": len(cands),
            "accepted": sum(1 for c in cands if c.get("accepted")),
            "refusals": [f"{c.get('title')}: {c.get('reason')}" for c in cands if not c.get("accepted")][:12],
            "tried": [c.get("title") for c in cands],
            "best": None if best is None else {k: best.get(k) for k in ("title", "proposer", "speedup", "orig_ms",
                                                                         "cand_ms", "diff")},
            "best_source": None if best is None else best.get("source"),
            "time_line": result.get("time_line"), "timeline": timeline}


def matmul_ceiling(dtype) -> dict:
    """torch.matmul at 8192^3 under the product's timer, in fp16 for half inputs, tf32 for fp32."""
    import torch

    dt = dtype if dtype in (torch.float16, torch.bfloat16) else torch.float16
    tf32 = dtype == torch.float32
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.float32 if tf32 else dt)
    b = torch.randn_like(a)
    ms = _timing().bench(functools.partial(torch.matmul, a, b))
    torch.backends.cuda.matmul.allow_tf32 = old
    del a, b
    torch.cuda.empty_cache()
    return {"tflops": 2 * 8192**3 / (ms * 1e-3) / 1e12, "dtype": "tf32" if tf32 else str(dt).split(".")[-1]}


def roofline(item, prep, case, ms: float, ceilings: dict) -> dict:
    """% of roofline of the original on the performance case (see the module docstring)."""
    import torch

    fn, args, kwargs = case
    out = fn(*args, **kwargs)
    seen = {id(t) for t in tb.tensors((args, kwargs))}
    moved = tb.nbytes((args, kwargs)) + sum(t.numel() * t.element_size() for t in tb.tensors(out) if id(t) not in seen)
    fig = {"ms": ms, "bytes": moved, "bytes_note": "sum of tensor arguments and returned tensors (estimate)"}
    ideal = moved / (ceilings["copy_tb_s"] * 1e12)
    with open(prep["kernel"], encoding="utf-8", errors="replace") as fh:
        dot = "tl.dot" in fh.read()
    if dot and item["set"] != "dev":
        try:
            _kmod, obj = tb.load(item["name"])
            inp = tb.inputs(obj, keep=[prep["choose"]["perf_index"]])[prep["choose"]["perf_index"]]
            flops = float(obj.get_tflops(inp, ms)) * 1e12 * ms * 1e-3
            floats = [t for t in tb.tensors((args, kwargs)) if t.dtype.is_floating_point]
            dtype = max(floats, key=lambda t: t.numel()).dtype if floats else torch.float16
            key = f"matmul_{dtype}"
            if key not in ceilings:
                ceilings[key] = matmul_ceiling(dtype)
            fig.update(flops=flops, matmul=ceilings[key])
            ideal = max(ideal, flops / (ceilings[key]["tflops"] * 1e12))
        except Exception as exc:  # noqa: BLE001 - no FLOPs: bytes only
            fig["flops_error"] = f"{type(exc).__name__}: {exc}"[:300]
    fig["pct"] = 100.0 * ideal / (ms * 1e-3)
    fig["below40"] = fig["pct"] < report_mod.SLOW_START_PCT
    return fig


def retime(case, best_fn, rounds: int) -> dict:
    from triton.testing import do_bench

    fn, args, kwargs = case
    sides = {"original": functools.partial(fn, *args, **kwargs)}
    if best_fn is not None:
        sides["best"] = functools.partial(best_fn, *args, **kwargs)
    bench = _timing().bench
    timers = {"product": lambda f: bench(f, warmup_ms=25, rep_ms=60),
              "do_bench": lambda f: do_bench(f, warmup=25, rep=60, return_mode="median")}
    both = rw.interleaved({(k, t): functools.partial(timers[t], f) for k, f in sides.items() for t in timers},
                          lambda call: call(), rounds)
    res = {}
    for t in timers:
        fig = {k: dict(both[(k, t)]) for k in sides}
        fig["speedup"] = fig["original"]["ms"] / fig["best"]["ms"] if "best" in fig else 1.0
        res[t] = fig
    return res


def run_item(item: dict, opts, ceilings: dict) -> dict:
    import torch

    entry = {"kernel": item["name"], "set": item["set"]}
    try:
        prep = prepare(item, opts.work, cpu=False)
    except tb.NoHarness as exc:
        entry["no_harness"] = str(exc)
        return entry
    except Exception as exc:  # noqa: BLE001
        entry["no_harness"] = f"{type(exc).__name__}: {exc}"[:1000]
        return entry
    entry["harness"], entry["choose"] = prep["harness"], prep.get("choose")
    try:
        case = load_cases(item, prep, cpu=False)[0]
        case[0](*case[1], **case[2])
        entry["roofline"] = roofline(item, prep, case, _timing().bench(
            functools.partial(case[0], *case[1], **case[2])), ceilings)
    except Exception as exc:  # noqa: BLE001
        entry["roofline_error"] = f"{type(exc).__name__}: {exc}"[:1000]
    case = None
    torch.cuda.empty_cache()
    entry["optimize"] = run_optimize(item["name"], prep["kernel"], prep["harness"], opts.timeout, opts.budget_s)
    source = entry["optimize"].pop("best_source", None)
    try:
        case = load_cases(item, prep, cpu=False)[0]
        best_fn = counterpart(case[0], load_best(source, prep["kernel"], item["name"]), prep["kernel"]) \
            if source else None
        entry["outputs"] = compare(case, best_fn, prep["kernel"])
        entry["timed"] = retime(case, best_fn, opts.rounds)
    except Exception as exc:  # noqa: BLE001 - the optimize figures stay on record
        entry["error"] = f"{type(exc).__name__}: {exc}"[:1000]
    case = best_fn = None
    torch.cuda.empty_cache()
    return entry


def gpu(opts) -> int:
    _bootstrap()
    import torch
    import triton

    if not torch.cuda.is_available():
        print("no GPU: use --cpu-smoke", file=sys.stderr)
        return 2
    start = time.monotonic()
    todo = items(opts)
    rep = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "torch": torch.__version__, "triton": triton.__version__, "shard": opts.shard,
           "set": "stems" if opts.stems else opts.set, "budget_s": opts.budget_s, "rounds": opts.rounds,
           "product_timer": _timing().METHOD, "ceilings": measure_ceilings(), "kernels": []}
    os.makedirs(opts.out, exist_ok=True)
    out = os.path.join(opts.out, f"optimize_heldout_{rep['set'].replace(',', '+')}_{opts.shard.replace('/', 'of')}.json")
    for item in todo:
        if time.monotonic() - start + opts.budget_s + 60 > opts.deadline_s:
            rep["kernels"].append({"kernel": item["name"], "set": item["set"], "skipped": "deadline"})
            continue
        print(f"== {item['name']}", flush=True)
        entry = run_isolated(item, opts, rep["ceilings"], opts.deadline_s - (time.monotonic() - start))
        rep["kernels"].append(entry)
        print(report_mod.row(entry), flush=True)
        _write(rep, out)
    _write(rep, out)
    print(f"wrote {out}")
    return 0


def run_isolated(item: dict, opts, ceilings: dict, left_s: float) -> dict:
    """run_item in a process of its own: a kernel that faults (an illegal address is sticky for the
    CUDA context) costs its own row only, not every later kernel of the shard."""
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        job = os.path.join(tmp, "item.json")
        with open(job, "w") as fh:
            json.dump({"item": item, "ceilings": ceilings}, fh)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", job, "--budget-s", str(opts.budget_s),
               "--rounds", str(opts.rounds), "--timeout", str(opts.timeout), "--work", opts.work]
        try:
            done = subprocess.run(cmd, timeout=max(60.0, left_s), stderr=subprocess.PIPE, text=True, check=False)
        except subprocess.TimeoutExpired:
            return {"kernel": item["name"], "set": item["set"], "skipped": "deadline"}
        try:
            with open(job + ".out") as fh:
                return json.load(fh)
        except (OSError, ValueError):
            last = (done.stderr or "").strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
            return {"kernel": item["name"], "set": item["set"], "error": f"the item's process died: {last[0]}"[:1000]}


def child(opts) -> int:
    """One item (--child JOB.json, written by run_isolated); its entry goes to JOB.json.out."""
    _bootstrap()
    with open(opts.child) as fh:
        job = json.load(fh)
    item = job["item"]
    try:
        entry = run_item(item, opts, job["ceilings"])
    except Exception as exc:  # noqa: BLE001 - the bench goes on
        entry = {"kernel": item["name"], "set": item["set"], "error": f"{type(exc).__name__}: {exc}"[:1000]}
    with open(opts.child + ".out", "w") as fh:
        json.dump(entry, fh, indent=2, default=str)
    return 0


def _write(rep: dict, out: str) -> None:
    with open(out + ".part", "w") as fh:
        json.dump(rep, fh, indent=2, default=str)
    os.replace(out + ".part", out)  # a shard killed at its deadline leaves the last whole file


def cpu_smoke(opts) -> int:
    """The same flow in the interpreter on the small inputs: harness, optimize, then the best
    against the original on every case. No timing. Refuses held-out stems."""
    os.environ["TRITON_INTERPRET"] = "1"
    _bootstrap()
    todo = items(opts)
    if any(i["set"] != "dev" for i in todo):
        held = set(held_out()) & {i["name"] for i in todo}
        if held:
            print(f"refused: held-out stems are run on the GPU only ({len(held)} asked for)", file=sys.stderr)
            return 2
    bad = 0
    for item in todo:
        try:
            prep = prepare(item, opts.work, cpu=True)
        except tb.NoHarness as exc:
            print(f"{item['name']}: no harness: {exc}")
            continue
        o = run_optimize(item["name"], prep["kernel"], prep["harness"], opts.timeout, opts.budget_s)
        source = o.pop("best_source", None)
        try:
            cases = load_cases(item, prep, cpu=True)
            best = load_best(source, prep["kernel"], item["name"]) if source else None
            res = [compare(c, counterpart(c[0], best, prep["kernel"]) if best else None, prep["kernel"])
                   for c in cases]
            wrong = any(r.get("wrong_accept") for r in res)
            detail = f"modes ok, best vs orig {[r.get('best_vs_orig') for r in res]}"
        except Exception as exc:  # noqa: BLE001
            wrong, detail = True, f"compare failed: {type(exc).__name__}: {exc}"
        bad += bool(o.get("crash")) or wrong
        print(f"{item['name']}: optimize {o['seconds']} s ({o['budget']}), crash {o.get('crash')}, accepted "
              f"{o.get('accepted')}/{o.get('proposed')}, best {(o.get('best') or {}).get('title')}, {detail}"
              f"{' WRONG' if wrong else ''}", flush=True)
        for refusal in o.get("refusals") or []:
            print(f"  refused: {refusal[:300]}", flush=True)
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="heldout", help="heldout, dev, or both in the order given (heldout,dev)")
    ap.add_argument("--stems", default="", help="TritonBench-G stems instead of a set")
    ap.add_argument("--only", default="")
    ap.add_argument("--shard", default="0/1", help="i/n: this process takes items i, i+n, ...")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=120.0, help="optimize's whole-run budget per kernel")
    ap.add_argument("--deadline-s", type=float, default=1e9,
                    help="start no kernel that could end after this many seconds from the start")
    ap.add_argument("--timeout", type=float, default=300.0, help="the verifier's worker timeout")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "tritonlens-heldout"))
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "tritonlens-heldout-harnesses"),
                    help="where generated harness files go (outside the repository)")
    ap.add_argument("--merge", nargs="+", help="shard JSON files: print and write the merged table")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # one item in a process of its own (run_isolated)
    ap.add_argument("--results", default=os.path.join(os.path.dirname(HERE), "bench", "results"))
    ap.add_argument("--cpu-smoke", action="store_true", help="interpreter, small inputs, correctness only")
    opts = ap.parse_args()
    if opts.merge:
        return report_mod.merge(opts.merge, opts.results)
    if opts.child:
        return child(opts)
    return cpu_smoke(opts) if opts.cpu_smoke else gpu(opts)


if __name__ == "__main__":
    sys.exit(main())
