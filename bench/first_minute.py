"""The first minute after opening a real kernel file: when does each kind of insight appear?

Opens one file of a real project (default: liger-kernel's ops/rms_norm.py from the corpus cache,
TRITONLENS_CORPUS, default ~/.cache/tritonlens-corpus) through a real stdio client, with compile
on save on and cold caches (the engine's compile cache and Triton's own, both in a temporary
folder), and records from the didOpen:

- the first publishDiagnostics with a finding (static analysis);
- every `$/progress` message (title, report, end);
- for each kernel, when its hover first stops saying "Compile facts pending" (polled);
- the first and last publication carrying a compile finding (TL101–TL106).

Every rule is selected (the compile rules are off by default). `--workspace file` copies the file alone into an empty folder; `--workspace project` copies the
project's sdist (its tests included, so recording launches from the tests may start as well).
Run: python bench/first_minute.py [--label before]  → a table, and bench/results/first_minute.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lsp_wire import WireClient

RESULTS = Path(__file__).parent / "results"
CORPUS = Path(os.environ.get("TRITONLENS_CORPUS", Path.home() / ".cache" / "tritonlens-corpus"))
LIGER = "liger_kernel-0.8.5"
COMPILE_CODES = {"TL101", "TL102", "TL103", "TL104", "TL105", "TL106"}


class Client(WireClient):
    def __init__(self):
        super().__init__()
        self.t0 = 0.0
        self.events: list[tuple[float, str, object]] = []
        self.titles: dict = {}

    def at(self, arrived: float) -> float:
        return round(arrived - self.t0, 3)

    def on_notification(self, msg: dict, arrived: float) -> None:
        method, params = msg["method"], msg.get("params") or {}
        if method == "textDocument/publishDiagnostics":
            codes = sorted({str(d.get("code")) for d in params.get("diagnostics", [])})
            self.events.append((self.at(arrived), "diagnostics", codes))
        elif method == "window/showMessage":
            self.events.append((self.at(arrived), "message", params.get("message", "")[:200]))
        elif method == "$/progress":
            value = params.get("value", {})
            token = params.get("token")
            if value.get("kind") == "begin":
                self.titles[token] = value.get("title", "")
            text = value.get("title") or value.get("message") or ""
            self.events.append((self.at(arrived), f"progress-{value.get('kind')}",
                                f"{self.titles.get(token, '')[:60]} | {text}"))


def workspace(kind: str, folder: Path) -> Path:
    """The folder to open and the file in it."""
    sdist = CORPUS / "sdist" / LIGER
    if kind == "project":
        shutil.copytree(sdist, folder / "liger", ignore=shutil.ignore_patterns("benchmark", "docs", "examples",
                                                                              "*.png", "*.gif"))
        return folder / "liger" / "src" / "liger_kernel" / "ops" / "rms_norm.py"
    src = CORPUS / "src" / "liger_kernel" / "liger_kernel" / "ops" / "rms_norm.py"
    (folder / "ws").mkdir()
    shutil.copy(src, folder / "ws" / "rms_norm.py")
    return folder / "ws" / "rms_norm.py"


def kernel_names(text: str) -> list[tuple[int, str]]:
    lines = text.split("\n")
    return [(i, m.group(1)) for i, line in enumerate(lines)
            if (m := re.match(r"def (\w+)\(", line)) and i and lines[i - 1].startswith("@triton.jit")]


async def run(kind: str, timeout: float, log_file: str | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="tl-first-minute-") as tmp:
        tmp = Path(tmp)
        path = workspace(kind, tmp)
        root = path.parents[3] if kind == "project" else path.parent
        os.environ["TRITONLENS_COMPILE_CACHE"] = str(tmp / "compile-cache")
        os.environ["TRITON_CACHE_DIR"] = str(tmp / "triton-cache")
        text = path.read_text(encoding="utf-8")
        kernels = kernel_names(text)
        c = Client()
        caps = {"general": {"positionEncodings": ["utf-16"]},
                "textDocument": {"publishDiagnostics": {"versionSupport": True},
                                 "hover": {"contentFormat": ["markdown"]}},
                "window": {"workDoneProgress": True}, "workspace": {"configuration": True}}
        argv = [sys.executable, "-m", "tritonlens", "serve"]
        if log_file:
            argv += ["--log-file", log_file, "--log-level", "DEBUG"]
        await c.spawn(argv, root, caps,
                      {"debounceMs": 200, "compileOnSave": True, "select": ["ALL"]})
        uri = path.as_uri()
        c.t0 = time.perf_counter()
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": text}})
        facts: dict[str, float] = {}
        deadline = c.t0 + timeout
        while time.perf_counter() < deadline:
            for line, name in kernels:
                if name in facts:
                    continue
                h = await c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                           "position": {"line": line, "character": 5}})
                value = h["contents"]["value"] if h else ""
                if name in value and "Compile facts pending" not in value:
                    facts[name] = round(time.perf_counter() - c.t0, 2)
            begun = sum(k == "progress-begin" for _, k, _ in c.events)
            ended = sum(k == "progress-end" for _, k, _ in c.events)
            if begun and begun == ended and _quiet(c, 5):
                break
            await asyncio.sleep(0.25)
        await c.stop()
    first = next((t for t, k, v in c.events if k == "diagnostics"), None)
    static = next((t for t, k, v in c.events if k == "diagnostics" and v), None)
    compiled = [t for t, k, v in c.events if k == "diagnostics" and set(v) & COMPILE_CODES]
    return {"workspace": kind, "kernels": [n for _, n in kernels], "first_diagnostics_s": first,
            "first_finding_s": static,
            "first_compile_finding_s": compiled[0] if compiled else None,
            "last_compile_publication_s": compiled[-1] if compiled else None,
            "hover_facts_s": facts, "first_facts_s": min(facts.values(), default=None),
            "last_facts_s": max(facts.values(), default=None), "events": c.events}


def _quiet(c: Client, seconds: float) -> bool:
    return not c.events or time.perf_counter() - c.t0 - c.events[-1][0] > seconds


def table(rows: list[dict]) -> str:
    out = ["| label | workspace | first diagnostics | first finding | first facts | last facts | first compile finding | kernels with facts |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        def s(x):
            return "–" if x is None else f"{x:.1f} s"
        out.append(f"| {r['label']} | {r['workspace']} | {s(r['first_diagnostics_s'])} | {s(r['first_finding_s'])} | {s(r['first_facts_s'])} | "
                   f"{s(r['last_facts_s'])} | {s(r['first_compile_finding_s'])} | "
                   f"{len(r['hover_facts_s'])} of {len(r['kernels'])} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspace", choices=("file", "project"), default="file")
    ap.add_argument("--label", default="current")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--events", action="store_true", help="print every recorded event")
    ap.add_argument("--log-file", help="the server's debug log")
    args = ap.parse_args()
    row = asyncio.run(run(args.workspace, args.timeout, args.log_file))
    row["label"] = args.label
    if args.events:
        for t, k, v in row["events"]:
            print(f"{t:8.2f}  {k:16} {v}")
    out = RESULTS / "first_minute.json"
    old = json.loads(out.read_text()) if out.exists() else {"runs": []}
    runs = [r for r in old.get("runs", []) if (r["label"], r["workspace"]) != (args.label, args.workspace)]
    runs.append(row)
    RESULTS.mkdir(exist_ok=True)
    out.write_text(json.dumps({"date": str(date.today()), "machine": f"{platform.machine()}, "
                               f"{os.cpu_count()} cores, Python {platform.python_version()}",
                               "runs": runs}, indent=1) + "\n")
    print(table(runs))


if __name__ == "__main__":
    main()
