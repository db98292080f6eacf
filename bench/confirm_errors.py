"""How many of the analyzer's error findings on real projects Triton's front end confirms.

Runs the analyzer over the corpus bench/realworld.py unpacks (TRITONLENS_CORPUS, default
~/.cache/tritonlens-corpus/src), puts every error finding to the front end as `tritonlens check`
does (one worker job for the whole corpus), and counts verdicts per rule and the reasons for the
inconclusive ones. Timed twice: cold (a private, empty cache) and warm (the same cache again).

Run: python bench/confirm_errors.py [--projects flag_gems,sglang] → table + bench/results/confirm_errors.json
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results"
SRC = Path(os.environ.get("TRITONLENS_CORPUS", Path.home() / ".cache" / "tritonlens-corpus")) / "src"


def analyze(projects: list[str]):
    from tritonlens.analysis.engine import Analyzer
    from tritonlens.analysis.prefilter import may_hold_kernels

    analyzer = Analyzer()
    out = []
    for project in projects:
        for path in sorted((SRC / project).rglob("*.py")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if not may_hold_kernels(text):
                continue
            result = analyzer.analyze(text, path=str(path))
            if any(f.severity.value == "error" for f in result.findings):
                out.append((str(path), result))
    return out


def confirm(files) -> tuple[float, float, dict]:
    from tritonlens.profiling import confirm_errors as ce

    t0 = time.perf_counter()
    requests = [ce.prepare(r.findings, r.module, p) for p, r in files]
    prepared = time.perf_counter() - t0
    version, lowered = ce.lower_many(requests, timeout=1800)
    judged = {}
    for (path, _), request, answer in zip(files, requests, lowered):
        for key, j in ce.judge(request, answer, version).items():
            judged[(path, key)] = j
    return prepared, time.perf_counter() - t0, judged


def _reason(text: str) -> str:
    """The reason without the names and lines that make each one different."""
    text = re.sub(r"`[^`]*`", "`…`", text)
    text = re.sub(r"line \d+", "line N", text)
    return text.split(":")[0][:70]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--projects", default="", help="comma-separated folders under the corpus' src/ (default: all)")
    args = ap.parse_args()
    projects = [p for p in args.projects.split(",") if p] or sorted(p.name for p in SRC.iterdir() if p.is_dir())
    os.environ["TRITONLENS_COMPILE_CACHE"] = tempfile.mkdtemp(prefix="tritonlens-confirm-bench-")
    t0 = time.perf_counter()
    files = analyze(projects)
    analysis_s = time.perf_counter() - t0
    prepare_s, cold_s, judged = confirm(files)
    _, warm_s, _ = confirm(files)
    from tritonlens.profiling import confirm_errors as ce

    per_rule = collections.defaultdict(collections.Counter)
    reasons = collections.Counter()
    for (path, key), j in judged.items():
        per_rule[key[0]][j.verdict.value] += 1
        if j.verdict is ce.Verdict.INCONCLUSIVE:
            reasons[_reason(j.reason)] += 1
    total = collections.Counter()
    for counts in per_rule.values():
        total.update(counts)
    print(f"{'rule':6} {'confirmed':>9} {'refuted':>8} {'inconclusive':>12}")
    for code in sorted(per_rule):
        c = per_rule[code]
        print(f"{code:6} {c['confirmed']:9} {c['refuted']:8} {c['inconclusive']:12}")
    print(f"{'all':6} {total['confirmed']:9} {total['refuted']:8} {total['inconclusive']:12}")
    print(f"\n{len(files)} files with error findings; analysis {analysis_s:.1f} s, confirmation cold {cold_s:.1f} s "
          f"(of which reading the models {prepare_s:.1f} s), warm {warm_s:.1f} s")
    print("\ninconclusive, why:")
    for reason, n in reasons.most_common(12):
        print(f"  {n:4}  {reason}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "confirm_errors.json").write_text(json.dumps({
        "projects": projects, "files": len(files), "analysis_s": round(analysis_s, 1),
        "confirm_cold_s": round(cold_s, 1), "confirm_warm_s": round(warm_s, 1), "prepare_s": round(prepare_s, 1),
        "per_rule": {k: dict(v) for k, v in sorted(per_rule.items())}, "total": dict(total),
        "inconclusive_reasons": dict(reasons.most_common(20)),
    }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
