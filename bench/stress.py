"""Edit storm against a real `tritonlens serve` over stdio (issue 7).

1,000 didChange notifications are written as fast as the pipe takes them: typing a statement into
the matmul example one character at a time, deleting it again, and toggling edits that change the
diagnostics (accumulator dtype, tile size). Every 20 edits a hover / codeLens / documentSymbol
request goes out without waiting; all must be answered. Afterwards:

- the last published diagnostics are for the final version and equal tritonlens.analysis on the
  final text (code, range, message);
- publications for the document never go back to an older version;
- server RSS (/proc/<pid>/status) after the storm is compared with before.

Run: python bench/stress.py  → prints the figures, writes bench/results/stress.json
(tests/reliability/test_edit_storm.py runs the same storm and asserts on it).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lsp_wire import WireClient  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results"
BASE = REPO / "examples" / "matmul.py"
TYPED = "    probe = tl.load(a_ptrs, mask=offs_k[None, :] < K, other=0.0)"
TOGGLES = [("dtype=tl.float32)", "dtype=tl.float16)"), ("BLOCK_M=32,", "BLOCK_M=8,")]


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


class Client(WireClient):
    """A push-diagnostics client (VS Code-like, UTF-16) recording every publication in order."""

    def __init__(self):
        super().__init__()
        self.publications: list[dict] = []  # params of textDocument/publishDiagnostics, in order
        self.published = asyncio.Event()

    async def start(self, root: Path, debounce_ms: int):
        caps = {"general": {"positionEncodings": ["utf-16"]},
                "textDocument": {"publishDiagnostics": {"versionSupport": True, "relatedInformation": True},
                                 "hover": {"contentFormat": ["markdown"]}, "synchronization": {}},
                "workspace": {"configuration": True}}
        await self.spawn([sys.executable, "-m", "tritonlens", "serve"], root, caps, {"debounceMs": debounce_ms})

    def on_notification(self, msg: dict, arrived: float) -> None:
        if msg["method"] == "textDocument/publishDiagnostics":
            self.publications.append(msg["params"])
            self.published.set()

    async def wait_for_version(self, uri: str, version: int, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            mine = [p for p in self.publications if p["uri"] == uri]
            if mine and mine[-1].get("version") == version:
                return mine[-1]
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no diagnostics for version {version}; last: {mine[-1].get('version') if mine else None}")
            self.published.clear()
            try:
                await asyncio.wait_for(self.published.wait(), min(left, 0.5))
            except (asyncio.TimeoutError, TimeoutError):
                pass


class Editor:
    """The client's copy of the document, edited the way a typing user does (ASCII, so UTF-16
    columns are character indices)."""

    def __init__(self, text: str):
        self.text = text
        self.version = 1

    def _pos(self, index: int) -> dict:
        line = self.text.count("\n", 0, index)
        return {"line": line, "character": index - (self.text.rfind("\n", 0, index) + 1)}

    def edit(self, start: int, end: int, new: str) -> dict:
        change = {"range": {"start": self._pos(start), "end": self._pos(end)}, "text": new}
        self.text = self.text[:start] + new + self.text[end:]
        self.version += 1
        return change

    def script(self, n: int):
        """n edits: type TYPED into the kernel's loop and delete it again, toggling a diagnostic
        between rounds; the last edit is a toggle, so the final diagnostics differ from the
        initial ones."""
        anchor_line = "        acc += tl.dot(a, b)\n"
        toggles = 0
        made = 0
        while made < n:
            remaining = n - made
            if remaining == 1 or made % 60 == 59:
                old, new = TOGGLES[toggles % len(TOGGLES)]
                if old not in self.text:
                    old, new = new, old
                i = self.text.index(old)
                toggles += 1
                made += 1
                yield self.edit(i, i + len(old), new)
                continue
            at = self.text.index(anchor_line)
            typing = min(len(TYPED) + 1, (remaining - 1) // 2)
            if typing <= 0:
                made += 1
                yield self.edit(at, at, "")
                continue
            for ch in (TYPED + "\n")[:typing]:
                made += 1
                yield self.edit(at, at, ch)
                at += 1
            for _ in range(typing):
                made += 1
                at -= 1
                yield self.edit(at, at + 1, "")


def expected_diagnostics(text: str, path: str) -> list[tuple]:
    from tritonlens.analysis.engine import Analyzer

    result = Analyzer().analyze(text, path=path)
    return sorted((f.code, f.range.start.line, f.range.start.column, f.range.end.line, f.range.end.column, f.message)
                  for f in result.findings)


def published_diagnostics(params: dict) -> list[tuple]:
    return sorted((d.get("code"), d["range"]["start"]["line"], d["range"]["start"]["character"],
                   d["range"]["end"]["line"], d["range"]["end"]["character"], d["message"])
                  for d in params["diagnostics"])


async def storm(edits: int = 1000, debounce_ms: int = 200, request_every: int = 20, settle_s: float = 1.5) -> dict:
    with tempfile.TemporaryDirectory(prefix="tritonlens-stress-") as tmp:
        root = Path(tmp)
        path = root / "matmul.py"
        path.write_text(BASE.read_text())
        uri = path.as_uri()
        client = Client()
        await client.start(root, debounce_ms)
        exit_code = None
        try:
            editor = Editor(path.read_text())
            client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                    "text": editor.text}})
            first = await client.wait_for_version(uri, 1)
            await client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                        "position": {"line": 21, "character": 6}})
            await asyncio.sleep(0.5)
            rss_before = rss_kb(client.pid)

            requests: list[tuple[str, float, asyncio.Future]] = []
            kinds = ["textDocument/hover", "textDocument/codeLens", "textDocument/documentSymbol"]
            t0 = time.perf_counter()
            for i, change in enumerate(editor.script(edits)):
                client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": editor.version},
                                                         "contentChanges": [change]})
                if i % request_every == request_every - 1:
                    kind = kinds[(i // request_every) % len(kinds)]
                    params = {"textDocument": {"uri": uri}}
                    if kind == "textDocument/hover":
                        params["position"] = {"line": 21, "character": 6}
                    requests.append((kind, time.perf_counter(), client.send_request(kind, params)))
                if i % 50 == 49:
                    await client.proc.stdin.drain()  # as fast as the pipe takes them, no faster
                if i == edits // 2:
                    # Caches fill during the first edits; a leak shows as growth in the second half.
                    await client.proc.stdin.drain()
                    await client.wait_for_version(uri, editor.version)
                    rss_mid = rss_kb(client.pid)
            await client.proc.stdin.drain()
            send_s = time.perf_counter() - t0

            latencies, answered, failed = [], 0, []
            for kind, sent, fut in requests:
                try:
                    msg = await asyncio.wait_for(fut, 60)
                except (asyncio.TimeoutError, TimeoutError, ConnectionError) as exc:
                    failed.append(f"{kind}: {type(exc).__name__}")
                    continue
                answered += 1
                if "error" in msg:
                    failed.append(f"{kind}: {msg['error']}")
                latencies.append((msg["_arrived"] - sent) * 1000)
            await client.wait_for_version(uri, editor.version)
            storm_to_final_ms = (time.perf_counter() - t0) * 1000
            await asyncio.sleep(settle_s)  # anything stale would arrive now
            mine = [p for p in client.publications if p["uri"] == uri]
            versions = [p.get("version") for p in mine]
            regressions = [(a, b) for a, b in itertools.pairwise(versions) if b is not None and a is not None and b < a]
            got = published_diagnostics(mine[-1])
            want = expected_diagnostics(editor.text, str(path))
            rss_after = rss_kb(client.pid)
            alive = client.proc.returncode is None
        finally:
            exit_code = await client.stop()
    return {
        "edits": edits, "final_version": editor.version, "debounce_ms": debounce_ms,
        "send_s": round(send_s, 3), "edits_per_s": round(edits / send_s),
        "requests_sent": len(requests), "requests_answered": answered, "request_errors": failed,
        "max_latency_ms": round(max(latencies), 1) if latencies else None,
        "median_latency_ms": round(sorted(latencies)[len(latencies) // 2], 1) if latencies else None,
        "storm_to_final_diagnostics_ms": round(storm_to_final_ms, 1),
        "publications": len(mine), "published_versions_regressions": regressions,
        "last_published_version": mine[-1].get("version"), "final_matches_analysis": got == want,
        "final_diagnostics": len(want), "initial_diagnostics": len(first["diagnostics"]),
        "final_differs_from_initial": published_diagnostics(first) != got,
        "rss_before_mb": round(rss_before / 1024, 1), "rss_after_mb": round(rss_after / 1024, 1),
        "rss_delta_mb": round((rss_after - rss_before) / 1024, 1),
        "rss_second_half_mb": round((rss_after - rss_mid) / 1024, 1),
        "alive_after": alive, "exit_code": exit_code,
        "mismatch": None if got == want else {"published": got[:10], "analysis": want[:10]},
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edits", type=int, default=1000)
    ap.add_argument("--debounce-ms", type=int, default=200)
    ap.add_argument("--no-write", action="store_true", help="print only, do not write bench/results/stress.json")
    args = ap.parse_args(argv)
    res = asyncio.run(storm(args.edits, args.debounce_ms))
    res = {"date": date.today().isoformat(), "machine": f"{platform.machine()} {os.cpu_count()} cpus",
           "python": platform.python_version(), **res}
    print(f"edit storm: {res['edits']} didChange in {res['send_s']} s ({res['edits_per_s']}/s), debounce {res['debounce_ms']} ms")
    print(f"requests answered: {res['requests_answered']}/{res['requests_sent']}  errors: {len(res['request_errors'])}")
    print(f"latency during the storm: median {res['median_latency_ms']} ms, max {res['max_latency_ms']} ms")
    print(f"final diagnostics (v{res['last_published_version']}) equal the analysis of the final text: "
          f"{res['final_matches_analysis']}; version regressions: {len(res['published_versions_regressions'])}")
    print(f"final diagnostics differ from the initial ones: {res['final_differs_from_initial']} "
          f"({res['initial_diagnostics']} -> {res['final_diagnostics']})")
    print(f"memory: {res['rss_before_mb']} MB before, {res['rss_after_mb']} MB after ({res['rss_delta_mb']:+} MB, "
          f"{res['rss_second_half_mb']:+} MB in the second half)")
    if not args.no_write:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "stress.json").write_text(json.dumps(res, indent=2) + "\n")
    ok = (res["requests_answered"] == res["requests_sent"] and not res["request_errors"] and res["final_matches_analysis"]
          and not res["published_versions_regressions"]
          and res["last_published_version"] == res["final_version"] and res["rss_delta_mb"] <= 80 and res["rss_second_half_mb"] <= 15
          and res["alive_after"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
