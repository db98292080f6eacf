"""Is the server's event loop free while features work? A ping (a command answered on the event
loop, tritonlens.server.report) is sent every 5 ms while a burst of feature requests runs on the
generated 2,100-line file of 64 kernels (bench/gen_kernels.py `typing_file`): a hover on every
kernel name (cards with static estimates, cold) and on every tl.load, inlay hints over the whole
file, document symbols and code lenses. The ping's latency is how long any request (a cancel, a completion)
would wait behind that work. Work done on the event loop shows as ping latency; work done on the
analysis thread does not.

Run: python bench/lsp_loop_free.py [--server-cwd DIR]  → prints a table, writes
bench/results/lsp_loop_free.json. `--server-cwd` runs `python -m tritonlens serve` from another
checkout (to compare with an older tree).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gen_kernels import typing_file
from lsp_latency import summary
from lsp_wire import WireClient

RESULTS = Path(__file__).parent / "results"
PING_EVERY_S = 0.005

CAPABILITIES = {"textDocument": {"hover": {"contentFormat": ["markdown"]}, "inlayHint": {},
                                 "publishDiagnostics": {"relatedInformation": True}},
                "window": {"workDoneProgress": False}}


class Client(WireClient):
    def __init__(self):
        super().__init__()
        self.published = asyncio.Event()

    def on_notification(self, msg: dict, arrived: float) -> None:
        if msg["method"] == "textDocument/publishDiagnostics":
            self.published.set()


async def _pings(client: Client, uri: str, stop: asyncio.Event, out: list[float], arrivals: list[float]) -> None:
    while not stop.is_set():
        t0 = time.perf_counter()
        msg = await client.send_request("workspace/executeCommand",
                                        {"command": "tritonlens.server.report", "arguments": [uri, "x"]})
        out.append((msg["_arrived"] - t0) * 1000)
        arrivals.append(msg["_arrived"])
        await asyncio.sleep(PING_EVERY_S)


async def run(server_cwd: Path | None, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "kernels.py"
        text = typing_file()
        path.write_text(text)
        uri = path.as_uri()
        client = Client()
        if server_cwd is not None:
            import os

            os.chdir(server_cwd)
        await client.spawn([sys.executable, "-m", "tritonlens", "serve"], root, CAPABILITIES,
                           {"debounceMs": 50, "compileOnSave": False})
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                "text": text}})
        await asyncio.wait_for(client.published.wait(), 120)
        lines = text.split("\n")
        names = [(i, ln.index(m.group(1))) for i, ln in enumerate(lines)
                 if (m := re.match(r"def (\w+)\(", ln)) and i > 0 and lines[i - 1].startswith("@triton.jit")]
        loads = [(i, ln.index("tl.load(") + 3) for i, ln in enumerate(lines) if "tl.load(" in ln]
        doc = {"uri": uri}
        everything = {"start": {"line": 0, "character": 0}, "end": {"line": len(lines), "character": 0}}
        idle, busy, burst_ms = [], [], []
        answered_within = 0  # pings answered before the burst's last answer
        stop = asyncio.Event()
        await _pings_for(client, uri, 0.3, idle)
        for _ in range(rounds):
            stop.clear()
            arrivals: list[float] = []
            pinger = asyncio.ensure_future(_pings(client, uri, stop, busy, arrivals))
            t0 = time.perf_counter()
            reqs = [client.send_request("textDocument/hover", {"textDocument": doc,
                                                               "position": {"line": ln, "character": col + 1}})
                    for ln, col in names + loads]
            reqs.append(client.send_request("textDocument/inlayHint", {"textDocument": doc, "range": everything}))
            reqs.append(client.send_request("textDocument/documentSymbol", {"textDocument": doc}))
            reqs.append(client.send_request("textDocument/codeLens", {"textDocument": doc}))
            answers = await asyncio.wait_for(asyncio.gather(*reqs), 300)
            last = max(a["_arrived"] for a in answers)
            burst_ms.append((last - t0) * 1000)
            stop.set()
            await pinger
            answered_within += sum(1 for a in arrivals if a < last)
            # the next round starts cold again: a whole-document change re-analyses every kernel
            text = text + f"\n# round {len(burst_ms)}\n"
            client.published.clear()
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 1 + len(burst_ms)},
                                                     "contentChanges": [{"text": text}]})
            await asyncio.wait_for(client.published.wait(), 120)
        await client.stop()
    return {"kernels": len(names), "lines": len(lines), "requests_per_burst": len(reqs),
            "pings_answered_within_bursts": answered_within, "idle_ping_ms": summary(idle),
            "ping_during_burst_ms": summary(busy), "burst_ms": summary(burst_ms)}


async def _pings_for(client, uri, seconds, out):
    stop = asyncio.Event()
    task = asyncio.ensure_future(_pings(client, uri, stop, out, []))
    await asyncio.sleep(seconds)
    stop.set()
    await task


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server-cwd", type=Path, help="checkout to run the server from")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--label", default="this tree")
    ap.add_argument("--out", type=Path, default=RESULTS / "lsp_loop_free.json")
    args = ap.parse_args()
    res = asyncio.run(run(args.server_cwd, args.rounds))
    print(f"{res['lines']} lines, {res['kernels']} kernels; {args.rounds} bursts of {res['requests_per_burst']} "
          f"requests: hovers on kernel names and tl.load, inlay hints, symbols, lenses ({args.label})")
    print(f"pings answered before the burst's last answer: {res['pings_answered_within_bursts']}")
    print(f"{'ping latency (ms)':<28}{'n':>6}{'p50':>9}{'p95':>9}{'max':>9}")
    for key, label in (("idle_ping_ms", "idle"), ("ping_during_burst_ms", "during the burst"),
                       ("burst_ms", "burst, all answered")):
        s = res[key]
        print(f"{label:<28}{s['n']:>6}{s['p50']:>9}{s['p95']:>9}{s['max']:>9}")
    record = {"date": date.today().isoformat(), "machine": platform.node(), "python": platform.python_version(),
              "label": args.label, **res}
    out = args.out
    runs = json.loads(out.read_text()) if out.exists() else []
    runs = [r for r in runs if r.get("label") != args.label] + [record]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(runs, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
