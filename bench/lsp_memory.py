"""Resident memory of one editor window's language server: the server process plus the worker
processes it starts, through a real stdio client.

Phases:
- started: after initialize/initialized, nothing open (the workers the server starts on its own).
- opened: after opening every file of examples/ and waiting until the process tree is quiet
  (its compiles and confirmations done).
- idle: after waiting past the workers' idle limit (TRITONLENS_WORKER_IDLE_S, set short here),
  with the files still open.

RSS is read from /proc (VmRSS); a worker is any descendant of the server. Linux only.
Run: python bench/lsp_memory.py [--idle-s 20]  → prints a table, writes bench/results/lsp_memory.json
`--label before` with PYTHONPATH pointing at an older tree measures that tree instead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lsp_wire import WireClient

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results"
TICK = os.sysconf("SC_CLK_TCK")


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        out.setdefault(ppid, []).append(int(entry))
    return out


def _descendants(pid: int) -> list[int]:
    kids, todo, out = _children(), [pid], []
    while todo:
        for child in kids.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _cpu_s(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def snapshot(server: int, phase: str) -> dict:
    workers = [p for p in _descendants(server) if _rss_mb(p) > 0]
    server_mb = _rss_mb(server)
    worker_mb = [round(_rss_mb(p), 1) for p in workers]
    return {"phase": phase, "server_mb": round(server_mb, 1), "workers": len(workers), "worker_mb": worker_mb,
            "total_mb": round(server_mb + sum(worker_mb), 1)}


async def wait_quiet(server: int, quiet_s: float = 4.0, limit_s: float = 300.0) -> float:
    """Waits until the server's tree used under 5% of a core for `quiet_s`; returns the wait."""
    t0 = time.monotonic()
    last = _cpu_s([server, *_descendants(server)])
    calm_since = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        await asyncio.sleep(1.0)
        now = _cpu_s([server, *_descendants(server)])
        if now - last > 0.05:
            calm_since = time.monotonic()
        last = now
        if time.monotonic() - calm_since >= quiet_s:
            break
    return time.monotonic() - t0


async def measure(idle_s: float) -> list[dict]:
    work = Path(tempfile.mkdtemp(prefix="tritonlens-memory-"))
    try:
        for f in sorted((ROOT / "examples").glob("*.py")):
            shutil.copy(f, work / f.name)
        os.environ["TRITONLENS_WORKER_IDLE_S"] = str(idle_s)
        client = WireClient()
        caps = {"textDocument": {"publishDiagnostics": {"versionSupport": True}},
                "workspace": {"configuration": True}}
        await client.spawn([sys.executable, "-m", "tritonlens", "serve"], work, caps, {})
        rows = []
        await wait_quiet(client.pid)
        rows.append(snapshot(client.pid, "started"))
        for f in sorted(work.glob("*.py")):
            client.notify("textDocument/didOpen", {"textDocument": {
                "uri": f.as_uri(), "languageId": "python", "version": 1, "text": f.read_text()}})
        await asyncio.sleep(2.0)  # the debounce before the compile
        waited = await wait_quiet(client.pid)
        rows.append(snapshot(client.pid, "opened") | {"waited_s": round(waited, 1)})
        await asyncio.sleep(idle_s + 8)  # the idle limit, and the reaper's and the exit's own time
        rows.append(snapshot(client.pid, f"idle {idle_s:g} s"))
        await client.stop()
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle-s", type=float, default=20.0, help="the workers' idle limit for this run")
    ap.add_argument("--label", default="after", help="the name of this measurement in the results file")
    args = ap.parse_args()
    rows = asyncio.run(measure(args.idle_s))
    print(f"{'phase':<14}{'server MB':>10}{'workers':>9}{'worker MB':>22}{'total MB':>10}")
    for r in rows:
        print(f"{r['phase']:<14}{r['server_mb']:>10.0f}{r['workers']:>9}{r['worker_mb']!s:>22}{r['total_mb']:>10.0f}")
    out = RESULTS / "lsp_memory.json"
    data = json.loads(out.read_text()) if out.exists() else {}
    data[args.label] = {"date": str(date.today()), "python": platform.python_version(), "machine": platform.machine(),
                        "idle_s": args.idle_s, "rows": rows}
    RESULTS.mkdir(exist_ok=True)
    out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
