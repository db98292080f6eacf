"""How much `tritonlens capture` records from real projects' own tests on a machine without a GPU,
and whether every failure says its cause.

The projects are source distributions in ~/.cache/tritonlens-corpus/capture/src (tests and all) and
flag-gems' wheel (~/.cache/tritonlens-corpus/src/flag_gems, which ships no tests); the development
and held-out sets are named in docs/judgements/capture/README.md. Each project is copied to a
temporary folder first (the cache is never written). Its kernel files are the files of its packages
(realworld_kernels.py: what `check` reads, test files left out) that define a Triton JIT function;
its kernels are their launchable JIT functions (device helpers are never launched on their own).
A kernel's tests are found when profiling/project_tests.py finds a test reaching its file. Each
kernel file with tests gets its own capture (capture_for_file, as the editor's automatic capture and
`tritonlens capture FILE` run it: the op's own tests first, stopping once each of the file's kernels
is recorded) under a per-file timeout, so one slow file does not starve the rest; a file whose
kernels an earlier file's capture already recorded is not captured again (the editor would find its
records). What the captures recorded is attributed per kernel file and kernel by the launches' own
file and name. `--budget` bounds a project's captures in all: the files it leaves out are a cause.

Per project it prints and writes: kernels, kernels whose tests were found, kernels recorded, and
each cause the capture gave (kind + line). Targets: >= 60% of test-reached kernels recorded over all
projects, and 100% of causes named (a kind other than a catch-all, no bare "InterpreterError", no
"exit code N").

Run: python bench/realworld_capture.py [--python PY] [--timeout S] [--budget S] [--projects a,b] [--held-out]
     [--out NAME]
     → table + bench/results/realworld_capture.json (realworld_capture_heldout.json with --held-out)

`--python PY` runs the tests with a project environment (a venv with the test dependencies the
causes name); without it they run with this interpreter, bare.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
from realworld_kernels import classify, kernel_files
from tritonlens.profiling.project_capture import capture_for_file
from tritonlens.profiling.project_tests import ImportGraph, is_test_file, layout

CORPUS = Path.home() / ".cache" / "tritonlens-corpus"
SDISTS = CORPUS / "capture" / "src"
# the first three held-out sets were reported once each and are development data since
DEVELOPMENT = ["liger_kernel-0.8.5", "bitsandbytes-0.42.0", "mamba_ssm-2.3.2.post1", "triton_kernels-0.1.0",
               "flag_gems-5.0.2", "unsloth-2026.3.4", "flash_attn-2.8.3.post2", "xformers-0.0.35",
               "axolotl-0.19.0", "cut_cross_entropy-25.1.1", "ring_flash_attn-0.1.8",
               "unsloth_zoo-2026.10.9", "triton_util-0.0.2"]
HELD_OUT = ["conch_triton_kernels-1.3", "mase_triton-0.0.7", "mlstm_kernels-2.0.6",
            "native_sparse_attention_pytorch-0.2.3", "stanford_stk-0.7.1", "sageattention-1.0.6"]
WHEELS = {"flag_gems-5.0.2": CORPUS / "src" / "flag_gems"}  # unpacked wheels: no tests inside
RESULTS = REPO / "bench" / "results"
TARGET_RECORDED = 0.60
TARGET_NAMED = 1.0
TEST_DIRS = {"test", "tests", "testing", "benchmark", "benchmarks", "bench", "examples", "dev", "docs", "scripts"}
UNNAMED = re.compile(r"\bexit code -?\d+\b|^\s*InterpreterError\s*$|InterpreterError(?!:)\s*$")


def _source(name: str, corpus: Path | None = None) -> Path:
    return corpus / name if corpus else WHEELS.get(name, SDISTS / name)


def _copy(name: str, into: Path, corpus: Path | None = None) -> Path:
    dest = into / name
    shutil.copytree(_source(name, corpus), dest, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", ".tritonlens", ".pytest_cache", "*.so", "*.a"))
    if not any((dest / f).exists() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
        # an unpacked wheel holds its packages and no project file: mark its folder as the root
        (dest / "pyproject.toml").write_text(f'[project]\nname = "{name}"\n', encoding="utf-8")
    return dest


def _packages(lay) -> list[Path]:
    """The project's importable packages: folders with an `__init__.py` on its import paths."""
    return sorted({d for base in lay.path_dirs() if base.is_dir() for d in base.iterdir()
                   if (d / "__init__.py").is_file() and d.name not in TEST_DIRS})


def _kernel_files(lay) -> list[Path]:
    out = []
    for package in _packages(lay):
        for path in kernel_files(package):
            rel = path.relative_to(package).parts
            if not is_test_file(path) and not TEST_DIRS & set(rel[:-1]):
                out.append(path)
    return sorted(set(out))


def named(cause: dict) -> bool:
    """A cause a person can act on: a kind of its own and a line that is not a bare wrapper or code."""
    return cause["kind"] not in ("", "unknown") and not UNNAMED.search(cause["line"] or "")


def measure(name: str, python: str | None, timeout: float, budget: float, corpus: Path | None = None,
            keep: Path | None = None) -> dict:
    """`corpus`: the folder holding the project (default the cache); `keep`: where its copy, with the
    records its captures wrote, stays afterwards (default a temporary folder, removed)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="capture-bench-") as tmp:
        root = _copy(name, keep or Path(tmp), corpus)
        lay = layout(root / "pyproject.toml" if (root / "pyproject.toml").exists() else root / "setup.py")
        packages = {p.name for p in _packages(lay)}
        graph = ImportGraph(lay)
        files = _kernel_files(lay)
        kernels: dict[str, list[str]] = {}  # relative file -> launchable kernels
        tests_of: dict[str, list[str]] = {}
        for path in files:
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8", errors="replace")
            kernels[rel] = [k["name"] for k in classify(text, packages) if k["launchable"]]
            tests_of[rel] = graph.tests_for(path)
        tests = sorted({t for ts in tests_of.values() for t in ts})
        reached = {f"{f}::{k}" for f, ks in kernels.items() if tests_of[f] for k in ks}
        every = {f"{f}::{k}" for f, ks in kernels.items() for k in ks}
        out = {"project": name, "kernel_files": len(files), "kernels": len(every), "tests": len(tests),
               "test_reached": len(reached), "recorded": 0, "recorded_other": 0, "causes": [], "error": None}
        if not tests:
            out["causes"] = [{"kind": "no_test_found", "line": f"no test of {name} reaches any of its "
                              f"{len(files)} kernel files (the distribution ships no tests)" if not any(
                                  (root / d).is_dir() for d in ("test", "tests")) else
                              f"no test of {name} reaches any of its {len(files)} kernel files", "fix": None}]
            out["seconds"] = round(time.monotonic() - started, 1)
            return out
        got: set[str] = set()
        causes: list[dict] = []
        out["passed"] = out["failed"] = 0
        out["files"] = []
        for path in files:
            rel = path.relative_to(root).as_posix()
            wanted = {f"{rel}::{k}" for k in kernels[rel]}
            if not tests_of[rel] or not wanted or wanted <= got:
                continue
            left = budget - (time.monotonic() - started)
            if left < 10:
                causes.append({"kind": "worker_failed", "test": None, "fix": None,
                               "line": f"{rel}: not captured, the bench's {budget:.0f} s for the project ran out"})
                continue
            t0 = time.monotonic()
            outcome = capture_for_file(path, python=python, timeout=min(timeout, left))
            got |= set(outcome.kernels())
            res = outcome.result
            if res is not None:
                out["passed"] += res.passed
                out["failed"] += res.failed
            out["files"].append({"file": rel, "seconds": round(time.monotonic() - t0, 1),
                                 "recorded": sorted(set(outcome.kernels()) & wanted),
                                 "stopped": res.stopped if res else None, "error": outcome.error})
            found = list(outcome.causes)
            if outcome.cause is not None and all(c.line != outcome.cause.line for c in found):
                found.insert(0, outcome.cause)
            for c in found:
                if all(c.line != d["line"] for d in causes):
                    causes.append({"kind": c.kind, "line": c.line, "fix": c.fix, "test": c.test})
        out["recorded"] = len(got & reached)
        out["recorded_other"] = len(got - reached)
        out["recorded_kernels"] = sorted(got)
        out["missed_kernels"] = sorted(reached - got)
        out["causes"] = causes
        out["seconds"] = round(time.monotonic() - started, 1)
        return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", help="interpreter with the projects' test dependencies (default: this one)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per kernel file's capture (default 60)")
    ap.add_argument("--budget", type=float, default=600.0, help="seconds for a project's captures in all "
                                                                "(default 600)")
    ap.add_argument("--projects", help="comma-separated subset of the set's names")
    ap.add_argument("--held-out", action="store_true", help="the held-out set (run once, to report)")
    ap.add_argument("--out", help="results file name under bench/results, or a path "
                                  "(default realworld_capture[_heldout].json)")
    ap.add_argument("--corpus", type=Path, help="folder holding the projects (default the cache's capture/src)")
    ap.add_argument("--keep", type=Path, help="leave each project's copy, with its records, in this folder")
    args = ap.parse_args()
    names = HELD_OUT if args.held_out else DEVELOPMENT
    if args.projects:
        wanted = args.projects.split(",")
        names = [n for n in names if any(n.startswith(w) for w in wanted)]
    rows = []
    for name in names:
        if not _source(name, args.corpus).is_dir():
            print(f"{name}: not in the corpus ({_source(name, args.corpus)})", file=sys.stderr)
            continue
        row = measure(name, args.python, args.timeout, args.budget, args.corpus, args.keep)
        rows.append(row)
        print(f"{name}: {row['kernels']} kernels in {row['kernel_files']} files, tests found for "
              f"{row['test_reached']}, recorded {row['recorded']} ({row['seconds']} s)", flush=True)
        for c in row["causes"]:
            print(f"    [{c['kind'] or '?'}] {c['line'][:240]}" + (f"\n        fix: {c['fix']}" if c["fix"] else ""))
    reached = sum(r["test_reached"] for r in rows)
    recorded = sum(r["recorded"] for r in rows)
    causes = [c for r in rows for c in r["causes"]]
    share = recorded / reached if reached else 0.0
    named_share = sum(named(c) for c in causes) / len(causes) if causes else 1.0
    summary = {"test_reached": reached, "recorded": recorded, "recorded_share": round(share, 3),
               "causes": len(causes), "named_share": round(named_share, 3),
               "targets": {"recorded_share": TARGET_RECORDED, "named_share": TARGET_NAMED},
               "met": {"recorded_share": share >= TARGET_RECORDED, "named_share": named_share >= TARGET_NAMED}}
    print(f"\nrecorded {recorded}/{reached} test-reached kernels ({share:.0%}, target {TARGET_RECORDED:.0%}); "
          f"causes named {sum(named(c) for c in causes)}/{len(causes)} ({named_share:.0%}, target 100%)")
    out = RESULTS / (args.out or ("realworld_capture_heldout.json" if args.held_out else "realworld_capture.json"))
    RESULTS.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                       "python": "project environment" if args.python else "bare",
                       "timeout_s": args.timeout, "budget_s": args.budget, "summary": summary, "projects": rows}, indent=2) + "\n"
    for path in filter(None, (args.python, sys.executable)):  # no machine paths in the results
        text = text.replace(path, "PYTHON")
    out.write_text(text, encoding="utf-8")
    print(f"→ {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
