#!/usr/bin/env python3
"""Source surgery for the rewrites: the hand-written edits (Python's ast positions turned into text
edits, rewrite/edits.py) beside LibCST (a lossless concrete tree, matchers, codegen), on real
Triton files nobody here wrote.

The same rewrite both ways: every integer literal passed by keyword in a call (`BLOCK=64`,
`num_warps=4`) is doubled, what a config edit does at a launch, a Config or a helper call. Measured per file: parse +
edit + print time (median of 5), whether the untouched lines stay byte-identical, and the size of
the diff. The corpus is the cache outside the repository (bench/heldout_set.py says where); the
held-out TritonBench-G files are not read.

    pip install libcst; python bench/source_surgery.py [--limit 200]   → table + bench/results/source_surgery.json
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import heldout_set  # noqa: E402

RESULTS = HERE / "results"


def _launch_keywords(tree: ast.AST) -> list[ast.Constant]:
    """Integer literals passed by keyword in calls."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg and isinstance(kw.value, ast.Constant) and type(kw.value.value) is int:
                    out.append(kw.value)
    return out


def by_text_edits(text: str) -> str:
    from tritonlens.rewrite.edits import Edit, Lines, apply

    tree = ast.parse(text)
    lines = Lines(text)
    return apply(text, [Edit(*lines.span(c), str(c.value * 2)) for c in _launch_keywords(tree)])


def by_libcst(text: str) -> str:
    import libcst as cst

    class Double(cst.CSTTransformer):
        def leave_Call(self, original, updated):
            args = []
            for a in updated.args:
                if a.keyword is not None and isinstance(a.value, cst.Integer):
                    a = a.with_changes(value=cst.Integer(str(int(a.value.value, 0) * 2)))
                args.append(a)
            return updated.with_changes(args=args)

    return cst.parse_module(text).visit(Double()).code


def _median_ms(fn, text: str, reps: int = 5) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(text)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _diff_lines(a: str, b: str) -> int:
    return sum(1 for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0)
               if line.startswith(("+", "-")) and not line.startswith(("+++", "---")))


def corpus_files(limit: int) -> list[Path]:
    root = heldout_set.CACHE / "sdist"
    files = sorted(p for p in root.glob("liger_kernel-*/src/**/*.py") if "triton" in p.read_text(errors="ignore"))
    return files[:limit]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=200)
    opts = ap.parse_args()
    files = corpus_files(opts.limit)
    if not files:
        print("no corpus: pip download --no-deps --no-binary :all: liger-kernel into the cache, untarred under sdist/",
              file=sys.stderr)
        return 2
    rows = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        if not _launch_keywords(ast.parse(text)):
            continue
        a, b = by_text_edits(text), by_libcst(text)
        rows.append({"file": os.path.relpath(path, heldout_set.CACHE), "lines": text.count("\n"),
                     "edits_ms": _median_ms(by_text_edits, text), "libcst_ms": _median_ms(by_libcst, text),
                     "same_result": a == b, "diff_lines": _diff_lines(text, a)})
    if not rows:
        print("no file with a literal launch keyword", file=sys.stderr)
        return 2
    med = {k: statistics.median(r[k] for r in rows) for k in ("edits_ms", "libcst_ms", "lines")}
    summary = {"files": len(rows), "median_lines": med["lines"], "median_edits_ms": round(med["edits_ms"], 2),
               "median_libcst_ms": round(med["libcst_ms"], 2),
               "libcst_over_edits": round(med["libcst_ms"] / med["edits_ms"], 1),
               "identical_results": sum(r["same_result"] for r in rows)}
    print(f"{'file':<70} {'lines':>6} {'edits ms':>9} {'libcst ms':>10} same")
    for r in rows[:20]:
        print(f"{r['file'][-70:]:<70} {r['lines']:>6} {r['edits_ms']:>9.2f} {r['libcst_ms']:>10.2f} {r['same_result']}")
    print(json.dumps(summary))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "source_surgery.json").write_text(json.dumps(
        {"date": date.today().isoformat(), "python": platform.python_version(), "summary": summary, "rows": rows},
        indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
