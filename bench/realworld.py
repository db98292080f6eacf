"""The analyzer on real projects' Triton kernels, as a new user would run it.

The projects come from PyPI as published wheels or sdists, fetched with `pip download --no-deps`
into a cache outside the repository (TRITONLENS_CORPUS, default ~/.cache/tritonlens-corpus) and
unpacked there; their code is read in place and never enters the repository. The results keep
counts only: files (those `check` reads: folders for other vendors' backends are skipped), kernels found (launchable and device helpers), findings per rule and severity,
internal rule errors, crashes, and the time per file. Which findings are right is judged by hand
in docs/judgements/.

Run: python bench/realworld.py [--projects liger-kernel,flag-gems,...] [--offline]
     → table + bench/results/realworld.json
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import subprocess
import sys
import tarfile
import time
import zipfile
from datetime import date
from pathlib import Path

RESULTS = Path(__file__).parent / "results"
PROJECTS = ["liger-kernel", "flag-gems", "fla-core", "unsloth", "sglang", "torchao", "gemlite"]
# geak-eval ships TritonBench's self-contained kernel files (each with its own launch and inputs).
ALL_PROJECTS = [*PROJECTS, "geak-eval"]
CACHE = Path(os.environ.get("TRITONLENS_CORPUS", Path.home() / ".cache" / "tritonlens-corpus"))


def _dist_name(project: str) -> str:
    return project.replace("-", "_").lower()


def fetch(projects: list[str], offline: bool) -> dict[str, Path]:
    """Each project's unpacked folder, downloading and unpacking what the cache lacks."""
    CACHE.mkdir(parents=True, exist_ok=True)
    missing = [p for p in projects if not any(CACHE.glob(f"{_dist_name(p)}-*"))]
    if missing and not offline:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(CACHE), *missing],
                       check=True)
    out = {}
    for p in projects:
        archives = sorted(CACHE.glob(f"{_dist_name(p)}-*"))
        archives = [a for a in archives if a.is_file()]
        if not archives:
            print(f"{p}: not in {CACHE} (run without --offline to fetch it)", file=sys.stderr)
            continue
        archive = archives[-1]
        dest = CACHE / "src" / _dist_name(p)
        stamp = dest / ".from"
        if not stamp.exists() or stamp.read_text() != archive.name:
            dest.mkdir(parents=True, exist_ok=True)
            if archive.suffix == ".whl":
                with zipfile.ZipFile(archive) as z:
                    z.extractall(dest)
            else:
                with tarfile.open(archive) as t:
                    t.extractall(dest, filter="data")
            stamp.write_text(archive.name)
        out[p] = (archive.name, dest)
    return out


def measure(folder: Path) -> dict:
    from tritonlens.analysis.engine import Analyzer
    from tritonlens.analysis.file_walk import Walk, iter_python_files
    from tritonlens.analysis.kernel_discovery import discover_source

    walk = Walk()  # the files `check` reads in this folder: other vendors' backend folders are skipped
    files = [p for p in iter_python_files([str(folder)], walk) if "triton" in p.read_text(encoding="utf-8", errors="replace")]
    analyzer = Analyzer()
    per_rule, severity = collections.Counter(), collections.Counter()
    kernels = launchable = crashes = rule_errors = 0
    seconds = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        t0 = time.perf_counter()
        try:
            result = analyzer.analyze(text, path=str(path))
        except Exception:  # a crash is what this bench exists to count
            crashes += 1
            continue
        seconds.append(time.perf_counter() - t0)
        kernels += len(result.kernels)
        rule_errors += len(result.errors)
        for f in result.findings:
            per_rule[f.code] += 1
            severity[f.severity.value] += 1
        try:
            launchable += sum(1 for k in discover_source(text) if k.launchable)
        except (SyntaxError, ValueError):  # a file Python cannot parse has no ast kernels
            pass
    seconds.sort()
    return {
        "files": len(files), "skipped_other_backends": sum(walk.other_backends.values()), "kernels": kernels, "launchable_by_ast": launchable, "crashes": crashes,
        "rule_errors": rule_errors, "findings": sum(per_rule.values()), "severity": dict(severity),
        "per_rule": dict(sorted(per_rule.items())), "seconds": round(sum(seconds), 2),
        "ms_per_file_p50": round(seconds[len(seconds) // 2] * 1000, 1) if seconds else None,
        "ms_per_file_max": round(seconds[-1] * 1000, 1) if seconds else None,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", default=",".join(PROJECTS))
    ap.add_argument("--offline", action="store_true", help="use only what the cache holds")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    folders = fetch([p.strip() for p in args.projects.split(",") if p.strip()], args.offline)
    rows = {}
    print(f"{'project':<14}{'archive':<48}{'files':>6}{'kernels':>8}{'findings':>9}{'errors':>7}{'crash':>6}{'s':>7}")
    for project, (archive, folder) in folders.items():
        r = rows[project] = {"archive": archive, **measure(folder)}
        print(f"{project:<14}{archive[:46]:<48}{r['files']:>6}{r['kernels']:>8}{r['findings']:>9}"
              f"{r['severity'].get('error', 0):>7}{r['crashes']:>6}{r['seconds']:>7}")
    total = collections.Counter()
    for r in rows.values():
        total.update(r["per_rule"])
    print("findings per rule:", dict(sorted(total.items())))
    if not args.no_write:
        RESULTS.mkdir(exist_ok=True)
        out = {"date": date.today().isoformat(), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
               "python": platform.python_version(), "projects": rows, "per_rule_total": dict(sorted(total.items()))}
        (RESULTS / "realworld.json").write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {RESULTS / 'realworld.json'}")
    return 1 if any(r["crashes"] or r["rule_errors"] for r in rows.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
