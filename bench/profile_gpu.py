"""Profile every example on the GPU through tritonlens.profiling and check the timing overhead.

    python bench/profile_gpu.py [--out DIR] [--ncu] [--examples examples/a.py ...]

For each example: profile_file (local backend) with a bare `triton.testing.do_bench` of the same
replayed launch after warm-up alongside (compare_bare), so the table shows our time / bare time
(target <= 1.3x). A second pass over the same files must be served from the result cache. With
--ncu, a pass with Nsight Compute too. Prints one table and writes
<out>/profile_<date>_<gpu>.json and .txt. Works from a checkout without installing tritonlens.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import re
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _import_api():
    try:
        from tritonlens.profiling import api, cli  # installed (editable or not)
        return api, cli
    except ImportError:
        pass
    # A bare checkout (the GPU machine): map tritonlens.profiling onto profiling/ as the
    # pyproject's package-dir does.
    sys.path.insert(0, REPO)
    import tritonlens

    spec = importlib.util.spec_from_file_location(
        "tritonlens.profiling", os.path.join(REPO, "profiling", "__init__.py"),
        submodule_search_locations=[os.path.join(REPO, "profiling")])
    module = importlib.util.module_from_spec(spec)
    sys.modules["tritonlens.profiling"] = module
    spec.loader.exec_module(module)
    tritonlens.profiling = module
    from tritonlens.profiling import api, cli
    return api, cli


def scrub(obj, repo: str = REPO):
    """Results are committed: no machine paths (repo-relative files, interpreter by name)."""
    if isinstance(obj, dict):
        return {k: (os.path.basename(v) if k == "executable" and isinstance(v, str) else scrub(v, repo))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [scrub(v, repo) for v in obj]
    if isinstance(obj, str) and obj.startswith(repo + os.sep):
        return os.path.relpath(obj, repo)
    return obj


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    ap.add_argument("--ncu", action="store_true")
    ap.add_argument("--examples", nargs="*")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--budget", type=float, default=420, help="skip the remaining ncu runs after this many seconds")
    args = ap.parse_args()
    api, cli = _import_api()
    files = args.examples or sorted(glob.glob(os.path.join(REPO, "examples", "*.py")))

    runs = {}
    t0 = time.perf_counter()
    for path in files:
        t = time.perf_counter()
        result = api.profile_file(path, timeout=args.timeout, options={"compare_bare": True}).to_json()
        result["wall_s"] = round(time.perf_counter() - t, 2)
        runs[os.path.basename(path)] = result
        print(f"# {os.path.basename(path)}: {result['wall_s']} s", file=sys.stderr, flush=True)
    first_pass_s = time.perf_counter() - t0

    cached = {}
    t0 = time.perf_counter()
    for path in files:  # nothing changed: every launch must come from the cache
        again = api.profile_file(path, timeout=args.timeout, options={"compare_bare": True}).to_json()
        launches = [launch for k in again["kernels"] for launch in k["launches"]]
        cached[os.path.basename(path)] = [bool(launch.get("cached")) for launch in launches]
    second_pass_s = time.perf_counter() - t0

    ncu_runs = {}
    started = time.perf_counter() - first_pass_s - second_pass_s
    if args.ncu:
        for path in files:
            if time.perf_counter() - started > args.budget:
                print(f"# ncu {os.path.basename(path)}: skipped, over the time budget", file=sys.stderr)
                continue
            t = time.perf_counter()
            result = api.profile_file(path, ncu=True, timeout=args.timeout, options={"keep_csv": True}).to_json()
            for k in result["kernels"]:  # keep one real CSV per kernel as a parser fixture
                for launch in k["launches"]:
                    csv_text = (launch.get("ncu") or {}).pop("csv", None)
                    if csv_text:
                        with open(os.path.join(args.out, f"ncu_{k['name']}.csv"), "w") as fh:
                            fh.write(csv_text)
            result["wall_s"] = round(time.perf_counter() - t, 2)
            ncu_runs[os.path.basename(path)] = result
            print(f"# ncu {os.path.basename(path)}: {result['wall_s']} s", file=sys.stderr, flush=True)

    rows = []
    for name, result in runs.items():
        for k in result["kernels"]:
            for launch in k["launches"] or [{}]:
                bare = launch.get("bare_ms")
                ours = launch.get("time_ms")
                ratio = ours / bare if ours and bare else None
                n = None
                for kk in (ncu_runs.get(name) or {}).get("kernels", []):
                    if kk["name"] == k["name"] and kk["launches"]:
                        n = kk["launches"][0].get("ncu")
                rows.append({"file": name, "kernel": k["name"], "error": k.get("error") or launch.get("error"),
                             "time_ms": ours, "bare_ms": bare, "ratio": ratio, "gbps": launch.get("gbps"),
                             "tflops": launch.get("tflops"), "pct_of_peak": launch.get("pct_of_peak"),
                             "bound": launch.get("bound"), "registers": launch.get("registers"),
                             "spills": launch.get("spills"), "shared_bytes": launch.get("shared_bytes"),
                             "method": launch.get("timing_method"), "signature": launch.get("signature"),
                             "ncu_dram_pct": (n or {}).get("sol", {}).get("dram_pct") if n and "sol" in n else None,
                             "ncu_sm_pct": (n or {}).get("sol", {}).get("sm_pct") if n and "sol" in n else None,
                             "ncu_occupancy": ((n or {}).get("occupancy") or {}).get("achieved_pct") if n else None,
                             "ncu_limiter": ((n or {}).get("occupancy") or {}).get("limiter") if n else None,
                             "ncu_top_stall": ((n or {}).get("stalls") or [{}])[0].get("reason") if n else None,
                             "ncu_error": (n or {}).get("error") if n else None})

    any_result = next(iter(runs.values()))
    device = any_result.get("device") or {}
    gpu = device.get("name", "unknown")
    lines = [f"tritonlens profile of examples/ on {gpu} (triton {device.get('triton')}, torch {device.get('torch')}),"
             f" {time.strftime('%Y-%m-%d')}",
             f"mode: {any_result['mode']}; ceilings: {json.dumps(any_result.get('ceilings'))}",
             f"first pass {first_pass_s:.1f} s; second pass (cache) {second_pass_s:.1f} s, cached launches: "
             f"{sum(sum(v) for v in cached.values())}/{sum(len(v) for v in cached.values())}", ""]
    head = ("file", "kernel", "time", "bare", "ours/bare", "GB/s", "TFLOP/s", "%peak", "bound", "regs", "spills",
            "smem", "ncu DRAM%", "ncu SM%", "occ%", "limiter", "top stall")
    table = [head]
    for r in rows:
        table.append((r["file"], r["kernel"], cli._time(r["time_ms"]), cli._time(r["bare_ms"]),
                      cli._fmt(r["ratio"], "{:.2f}x"), cli._fmt(r["gbps"], "{:.0f}"), cli._fmt(r["tflops"], "{:.1f}"),
                      cli._fmt(r["pct_of_peak"], "{:.0f}%"), cli._fmt(r["bound"], "{}"),
                      cli._fmt(r["registers"], "{}"), cli._fmt(r["spills"], "{}"), cli._fmt(r["shared_bytes"], "{}"),
                      cli._fmt(r["ncu_dram_pct"], "{:.1f}"), cli._fmt(r["ncu_sm_pct"], "{:.1f}"),
                      cli._fmt(r["ncu_occupancy"], "{:.1f}"), cli._fmt(r["ncu_limiter"], "{}"),
                      cli._fmt(r["ncu_top_stall"], "{}")))
    widths = [max(len(str(t[i])) for t in table) for i in range(len(head))]
    for t in table:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(t, widths)).rstrip())
    for r in rows:
        if r["error"] or r["ncu_error"]:
            lines.append(f"{r['file']} {r['kernel']}: {r['error'] or ''} {r['ncu_error'] or ''}")
    ratios = [r["ratio"] for r in rows if r["ratio"]]
    if ratios:
        lines.append(f"ours/bare do_bench: max {max(ratios):.2f}x, all <= 1.3x: {all(x <= 1.3 for x in ratios)}")
    text = "\n".join(lines)
    print(text)

    os.makedirs(args.out, exist_ok=True)
    stem = f"profile_{time.strftime('%Y-%m-%d')}_{re.sub(r'[^A-Za-z0-9]+', '-', gpu).strip('-')}"
    with open(os.path.join(args.out, stem + ".json"), "w") as fh:
        json.dump(scrub({"gpu": gpu, "date": time.strftime("%Y-%m-%d"), "rows": rows, "cached": cached,
                         "first_pass_s": first_pass_s, "second_pass_s": second_pass_s,
                         "results": runs, "ncu_results": ncu_runs}), fh, indent=1, default=str)
    with open(os.path.join(args.out, stem + ".txt"), "w") as fh:
        fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
