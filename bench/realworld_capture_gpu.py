"""On a GPU host: record launches from real projects' own tests and benchmark scripts (at the sizes
they run), then profile the recorded kernel files from those records, through the CLI a user runs.

For each target kernel file of a development project (docs/judgements/capture/README.md):
  1. `tritonlens capture FILE`                  the tests that reach it (test sizes)
  2. `tritonlens capture FILE -- python SCRIPT`  the project's benchmark script, when it has one (real sizes)
  3. `tritonlens profile FILE`                  replays the largest recorded launch of each kernel and times it
and keeps what each step said: launches recorded, the cause when nothing was, and per kernel the
launch's time, bandwidth, share of the GPU's measured peak and bound class.

`--held-out` measures the capture bench's held-out set instead (bench/realworld_capture.py, the same
per-file captures, figures and causes as on the CPU), every project at once, then profiles each kernel
file that recorded from its records, one file per GPU at a time.

Run on the GPU host (bench/realworld_capture_gpu.sh ships the checkout and the projects there;
bench/pack_capture_corpus.sh packs the held-out projects):
    python bench/realworld_capture_gpu.py --corpus DIR [--out FILE] [--timeout S]
    python bench/realworld_capture_gpu.py --corpus DIR --held-out [--budget S] [--deadline S]
→ prints a table and writes JSON (default bench/results/realworld_capture_gpu.json).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

from tritonlens.profiling import (
    launch_records,  # installed: on the GPU host into a --target folder
)

# (project, kernel file, benchmark script or None): ops whose tests the capture finds, and the
# project's own benchmark for the same op where it ships one
TARGETS = [
    ("liger_kernel-0.8.5", "src/liger_kernel/ops/rms_norm.py", "benchmark/scripts/benchmark_rms_norm.py"),
    ("liger_kernel-0.8.5", "src/liger_kernel/ops/swiglu.py", "benchmark/scripts/benchmark_swiglu.py"),
    ("liger_kernel-0.8.5", "src/liger_kernel/ops/layer_norm.py", "benchmark/scripts/benchmark_layer_norm.py"),
    ("liger_kernel-0.8.5", "src/liger_kernel/ops/cross_entropy.py", "benchmark/scripts/benchmark_cross_entropy.py"),
    ("liger_kernel-0.8.5", "src/liger_kernel/ops/geglu.py", "benchmark/scripts/benchmark_geglu.py"),
    ("mamba_ssm-2.3.2.post1", "mamba_ssm/ops/triton/layernorm_gated.py", None),
    ("mamba_ssm-2.3.2.post1", "mamba_ssm/ops/triton/ssd_combined.py", None),
    ("bitsandbytes-0.42.0", "bitsandbytes/triton/quantize_rowwise.py", None),
    # the fourth held-out set's project with benchmark scripts, after its held-out report
    ("conch_triton_kernels-1.3", "conch/kernels/normalization/rms_norm.py", "benchmarks/rms_norm_benchmark.py"),
    ("conch_triton_kernels-1.3", "conch/kernels/activation/silu_and_mul.py", "benchmarks/silu_and_mul_benchmark.py"),
    ("conch_triton_kernels-1.3", "conch/kernels/embedding/rotary_embedding.py",
     "benchmarks/rotary_embedding_benchmark.py"),
    ("conch_triton_kernels-1.3", "conch/kernels/vision/bev_pool.py", "benchmarks/bev_pool_backward_benchmark.py"),
    ("conch_triton_kernels-1.3", "conch/kernels/quantization/fp8.py", "benchmarks/static_scaled_fp8_quant_benchmark.py"),
]


def _cli(args: list[str], cwd: Path, timeout: float, gpu: int | None = None) -> tuple[dict | None, str, float]:
    """Run `python -m tritonlens ARGS --format json` in `cwd` (on GPU `gpu` alone, where given): (its
    JSON or None, its stderr tail, seconds)."""
    t0 = time.perf_counter()
    env = None if gpu is None else {**os.environ, "CUDA_VISIBLE_DEVICES": str(gpu)}
    try:
        proc = subprocess.run([sys.executable, "-m", "tritonlens", *args], cwd=cwd, capture_output=True, check=False,
                              text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, f"no answer in {timeout:.0f} s", time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    try:
        return json.loads(proc.stdout), proc.stderr[-600:], seconds
    except ValueError:
        return None, (proc.stderr or proc.stdout)[-600:], seconds


def _capture_summary(data: dict | None, err: str, seconds: float) -> dict:
    if data is None:
        return {"recorded": 0, "cause": err.strip().splitlines()[-1] if err.strip() else "no output", "seconds": seconds}
    cause = data.get("cause") or {}
    return {"recorded": data["recorded"], "kernels": data["kernels"], "mode": data["mode"],
            "passed": data["passed"], "failed": data["failed"], "seconds": round(seconds, 1),
            "cause": cause.get("line") if isinstance(cause, dict) else data.get("reason")}


def _profile_summary(data: dict | None, err: str, seconds: float) -> dict:
    if data is None:
        return {"error": err.strip().splitlines()[-1] if err.strip() else "no output", "seconds": seconds}
    kernels = []
    for k in data["kernels"]:
        launches = k["launches"]
        top = max(launches, key=lambda x: x["time_ms"] or 0.0) if launches else None
        errors = sorted({launch["error"] for launch in launches if launch["error"]})
        kernels.append({"name": k["name"], "error": k["error"] or (errors[0] if errors else None),
                        "launches": len(launches), "failed_launches": sum(1 for x in launches if x["error"]),
                        # a launch with neither a time nor an error on a GPU: kept whole, to read why
                        "untimed": [x for x in launches if x["time_ms"] is None and not x["error"]
                                    and data["mode"] == "gpu"],
                        "top": None if top is None else {f: top[f] for f in (
                            "grid", "time_ms", "gbps", "tflops", "pct_of_peak", "bound", "registers", "spills")}})
    return {"mode": data["mode"], "device": data["device"], "kernels": kernels, "seconds": round(seconds, 1)}


def run(corpus: Path, timeout: float, parallel: int, projects: list[str] | None = None) -> list[dict]:
    """Captures run `parallel` at a time (they only record); profiles one at a time, alone on the
    GPU, so that no timing shares it. `projects`: only these projects' targets."""
    targets = [t for t in TARGETS if not projects or any(t[0].startswith(p) for p in projects)]
    work = Path(tempfile.mkdtemp(prefix="capture-gpu-"))
    for project in dict.fromkeys(t[0] for t in targets):
        shutil.copytree(corpus / project, work / project)
    rows = [{"project": project, "file": file} for project, file, _ in targets]
    jobs = []
    for row, (project, file, script) in zip(rows, targets):
        # each capture in its own copy: two captures must not merge into one records file at once
        jobs.append((row, "tests", project, ["capture", file, "--timeout", str(timeout), "--format", "json"]))
        if script:
            jobs.append((row, "benchmark", project, ["capture", file, "--timeout", str(timeout), "--format", "json",
                                                     "--", "python", script]))

    def one(job):
        row, step, project, args = job
        root = Path(tempfile.mkdtemp(prefix=f"{step}-", dir=work)) / project
        shutil.copytree(work / project, root)
        row[step] = _capture_summary(*_cli(args, root, timeout + 60))
        row.setdefault("records", []).append(root)

    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(one, jobs))
    for row, (project, file, _) in zip(rows, targets):
        root = work / project
        for copy in row.pop("records", []):  # both captures' records, merged as a capture merges them
            launch_records.save(root, launch_records.load(copy))
        row["profile"] = _profile_summary(*_cli(["profile", file, "--timeout", "120", "--format", "json"], root, 400))
        print(json.dumps(row), flush=True)
    return rows


def run_held_out(corpus: Path, timeout: float, budget: float, gpus: int, deadline: float) -> list[dict]:
    """The capture bench's held-out set (realworld_capture.py: each kernel file's own capture, the
    same figures and causes as on the CPU), every project at once, one GPU each in turn; then each
    kernel file that recorded is profiled from its records, one at a time per GPU, until `deadline`
    (seconds from now) leaves too little for another."""
    from realworld_capture import HELD_OUT

    ends = time.monotonic() + deadline
    work = Path(tempfile.mkdtemp(prefix="capture-gpu-heldout-"))

    def capture(item: tuple[int, str]) -> dict:
        i, name = item
        out = work / f"{name}.json"
        cmd = [sys.executable, str(REPO / "bench" / "realworld_capture.py"), "--held-out", "--projects", name,
               "--corpus", str(corpus), "--keep", str(work), "--timeout", str(timeout), "--budget", str(budget),
               "--out", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=budget + 300,
                              env={**os.environ, "CUDA_VISIBLE_DEVICES": str(i % gpus)})
        if not out.exists():
            return {"project": name, "error": (proc.stderr or proc.stdout)[-600:]}
        return json.loads(out.read_text())["projects"][0]

    with ThreadPoolExecutor(len(HELD_OUT)) as pool:
        rows = list(pool.map(capture, enumerate(HELD_OUT)))
    free: queue.Queue[int] = queue.Queue()
    for g in range(gpus):
        free.put(g)

    def profile(item: tuple[dict, dict]) -> None:
        row, entry = item
        if ends - time.monotonic() < 90:
            entry["profile"] = {"error": "not profiled: the run's time ran out"}
            return
        gpu = free.get()
        try:
            entry["profile"] = _profile_summary(*_cli(["profile", entry["file"], "--timeout", "60", "--format", "json"],
                                                      work / row["project"], 75, gpu))
        finally:
            free.put(gpu)

    jobs = [(row, entry) for row in rows for entry in row.get("files", []) if entry["recorded"]]
    with ThreadPoolExecutor(gpus) as pool:
        list(pool.map(profile, jobs))
    for row in rows:
        print(json.dumps(row), flush=True)
    return rows


def held_out_table(rows: list[dict]) -> str:
    out = [f"{'project / file':60} {'recorded':>8} {'kernel':32} {'time ms':>9} {'GB/s':>8} {'% peak':>7}  bound"]
    for r in rows:
        out.append(f"{r['project']:60} {r.get('recorded', 0)}/{r.get('test_reached', 0)} of {r.get('kernels', 0)}")
        for entry in r.get("files", []):
            prof = entry.get("profile") or {}
            kernels = prof.get("kernels") or [{"name": (prof.get("error") or "-")[:60], "top": None}]
            for i, k in enumerate(kernels):
                top = k["top"] or {}
                head = f"  {entry['file'][-58:]:58} {len(entry['recorded']):>8}" if i == 0 else " " * 69
                out.append(f"{head} {k['name'][:32]:32} {_num(top.get('time_ms'), 4):>9} {_num(top.get('gbps'), 0):>8} "
                           f"{_num(top.get('pct_of_peak'), 1):>7}  {top.get('bound') or (k.get('error') or '')[:60]}")
        for c in r.get("causes", []):
            out.append(f"    [{c['kind']}] {c['line'][:200]}")
    return "\n".join(out)


def _num(value, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(rows: list[dict]) -> str:
    out = [f"{'file':52} {'tests':>6} {'bench':>6} {'kernel':32} {'time ms':>9} {'GB/s':>8} {'% peak':>7}  bound"]
    for r in rows:
        bench = r.get("benchmark", {}).get("recorded", "-")
        kernels = r["profile"].get("kernels") or [{"name": r["profile"].get("error", "?")[:32], "top": None}]
        for i, k in enumerate(kernels):
            top = k["top"] or {}
            head = (f"{r['project'].split('-')[0] + '/' + Path(r['file']).name:52} {r['tests']['recorded']:>6} {bench!s:>6}"
                    if i == 0 else " " * 66)
            out.append(f"{head} {k['name'][:32]:32} {_num(top.get('time_ms'), 4):>9} {_num(top.get('gbps'), 0):>8} "
                       f"{_num(top.get('pct_of_peak'), 1):>7}  {top.get('bound') or (k.get('error') or '')[:60]}")
        for step in ("tests", "benchmark"):
            if step in r and not r[step]["recorded"]:
                out.append(f"    {step}: {r[step]['cause']}")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="folder holding the projects (their .py files suffice)")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds per capture (default 90)")
    ap.add_argument("--parallel", type=int, default=4, help="captures at a time (default 4)")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "realworld_capture_gpu.json"))
    ap.add_argument("--held-out", action="store_true",
                    help="the capture bench's held-out set instead (run once, to report): its per-file captures, "
                         "then a profile of each file that recorded")
    ap.add_argument("--projects", help="comma-separated: only these projects' targets")
    ap.add_argument("--budget", type=float, default=240.0, help="--held-out: seconds for a project's captures")
    ap.add_argument("--deadline", type=float, default=480.0, help="--held-out: seconds for the whole run")
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("realworld_capture_gpu: no GPU here; this bench records and times on a GPU host", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    if args.held_out:
        rows = run_held_out(Path(args.corpus), args.timeout, args.budget, torch.cuda.device_count(), args.deadline)
        print(held_out_table(rows))
    else:
        rows = run(Path(args.corpus), args.timeout, args.parallel,
                   args.projects.split(",") if args.projects else None)
        print(table(rows))
    result = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "triton": __import__("triton").__version__, "seconds": round(time.perf_counter() - t0, 1), "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    # the host's interpreter path says nothing about the projects: PYTHON, as the CPU bench writes it
    Path(args.out).write_text(json.dumps(result, indent=2).replace(sys.executable, "PYTHON") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
