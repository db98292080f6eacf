"""The compile-backed rules' (TL101–TL106) precision on their judged samples.

The samples are docs/judgements/compile/TLNNN.md: findings of `tritonlens compile` on corpus files
drawn at random, each judged true / pedantic / false by reading the line and its wrapper. The tables
are read by the static rules' parser (`realworld_precision.judged_sample`); a compile table's row
has a fourth column, the configuration's source, between the verdict and the reason. Nothing is
compiled here: a finding judged once is counted as judged, whether or not it still fires.

Precision is true / judged, the bar a rule must clear (90%) to stay in the default set; a pedantic
finding is right but not worth a user's time, so it counts against it.
"""

from __future__ import annotations

import collections
from pathlib import Path

from realworld_precision import judged_sample

JUDGED = Path(__file__).resolve().parent.parent / "docs" / "judgements" / "compile"
DEFAULT_BAR = 0.90


def compile_precision(folder: Path = JUDGED) -> dict[str, dict]:
    """{rule: {judged, true, pedantic, false, precision, sources: {source: n}}} per judged table."""
    out = {}
    for code, rows in judged_sample(folder).items():
        verdicts = collections.Counter(v for v, _ in rows.values())
        sources = collections.Counter(reason.split("|", 1)[0].strip() for _, reason in rows.values()
                                      if "|" in reason)
        n = sum(verdicts.values())
        out[code] = {"judged": n, **{v: verdicts[v] for v in ("true", "pedantic", "false")},
                     "precision": round(verdicts["true"] / n, 3) if n else None, "sources": dict(sources)}
    return out


def print_precision(rows: dict[str, dict]) -> None:
    """One line per judged compile rule: counts, precision and whether it clears the bar."""
    print("\ncompile rules on their judged samples (docs/judgements/compile), precision = true / judged:")
    for code, r in sorted(rows.items()):
        p = r["precision"]
        shown = "-" if p is None else f"{100 * p:.0f}%"
        bar = "" if p is None else ("  clears 90%" if p >= DEFAULT_BAR else "  under 90%")
        print(f"  {code}  {r['judged']:>3} judged: {r['true']:>3} true {r['pedantic']:>3} pedantic "
              f"{r['false']:>3} false  {shown:>5}{bar}")
