"""Kernel discovery on real projects: how many `@triton.jit` functions each discovery finds, and
whether the analyzer's tree-sitter model and the `ast` discovery (rewriter, profiler) agree.

Counted over every .py file of the unpacked corpus (default ~/.cache/tritonlens-corpus/src, or
$TRITONLENS_CORPUS):
- tree-sitter, before: `triton.jit` decorators on top-level definitions only;
- tree-sitter, now: also definitions inside module-level `if`/`else`/`try` (model.top_level_definitions);
- ast, before: the rewriter's and the profiler's old rule (any top-level function with a decorator
  whose last dotted part is `jit`: also `cute.jit`, `gluon.jit`, `tilelang.jit`);
- ast, now: analysis.kernel_discovery, with its launchable / device-helper split.
Agreement compares (file, name, line, kind, reason) between tree-sitter now (model.jit_functions)
and ast now (kernel_discovery.discover).

Run: python bench/kernel_discovery.py → prints a table, writes bench/results/kernel_discovery.json
"""

from __future__ import annotations

import ast
import json
import os
import sys
from collections import Counter
from pathlib import Path

from tritonlens.analysis.aliases import collect_aliases
from tritonlens.analysis.kernel_discovery import discover, dotted
from tritonlens.analysis.model import is_kernel_definition, jit_functions, top_level_definitions
from tritonlens.analysis.source import Source

CORPUS = Path(os.environ.get("TRITONLENS_CORPUS", Path.home() / ".cache" / "tritonlens-corpus" / "src"))
OUT = Path(__file__).parent / "results" / "kernel_discovery.json"


def tree_sitter_kernels(text: str, nested: bool) -> set[tuple[str, int]]:
    src = Source(text)
    al = collect_aliases(src)
    out = set()
    for outer, fn, decorators in top_level_definitions(src):
        if not nested and outer.parent is not None and outer.parent.type != "module":
            continue
        name = fn.child_by_field_name("name")
        if name is not None and is_kernel_definition(decorators, src, al):
            out.add((src.text_of(name), fn.start_point[0] + 1))
    return out


def old_ast_kernels(tree: ast.Module) -> set[tuple[str, int]]:
    out = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [(dotted(d.func if isinstance(d, ast.Call) else d) or "").split(".")[-1] for d in node.decorator_list]
            if "jit" in names:
                out.add((node.name, node.lineno))
    return out


def main() -> int:
    files = sorted(CORPUS.rglob("*.py"))
    if not files:
        print(f"no corpus under {CORPUS}", file=sys.stderr)
        return 2
    counts: Counter = Counter()
    disagree: list[str] = []
    examples_nested: list[str] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            counts["files skipped (not parseable)"] += 1
            continue
        counts["files"] += 1
        before_ts = tree_sitter_kernels(text, nested=False)
        now_ts = {(j.name, j.line, j.kind.value, j.reason) for j in jit_functions(Source(text))}
        found = discover(tree)
        now_ast = {(j.name, j.line, j.kind.value, j.reason) for j in found}
        counts["tree-sitter before"] += len(before_ts)
        counts["tree-sitter now"] += len(now_ts)
        counts["ast before (old rewriter/profiler rule)"] += len(old_ast_kernels(tree))
        counts["ast now"] += len(now_ast)
        counts["ast now: launchable"] += sum(j.launchable for j in found)
        counts["ast now: device helper"] += sum(not j.launchable for j in found)
        counts["agree"] += len(now_ts & now_ast)
        for name, line, kind, reason in sorted(now_ts ^ now_ast):
            disagree.append(f"{path.relative_to(CORPUS)}:{line} {name} {kind} ({reason})")
        for name, line in sorted({(n, ln) for n, ln, _, _ in now_ts} - before_ts)[:1]:
            if len(examples_nested) < 5:
                examples_nested.append(f"{path.relative_to(CORPUS)}:{line} {name}")
    union = counts["tree-sitter now"] + counts["ast now"] - counts["agree"]
    agreement = counts["agree"] / union if union else 1.0
    print(f"{'corpus':<44} {CORPUS}")
    for key in ("files", "tree-sitter before", "tree-sitter now", "ast before (old rewriter/profiler rule)", "ast now",
                "ast now: launchable", "ast now: device helper"):
        print(f"{key:<44} {counts[key]}")
    print(f"{'agreement tree-sitter now vs ast now':<44} {agreement:.2%} ({len(disagree)} differ)")
    for d in disagree[:20]:
        print("  differs:", d)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps({"counts": dict(counts), "agreement": agreement, "differ": disagree,
                               "newly_found_examples": examples_nested}, indent=2) + "\n")
    return 0 if not disagree else 1


if __name__ == "__main__":
    sys.exit(main())
