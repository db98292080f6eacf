#!/usr/bin/env python
"""Write docs/rules/TLxxx.md from each rule module's docstring and metadata.

The pages are committed (GitHub links and the editor's rule links point at them, and the package
ships them); tests/analysis/test_rule_docs.py fails when a page differs from what this writes.

Usage: python scripts/gen_rule_docs.py          # rewrite the pages, delete pages of no rule
       python scripts/gen_rule_docs.py --check  # exit 1 listing the pages that are stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tritonlens.analysis.rules import ALL_RULES
from tritonlens.analysis.rules.rule_docs import page

DOCS = Path(__file__).resolve().parents[1] / "docs" / "rules"


def expected() -> dict[str, str]:
    return {f"{code}.md": page(info) for code, info in ALL_RULES.items()}


def stale(want: dict[str, str]) -> list[str]:
    have = {p.name for p in DOCS.glob("*.md")}
    out = [name for name, text in want.items() if not (DOCS / name).is_file() or (DOCS / name).read_text(encoding="utf-8") != text]
    return sorted(out + sorted(have - want.keys()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report stale pages (exit 1 if any)")
    args = ap.parse_args(argv)
    want = expected()
    bad = stale(want)
    if args.check:
        for name in bad:
            print(f"stale: docs/rules/{name}", file=sys.stderr)
        return 1 if bad else 0
    for name in bad:
        path = DOCS / name
        if name in want:
            path.write_text(want[name], encoding="utf-8")
            print(f"wrote docs/rules/{name}")
        else:
            path.unlink()
            print(f"removed docs/rules/{name} (no such rule)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
