"""Start-up of `tritonlens check` as a pre-commit hook runs it: a whole process on one file, beside
`ruff check` on the same file (hyperfine's method in Python: warm-up runs, then timed runs of the
whole process, mean ± standard deviation, min and median).

Files: an empty one (nothing to analyze: the cost is the process and its imports) and one kernel
file from examples/ (the analyzer's imports plus one analysis).
Targets: empty file ≤ 150 ms, and within 5x of ruff on it. `python -c pass` is shown as the floor:
no Python command starts faster than its interpreter.
Run: python bench/cli_startup.py  → prints a table, writes bench/results/cli_startup.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
KERNEL_FILE = REPO / "examples" / "vector_add.py"


def _tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def time_runs(argv: list[str], warmup: int, runs: int) -> dict:
    for _ in range(warmup):
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - t) * 1e3)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return {"mean": round(statistics.fmean(times), 1), "sd": round(statistics.stdev(times), 1),
            "min": round(min(times), 1), "median": round(statistics.median(times), 1), "runs": runs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out", default=str(RESULTS / "cli_startup.json"))
    args = ap.parse_args()
    tritonlens, ruff = _tool("tritonlens"), _tool("ruff")
    if tritonlens is None:
        raise SystemExit("tritonlens is not installed beside this interpreter")
    load_before = os.getloadavg()[0]
    rows: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as d:
        empty = Path(d) / "empty.py"
        empty.write_text("")
        kernel = Path(d) / KERNEL_FILE.name
        kernel.write_text(KERNEL_FILE.read_text())
        for label, path in (("empty file", empty), (f"{KERNEL_FILE.name}", kernel)):
            rows[f"tritonlens check, {label}"] = time_runs([tritonlens, "check", str(path)], args.warmup, args.runs)
            if ruff is not None:
                rows[f"ruff check, {label}"] = time_runs([ruff, "check", "--no-cache", "--quiet", str(path)],
                                                         args.warmup, args.runs)
    # The floor under any Python command: the interpreter and its site-packages (.pth files) alone.
    rows["python -c pass (the interpreter alone)"] = time_runs([sys.executable, "-c", "pass"], args.warmup, args.runs)
    ours, theirs = rows["tritonlens check, empty file"], rows.get("ruff check, empty file")
    ratio = round(ours["mean"] / theirs["mean"], 1) if theirs else None
    out = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "rows": rows,
        "empty_vs_ruff": ratio,
        "targets": {"empty_ms": 150, "vs_ruff": 5},
        "meets_targets": {"empty": ours["mean"] <= 150, "vs_ruff": ratio is not None and ratio <= 5},
    }
    print(f"whole-process start-up, {args.runs} runs after {args.warmup} warm-up; load {out['load_average']}")
    print(f"{'command':<40} {'mean ± sd ms':>16} {'min':>7} {'median':>7}")
    for name, r in rows.items():
        print(f"{name:<40} {r['mean']:>9.1f} ± {r['sd']:<5.1f} {r['min']:>7.1f} {r['median']:>7.1f}")
    print(f"empty file: tritonlens / ruff = {ratio}x; targets met: {out['meets_targets']}")
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
