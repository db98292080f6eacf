"""On a GPU host: where each kernel's time goes, line by line, and what the sampling costs.

For the bundled examples and real project kernels (liger-kernel's ops, launches recorded from the
project's own benchmark scripts at their sizes), through the CLI a user runs:
  1. `tritonlens profile FILE`          the timed figures alone
  2. `tritonlens profile FILE --lines`  the same timing, then each kernel's first launch sampled per line
and per kernel: the line with the most samples, its share and top stall reason, whether that line is
the one an expert expects (the K-loop `tl.dot` or its loads in a matmul, the load in an elementwise
kernel, the reduction in a softmax or a norm), the added seconds, and the time with and without
sampling side by side (they must agree within noise: sampling is a separate replay).

    python bench/per_line_gpu.py [--corpus .corpus/gpu] [--out bench/results/per_line_gpu.json] [--reports DIR]
→ prints a table and writes JSON; --reports keeps each `--lines` profile's JSON (the editor's replay
fixtures are made from the examples' ones).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from realworld_capture_gpu import _capture_summary, _cli  # bench scripts run from bench/

# (file, what an expert expects the hottest line to be)
EXAMPLES = [("examples/matmul.py", {"dot", "load"}), ("examples/softmax.py", {"reduction", "load"}),
            ("examples/vector_add.py", {"load"}), ("examples/layernorm.py", {"reduction", "load"}),
            ("examples/transpose.py", {"load"}), ("examples/rmsnorm_autotune.py", {"reduction", "load"})]
PROJECT = [("liger_kernel-0.8.5", "src/liger_kernel/ops/rms_norm.py", "benchmark/scripts/benchmark_rms_norm.py",
            {"reduction", "load"}),
           ("liger_kernel-0.8.5", "src/liger_kernel/ops/swiglu.py", "benchmark/scripts/benchmark_swiglu.py", {"load"}),
           ("liger_kernel-0.8.5", "src/liger_kernel/ops/cross_entropy.py",
            "benchmark/scripts/benchmark_cross_entropy.py", {"reduction", "load"})]
_KINDS = [("dot", re.compile(r"\btl\.dot\b")), ("reduction", re.compile(r"\btl\.(sum|max|min|reduce|argmax|argmin|cumsum)\b|\.(sum|max|min)\(")),
          ("load", re.compile(r"\btl\.load\b")), ("store", re.compile(r"\btl\.store\b"))]


def line_kind(text: str) -> str:
    return next((kind for kind, pattern in _KINDS if pattern.search(text)), "other")


def statement_text(source: list[str], line: int) -> str:
    """The whole statement a 1-based line belongs to: a line table may name an argument's line
    inside a call written over several lines."""
    import ast

    try:
        tree = ast.parse("\n".join(source))
    except SyntaxError:
        return source[line - 1].strip() if 0 < line <= len(source) else ""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.For, ast.While, ast.If, ast.With)) \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno:
                best = node
    if best is None:
        return source[line - 1].strip() if 0 < line <= len(source) else ""
    return " ".join(ln.strip() for ln in source[best.lineno - 1:best.end_lineno])


def _hottest(kernel: dict, source: list[str]) -> dict | None:
    launch = next((x for x in kernel["launches"] if x.get("lines")), None)
    if launch is None:
        return None
    prof = launch["lines"]
    if prof.get("error"):
        return {"error": prof["error"]["message"][:300]}
    if not prof["lines"]:
        return {"error": "no line sampled"}
    top = prof["lines"][0]
    text = statement_text(source, top["line"])
    waits = [statement_text(source, w) for w in top.get("waits_on", [])]
    return {"line": top["line"], "text": text, "kind": line_kind(text), "share": top["share"],
            "reason": top["stalls"][0]["reason"] if top["stalls"] else None,
            "waits_on": top.get("waits_on", []), "waits_on_kinds": sorted({line_kind(w) for w in waits}),
            "instructions": [i["kind"] for i in top["instructions"][:2]], "via": top.get("via", []),
            "cost_s": prof.get("cost_s"), "samples": prof["total_samples"], "unattributed": prof["unattributed"]}


def measure(root: Path, file: str, expect: set[str], reports: Path | None) -> list[dict]:
    plain, err1, s_plain = _cli(["profile", file, "--format", "json", "--timeout", "300"], root, 900)
    sampled, err2, s_lines = _cli(["profile", file, "--lines", "--format", "json", "--timeout", "300"], root, 1500)
    if sampled is None or plain is None:
        return [{"file": file, "error": (err2 if sampled is None else err1).strip()[-300:]}]
    if reports is not None:
        (reports / (Path(file).stem + ".json")).write_text(json.dumps(sampled, indent=1))
    source = (root / file).read_text(encoding="utf-8").splitlines()
    rows = []
    for k in sampled["kernels"]:
        before = next((p for p in plain["kernels"] if p["name"] == k["name"]), None)
        t_plain = before["launches"][0]["time_ms"] if before and before["launches"] else None
        t_lines = k["launches"][0]["time_ms"] if k["launches"] else None
        hot = _hottest(k, source)
        expected = bool(hot and "kind" in hot and (hot["kind"] in expect or (
            hot["reason"] == "long_sb" and "load" in expect and "load" in hot["waits_on_kinds"])))
        rows.append({"file": file, "kernel": k["name"], "error": k["error"], "hottest": hot, "expected": sorted(expect),
                     "as_expected": expected, "time_ms": t_plain, "time_ms_with_lines": t_lines,
                     "wall_s": round(s_plain, 1), "wall_s_with_lines": round(s_lines, 1)})
    return rows


def raw_samples(file: str, reports: Path) -> None:
    """The lines job's own result for each kernel of `file`, before folding: the fold's test fixtures."""
    from tritonlens.profiling.api import find_kernels
    from tritonlens.profiling.backends import get_backend
    from tritonlens.profiling.worker.messages import LaunchJob

    path = str((REPO / file).resolve())
    runner = get_backend("local", timeout=600)
    for name in find_kernels(Path(path).read_text(encoding="utf-8")):
        reply = runner.run(LaunchJob("lines", id=name, path=path, kernel=name), timeout=600)
        out = reports / f"raw_{Path(file).stem}_{name}.json"
        out.write_text(json.dumps(reply.result if reply.ok else {"error": str(reply.error)}, indent=1))


def capture(corpus: Path, work: Path, timeout: float) -> dict[str, Path]:
    """Each project file's launches recorded from its benchmark script, each in its own copy."""
    roots = {}

    def one(target):
        project, file, script, _ = target
        root = Path(tempfile.mkdtemp(prefix="lines-", dir=work)) / project
        shutil.copytree(corpus / project, root)
        summary = _capture_summary(*_cli(["capture", file, "--timeout", str(timeout), "--format", "json", "--",
                                          "python", script], root, timeout + 60))
        print(json.dumps({"capture": file, **{k: v for k, v in summary.items() if k != "kernels"}}), flush=True)
        roots[file] = root

    with ThreadPoolExecutor(3) as pool:
        list(pool.map(one, PROJECT))
    return roots


def table(rows: list[dict]) -> str:
    out = ["| kernel | hottest line | share | top reason | expected | as expected | time ms (plain / sampled) | sampling s |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        h = r.get("hottest") or {}
        if "line" not in h:
            out.append(f"| {r.get('kernel', r['file'])} | {h.get('error') or r.get('error') or '-'} | | | | | | |")
            continue
        waits = f" (waits on {h['waits_on'][0]})" if h["waits_on"] else ""
        t = "/".join("-" if v is None else f"{v:.4f}" for v in (r["time_ms"], r["time_ms_with_lines"]))
        out.append(f"| {r['kernel']} | {h['line']}: `{h['text'][:60]}`{waits} | {100 * h['share']:.0f}% | {h['reason']} "
                   f"| {'/'.join(r['expected'])} | {'yes' if r['as_expected'] else 'no'} | {t} | {h['cost_s']} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=REPO / ".corpus" / "gpu")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "per_line_gpu.json")
    ap.add_argument("--reports", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--part", choices=("all", "examples", "projects"), default="all",
                    help="the examples, the project kernels, or both (one GPU command may not fit both)")
    args = ap.parse_args()
    if args.reports:
        args.reports.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="per-line-"))
    roots = capture(args.corpus, work, args.timeout) if args.corpus.is_dir() and args.part != "examples" else {}
    rows = []
    examples = work / "checkout"  # not the checkout's root: its tritonlens/ folder would shadow the installed one
    shutil.copytree(REPO / "examples", examples / "examples")
    for file, expect in EXAMPLES if args.part != "projects" else []:
        rows += measure(examples, file, expect, args.reports)
        print(json.dumps(rows[-1]), flush=True)
    if args.reports and args.part != "projects":
        for file in ("examples/softmax.py", "examples/vector_add.py", "examples/matmul.py"):
            raw_samples(file, args.reports)
    for _, file, _, expect in PROJECT:
        if file in roots:
            rows += measure(roots[file], file, expect, args.reports)
            print(json.dumps(rows[-1]), flush=True)
    print(table(rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                    "seconds": round(time.perf_counter() - started, 1), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
