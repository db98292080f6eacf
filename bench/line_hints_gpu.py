"""On a GPU host: the stall hints through the language server, with profile on save and
`lineSamples` on, as an editor gets them (a stdio client, bench/lsp_wire.py).

For each example: open a copy, save it (profile on save times the kernels, then samples each one's
first launch per line under Nsight Compute), and wait for the inlay hints on its hottest lines; hover
the hottest; then insert a comment line inside the first kernel and save again: its hints go with
the edit and come back from the new profile, one line further down. Records the seconds from each
save to the hints, the hints, the hover, and the profile report the server kept (a recorded
profile the editor tests can replay).

    python bench/line_hints_gpu.py --out DIR [examples/softmax.py ...]

Run on the GPU host from outside the checkout's root (its `tritonlens/` folder would shadow the
installed package). Latest: bench/results/line_hints_gpu.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lsp_wire import WireClient

REPO = Path(__file__).resolve().parent.parent
CAPABILITIES = {"textDocument": {"inlayHint": {}, "hover": {"contentFormat": ["markdown"]}},
                "workspace": {"inlayHint": {"refreshSupport": True}}}
OPTIONS = {"profileOnSave": True, "lineSamples": True, "debounceMs": 20, "captureTests": False, "timeoutS": 300}


class Client(WireClient):
    def __init__(self):
        super().__init__()
        self.messages: list[str] = []

    def on_notification(self, msg: dict, arrived: float) -> None:
        if msg["method"] == "window/showMessage":
            self.messages.append(msg["params"].get("message", ""))


def _label(hint: dict) -> str:
    label = hint["label"]
    return label if isinstance(label, str) else "".join(p["value"] for p in label)


async def stall_hints(client: Client, uri: str, lines: int) -> list[tuple[int, str]]:
    got = await client.request("textDocument/inlayHint", {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": lines, "character": 0}}})
    return sorted((h["position"]["line"] + 1, _label(h)) for h in got or [] if "·" in _label(h))


async def wait_for(client: Client, uri: str, lines: int, ok, timeout: float) -> tuple[list, float]:
    t0 = time.monotonic()
    while True:
        hints = await stall_hints(client, uri, lines)
        if ok(hints) or time.monotonic() - t0 > timeout:
            return hints, round(time.monotonic() - t0, 1)
        await asyncio.sleep(0.5)


async def one_file(example: Path, work: Path, timeout: float) -> dict:
    path = work / example.name
    shutil.copy(example, path)
    text = path.read_text()
    uri = path.as_uri()
    client = Client()
    await client.spawn([sys.executable, "-m", "tritonlens", "serve"], work, CAPABILITIES, OPTIONS)
    out: dict = {"file": example.name}
    try:
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                "text": text}})
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        n = len(text.splitlines())
        out["hints"], out["first_s"] = await wait_for(client, uri, n, bool, timeout)
        if out["hints"]:
            hottest = max(out["hints"], key=lambda h: int(h[1].split("%")[0]))[0]
            hover = await client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                                "position": {"line": hottest - 1, "character": 6}})
            out["hover"] = (hover or {}).get("contents", {}).get("value")
        report = await client.request("workspace/executeCommand", {"command": "tritonlens.server.report",
                                                                   "arguments": [uri]})
        out["report"] = (report or {}).get("json")

        # A comment line inside the first kernel: its hints go, and the next save brings them back.
        lines = text.splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def ")
                  and i > 0 and lines[i - 1].strip().startswith("@triton"))
        edited = "".join(lines[:at + 1] + ["    # a comment typed inside the kernel\n"] + lines[at + 1:])
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"text": edited}]})
        out["after_edit"], _ = await wait_for(client, uri, n + 1, lambda h: h != out["hints"], 10)
        path.write_text(edited)
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        out["after_save"], out["refresh_s"] = await wait_for(
            client, uri, n + 1, lambda h: bool(h) and h != out["after_edit"], timeout)
    finally:
        out["messages"] = client.messages
        await client.stop()
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", default=["examples/softmax.py", "examples/matmul.py"])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--timeout", type=float, default=240)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results, device = [], None
    for f in args.files:
        with tempfile.TemporaryDirectory() as tmp:
            r = await one_file(REPO / f, Path(tmp), args.timeout)
        report = r.pop("report", None)
        if report is not None:
            (args.out / f"{Path(f).stem}.lines.json").write_text(json.dumps(report, indent=1))
            device = (report.get("device") or {}).get("name") or device
        results.append(r)
        print(json.dumps(r, indent=1), flush=True)
    summary = {"device": device, "date": date.today().isoformat(), "settings": OPTIONS,
               "note": "first_s: seconds from the save to the stall hints (the timing, then the sampling replay); "
                       "after_edit: the hints once a comment line is typed inside the kernel; refresh_s, after_save: "
                       "the next save's", "files": results}
    (args.out / "line_hints_gpu.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main())
