"""Analysis latency through the language server's own path, while typing into a 2,100-line file
of 64 kernels (bench/gen_kernels.py `typing_file`).

Each analysis goes through `AnalysisService.analyze` (the analysis thread, the engine's per-document
incremental parse and per-kernel cache), exactly as a didChange does, minus the debounce and the
publishing. For each kind of edit the file is edited again and again (each version new, as typing
makes them, so no earlier version's results are served back) and the time and the number of kernels
whose rules ran are recorded:

- a launch constant changed in a mid-file wrapper;
- a newline inside the 3rd-last kernel;
- a top-level comment above a mid-file kernel;
- a new import;
- a line inserted above the first kernel.

Cold (the first analysis after open) is reported too; its target is on the LSP (bench/lsp_latency.py).
Run: python bench/analysis_latency.py  → prints a table, writes bench/results/analysis_latency.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gen_kernels import TYPING_KERNELS, typing_file
from tritonlens.server.config import Settings
from tritonlens.server.documents import Snapshot
from tritonlens.server.state import AnalysisService

RESULTS = Path(__file__).parent / "results"
URI = "file:///bench/kernels_2100.py"


def _insert_after(text: str, anchor: str, new: str, occurrence_of: str | None = None) -> str:
    """`text` with `new` inserted after the first `anchor` that follows `occurrence_of`."""
    start = text.index(occurrence_of) if occurrence_of else 0
    at = text.index(anchor, start) + len(anchor)
    return text[:at] + new + text[at:]


def _insert_before(text: str, anchor: str, new: str) -> str:
    at = text.index(anchor)
    return text[:at] + new + text[at:]


MID = TYPING_KERNELS // 2  # an elementwise kernel (index % 4 == 0) in the middle of the file
THIRD_LAST = TYPING_KERNELS - 3


def edits() -> dict:
    """Edit kind → function (text, round) → the next text; each round's text is new."""
    return {
        "launch constant": lambda t, r: t.replace(
            f"def scale_add_{MID}_launch(x, y, alpha):\n    out = torch.empty_like(x)\n    n_elements = out.numel()\n"
            f"    BLOCK_SIZE = {64 + r}\n",
            f"def scale_add_{MID}_launch(x, y, alpha):\n    out = torch.empty_like(x)\n    n_elements = out.numel()\n"
            f"    BLOCK_SIZE = {64 + r + 1}\n", 1),
        "newline inside the 3rd-last kernel": lambda t, r: _insert_after(t, "pid = tl.program_id(0)\n", "\n",
                                                                        f"def softmax_{THIRD_LAST}(" if THIRD_LAST % 4 == 2
                                                                        else f"def matmul_{THIRD_LAST}("),
        "top-level comment": lambda t, r: _insert_before(t, f"@triton.jit\ndef scale_add_{MID}(", f"# note {r}\n"),
        "new import": lambda t, r: _insert_after(t, "import triton.language as tl\n", f"import helpers_{r}\n"),
        "line above the first kernel": lambda t, r: _insert_before(t, "@triton.jit", "\n"),
    }


async def run_kind(edit, text: str, rounds: int) -> dict:
    service = AnalysisService()
    settings = Settings()
    version = 1
    t = time.perf_counter()
    cold_result = await service.analyze(Snapshot(URI, version, text), settings)
    cold_ms = (time.perf_counter() - t) * 1e3
    times, cpu, counts = [], [], []
    for r in range(rounds):
        new = edit(text, r)
        assert new != text, "the edit did not apply"
        text = new
        version += 1
        # The analysis thread's CPU time as well: on a shared, loaded machine the wall time
        # also measures the neighbours.
        c = await service.run(time.thread_time)
        t = time.perf_counter()
        result = await service.analyze(Snapshot(URI, version, text), settings)
        times.append((time.perf_counter() - t) * 1e3)
        cpu.append((await service.run(time.thread_time) - c) * 1e3)
        counts.append(len(result.reanalyzed))
    service.shutdown()
    return {"cold_ms": cold_ms, "findings": len(cold_result.findings), "times": times, "cpu": cpu, "counts": counts}


def p95(xs: list[float]) -> float:
    return sorted(xs)[round(0.95 * (len(xs) - 1))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20, help="edits per kind (default 20)")
    ap.add_argument("--out", default=str(RESULTS / "analysis_latency.json"))
    args = ap.parse_args()
    text = typing_file()
    load_before = os.getloadavg()[0]
    rows = {}
    colds = []
    findings = 0
    for name, edit in edits().items():
        got = asyncio.run(run_kind(edit, text, args.rounds))
        colds.append(got["cold_ms"])
        findings = got["findings"]
        rows[name] = {
            "median_ms": round(statistics.median(got["times"]), 2), "p95_ms": round(p95(got["times"]), 2),
            "cpu_median_ms": round(statistics.median(got["cpu"]), 2),
            "kernels_reanalyzed": {"median": statistics.median(got["counts"]), "max": max(got["counts"])},
        }
    out = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "path": "server AnalysisService.analyze (analysis thread, per-document incremental engine)",
        "lines": text.count("\n") + 1, "kernels": TYPING_KERNELS, "findings": findings, "rounds": args.rounds,
        "cold_ms": {"median": round(statistics.median(colds), 1), "max": round(max(colds), 1)},
        "edits": rows,
    }
    print(f"analysis through the server's path: {out['lines']} lines, {TYPING_KERNELS} kernels, {findings} findings, "
          f"{args.rounds} edits of each kind; load {out['load_average']}")
    print(f"{'edit':<36} {'median ms':>10} {'p95 ms':>8} {'cpu ms':>8} {'kernels re-analysed':>20}")
    for name, row in rows.items():
        k = row["kernels_reanalyzed"]
        print(f"{name:<36} {row['median_ms']:>10.2f} {row['p95_ms']:>8.2f} {row['cpu_median_ms']:>8.2f} "
              f"{k['median']:>13g} (max {k['max']})")
    print(f"{'cold (first analysis after open)':<36} {out['cold_ms']['median']:>10.1f}")
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
