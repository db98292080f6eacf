"""How precise `tritonlens check` is on real projects' Triton kernels, as a new user would run it.

The projects are the coverage bench's (`bench/realworld.py`, with geak-eval's TritonBench files): published wheels and sdists from PyPI
in a cache outside the repository, read in place and never copied into it. Every project is checked
by the real command line (`tritonlens check --format json`, every rule selected, error findings
confirmed by the compiler as `check` does by default) and the bench prints, per project and rule:

- findings, and which rules are in the default set;
- duplicates: more than one finding of one rule on one line;
- error-severity findings, and how many of them the compiler confirmed;
- precision from the judged sample in docs/judgements/precision/TLNNN.md (file:line → true /
  pedantic / false, with a reason): precision counts true and pedantic findings, useful counts true
  ones only, over the judged locations that still fire; judged locations that no longer fire are
  counted apart, as the fixes they are.

Run: python bench/realworld_precision.py [--projects liger-kernel,...] [--offline] [--no-confirm]
     → table + bench/results/realworld_precision.json and docs/judgements/precision/recall.md

`--held-out NAME` runs the same on a held-out set (sdists unpacked under the cache's NAME/src, set
aside before a round of rule changes) against its blind judgements in docs/judgements/precision/NAME/,
and lists the default rules' findings there that nobody judged. A blind reader picks the line of a
problem without seeing the rule's, so `--window W` also counts a finding within W lines of a judged
location as reported there (printed beside the exact-line figures).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import re
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from realworld import ALL_PROJECTS, CACHE, RESULTS, fetch
from recall_view import overall, print_recall, score, write_recall_view

JUDGED = Path(__file__).resolve().parent.parent / "docs" / "judgements" / "precision"
VERDICTS = ("true", "pedantic", "false")
_ROW = re.compile(r"^\|\s*([^|]+?):(\d+)\s*\|\s*(true|pedantic|false)\s*\|\s*(.*?)\s*\|\s*$")


def judged_sample(folder: Path = JUDGED) -> dict[str, dict[tuple[str, int], tuple[str, str]]]:
    """{rule: {(path relative to the corpus, line): (verdict, reason)}} from the judgement files."""
    out: dict[str, dict[tuple[str, int], tuple[str, str]]] = {}
    for md in sorted(folder.glob("TL*.md")):
        rows = out.setdefault(md.stem.upper(), {})
        for line in md.read_text(encoding="utf-8").splitlines():
            m = _ROW.match(line)
            if m:
                rows[(m.group(1).strip(), int(m.group(2)))] = (m.group(3), m.group(4))
    return out


def run_check(folder: Path, confirm: bool, timeout: float) -> tuple[list[dict], float]:
    """The findings `tritonlens check` reports for `folder`, every rule selected."""
    cmd = [sys.executable, "-m", "tritonlens", "check", "--format", "json", "--select", "ALL", str(folder)]
    if not confirm:
        cmd.insert(-1, "--no-confirm")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"check failed on {folder} (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    doc = json.loads(proc.stdout or "[]")
    findings = doc["findings"] if isinstance(doc, dict) else doc
    return findings, seconds


def default_rules() -> set[str]:
    from tritonlens.analysis.rules import ALL_RULES

    return {code for code, info in ALL_RULES.items() if getattr(info, "default", True)}


def summarize(findings: list[dict], root: Path) -> dict:
    per_rule = collections.Counter(f["code"] for f in findings)
    per_line = collections.Counter((f["path"], f["line"], f["code"]) for f in findings)
    errors = [f for f in findings if f["severity"] == "error"]
    return {
        "findings": len(findings),
        "per_rule": dict(sorted(per_rule.items())),
        "duplicate_findings": sum(n - 1 for n in per_line.values() if n > 1),
        "lines_with_duplicates": sum(1 for n in per_line.values() if n > 1),
        "errors": len(errors),
        "errors_confirmed": sum(1 for f in errors if f.get("confirmed")),
        # Error candidates Triton's front end could not judge, shown as warnings.
        "unconfirmed": sum(1 for f in findings if f.get("unconfirmed")),
        "errors_per_rule": dict(sorted(collections.Counter(f["code"] for f in errors).items())),
        "firing": sorted({(_relative(f["path"], root), f["line"], f["code"]) for f in findings}),
    }


def _relative(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def precision(firing: set[tuple[str, int, str]], sample: dict) -> dict[str, dict]:
    out = {}
    for code, rows in sorted(sample.items()):
        live = collections.Counter()
        gone = collections.Counter()
        for (loc, line), (verdict, _) in rows.items():
            (live if (loc, line, code) in firing else gone)[verdict] += 1
        n = sum(live.values())
        out[code] = {
            "judged": len(rows), "still_firing": n, "verdicts": dict(live), "no_longer_firing": dict(gone),
            "precision": round((live["true"] + live["pedantic"]) / n, 3) if n else None,
            "useful": round(live["true"] / n, 3) if n else None,
        }
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", default=",".join(ALL_PROJECTS))
    ap.add_argument("--offline", action="store_true", help="use only what the cache holds")
    ap.add_argument("--no-confirm", action="store_true", help="skip the compiler's confirmation of errors")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per project")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--held-out", metavar="NAME", help="a held-out set (heldout, heldout2) and its blind judgements")
    ap.add_argument("--window", type=int, default=0, help="also count findings within this many lines")
    args = ap.parse_args(argv)
    if args.held_out:
        root, judged_folder = CACHE / args.held_out / "src", JUDGED / args.held_out
        name = f"realworld_precision_{args.held_out}"
        folders = {d.name: (d.name, d) for d in sorted(root.iterdir()) if d.is_dir()}
    else:
        root, judged_folder, name = CACHE / "src", JUDGED, "realworld_precision"
        folders = fetch([p.strip() for p in args.projects.split(",") if p.strip()], args.offline)
    defaults = default_rules()
    rows, firing, total = {}, set(), collections.Counter()
    print(f"{'project':<14}{'findings':>9}{'dup':>6}{'errors':>8}{'confirmed':>10}{'unconfirmed':>12}{'s':>8}")
    for project, (archive, folder) in folders.items():
        findings, seconds = run_check(folder, not args.no_confirm, args.timeout)
        r = summarize(findings, root)
        firing.update(r.pop("firing"))
        rows[project] = {"archive": archive, "seconds": round(seconds, 1), **r}
        total.update(r["per_rule"])
        print(f"{project:<14}{r['findings']:>9}{r['duplicate_findings']:>6}{r['errors']:>8}"
              f"{r['errors_confirmed']:>10}{r['unconfirmed']:>12}{seconds:>8.1f}")
    judged = judged_sample(judged_folder)
    sample = precision(firing, judged)
    codes = sorted(set(total) | set(sample))
    print()
    print(f"{'rule':<7}{'default':>8}" + "".join(f"{p[:10]:>11}" for p in rows) + f"{'total':>8}"
          f"{'judged':>8}{'prec':>7}{'useful':>7}{'fixed':>7}")
    for code in codes:
        s = sample.get(code, {})
        cells = "".join(f"{rows[p]['per_rule'].get(code, 0):>11}" for p in rows)
        prec = f"{s['precision']:.0%}" if s.get("precision") is not None else "-"
        useful = f"{s['useful']:.0%}" if s.get("useful") is not None else "-"
        fixed = sum(s.get("no_longer_firing", {}).values())
        print(f"{code:<7}{'yes' if code in defaults else 'opt-in':>8}{cells}{total.get(code, 0):>8}"
              f"{s.get('still_firing', 0):>8}{prec:>7}{useful:>7}{fixed:>7}")
    errors = sum(r["errors"] for r in rows.values())
    confirmed = sum(r["errors_confirmed"] for r in rows.values())
    dups = sum(r["duplicate_findings"] for r in rows.values())
    unconfirmed = sum(r["unconfirmed"] for r in rows.values())
    print(f"\nerrors: {errors}, confirmed by the compiler: {confirmed}; candidates it could not judge (shown as "
          f"warnings): {unconfirmed}; duplicate findings (rule × line): {dups}")
    recall = score(firing, judged, defaults)
    print_recall(recall)
    if args.window:
        print(f"\nwithin {args.window} lines of the judged line:")
        print_recall(score(firing, judged, defaults, window=args.window))
    unjudged = sorted((loc, line, code) for loc, line, code in firing
                      if code in defaults and (loc, line) not in judged.get(code, {}))
    if args.held_out:
        print(f"\n{len(unjudged)} default-rule findings at locations not judged:")
        for loc, line, code in unjudged:
            print(f"  {code} {loc}:{line}")
    if not args.no_write:
        write_recall_view(recall, judged_folder / "recall.md")
        RESULTS.mkdir(exist_ok=True)
        out = {"date": date.today().isoformat(), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
               "python": platform.python_version(), "confirm": not args.no_confirm, "projects": rows,
               "per_rule_total": dict(sorted(total.items())), "default_rules": sorted(defaults),
               "precision": sample,
               "recall": {code: r.as_json() for code, r in recall.items()}, "recall_overall": overall(recall),
               **({"unjudged": [f"{code} {loc}:{line}" for loc, line, code in unjudged]} if args.held_out else {}),
               "errors": errors, "errors_confirmed": confirmed, "unconfirmed": unconfirmed, "duplicates": dups}
        (RESULTS / f"{name}.json").write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {RESULTS / f'{name}.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
