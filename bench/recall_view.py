"""Recall beside precision: which judged-true findings the default rules still report.

A judged sample (docs/judgements/precision/TLNNN.md) says, per location, whether a rule's finding
there is true, pedantic or false. Precision alone rewards a rule for going quiet, so this module
scores both sides for the rules a user gets without asking:

- kept: judged-true locations a default rule still reports;
- false reported: judged-false locations a default rule still reports;
- not read: judged locations in folders for other vendors' backends, which `check` skips by
  design (their kernels are built by that vendor's Triton fork); they count on neither side.

`write_recall_view` lists every judged-true finding the default rules no longer report, per rule,
with the reason it was judged true and why it is gone (the rule is opt-in, or it no longer fires).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from pathlib import Path

from tritonlens.analysis.file_walk import other_backend

RECALL_TARGET = 0.90
FALSE_TARGET = 0.05


@dataclass
class RuleRecall:
    default: bool
    true: int = 0  # judged true, in folders check reads
    kept: int = 0
    false: int = 0  # judged false, in folders check reads
    false_reported: int = 0
    not_read: int = 0
    lost: list[tuple[str, int, str, str]] = field(default_factory=list)  # (location, line, why, reason)

    @property
    def recall(self) -> float | None:
        return round(self.kept / self.true, 3) if self.true else None

    @property
    def false_rate(self) -> float | None:
        return round(self.false_reported / self.false, 3) if self.false else None

    def as_json(self) -> dict:
        return {"default": self.default, "judged_true": self.true, "kept": self.kept, "recall": self.recall,
                "judged_false": self.false, "false_reported": self.false_reported,
                "false_rate": self.false_rate, "not_read": self.not_read,
                "lost": [{"location": f"{loc}:{line}", "why": why, "reason": reason}
                         for loc, line, why, reason in self.lost]}


def in_other_backend(location: str) -> bool:
    return any(other_backend(part) for part in Path(location).parts[:-1])


def score(firing: set[tuple[str, int, str]], sample: dict, defaults: set[str], window: int = 0
          ) -> dict[str, RuleRecall]:
    """Per rule, the default set's recall and false-report rate over the judged sample; a finding within
    `window` lines of a judged location counts as reported there."""
    out: dict[str, RuleRecall] = {}
    for code, rows in sorted(sample.items()):
        r = out[code] = RuleRecall(default=code in defaults)
        for (loc, line), (verdict, reason) in sorted(rows.items()):
            if in_other_backend(loc):
                r.not_read += 1
                continue
            reported = r.default and any((loc, n, code) in firing for n in range(line - window, line + window + 1))
            if verdict == "true":
                r.true += 1
                if reported:
                    r.kept += 1
                else:
                    if r.default:
                        why = "no longer fires"
                    else:
                        why = "rule is opt-in" + (" (fires with --select)" if (loc, line, code) in firing else "")
                    r.lost.append((loc, line, why, reason))
            elif verdict == "false":
                r.false += 1
                r.false_reported += reported
    return out


def overall(rules: dict[str, RuleRecall]) -> dict:
    c = collections.Counter()
    for r in rules.values():
        c.update(true=r.true, kept=r.kept, false=r.false, false_reported=r.false_reported)
    return {"judged_true": c["true"], "kept": c["kept"],
            "recall": round(c["kept"] / c["true"], 3) if c["true"] else None,
            "judged_false": c["false"], "false_reported": c["false_reported"],
            "false_rate": round(c["false_reported"] / c["false"], 3) if c["false"] else None}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def print_recall(rules: dict[str, RuleRecall]) -> None:
    print(f"\n{'rule':<7}{'default':>8}{'true':>6}{'kept':>6}{'recall':>8}{'false':>7}{'reported':>9}{'rate':>6}"
          f"{'not read':>9}")
    for code, r in rules.items():
        if not (r.true or r.false or r.not_read):
            continue
        print(f"{code:<7}{'yes' if r.default else 'opt-in':>8}{r.true:>6}{r.kept:>6}{_pct(r.recall):>8}"
              f"{r.false:>7}{r.false_reported:>9}{_pct(r.false_rate):>6}{r.not_read:>9}")
    o = overall(rules)
    print(f"{'all':<7}{'':>8}{o['judged_true']:>6}{o['kept']:>6}{_pct(o['recall']):>8}{o['judged_false']:>7}"
          f"{o['false_reported']:>9}{_pct(o['false_rate']):>6}")
    print(f"targets: recall ≥ {RECALL_TARGET:.0%} and false reports ≤ {FALSE_TARGET:.0%}, per default rule and "
          "overall (judged locations in other vendors' backend folders are not read by check)")


def write_recall_view(rules: dict[str, RuleRecall], path: Path) -> None:
    o = overall(rules)
    lines = [
        "# Recall view: judged-true findings the default rules no longer report",
        "",
        "Written by `bench/realworld_precision.py` from the judged samples beside this file; do not edit.",
        (f"Default rules keep {o['kept']} of {o['judged_true']} judged-true findings ({_pct(o['recall'])}) and report "
         f"{o['false_reported']} of {o['judged_false']} judged-false ones ({_pct(o['false_rate'])})."),
        "Locations in other vendors' backend folders, which `check` skips by design, count on neither side.",
        "",
        "| rule | default | judged true | kept | recall | judged false | reported | not read |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for code, r in rules.items():
        if r.true or r.false or r.not_read:
            lines.append(f"| {code} | {'yes' if r.default else 'opt-in'} | {r.true} | {r.kept} | {_pct(r.recall)} | "
                         f"{r.false} | {r.false_reported} | {r.not_read} |")
    for code, r in rules.items():
        if not r.lost:
            continue
        lines += ["", f"## {code}: {len(r.lost)} lost", "", "| location | why lost | judged true because |", "|---|---|---|"]
        lines += [f"| {loc}:{line} | {why} | {reason} |" for loc, line, why, reason in r.lost]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
