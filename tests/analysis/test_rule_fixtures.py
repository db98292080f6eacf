"""Every rule against its fixtures: tests/fixtures/rules/TLxxx/{positive,negative}_*.py.

A positive fixture marks each line where the rule must fire with `# expect: TLxxx` (several
codes separated by commas); the rule must fire there and nowhere else in that file. A negative
fixture must give the rule nothing to say.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.rules import RULES

FIXTURES = Path(__file__).parent.parent / "fixtures" / "rules"
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def _cases():
    for d in sorted(FIXTURES.iterdir()):
        if d.is_dir():
            for f in sorted(d.glob("*.py")):
                yield pytest.param(d.name, f, id=f"{d.name}/{f.name}")


def _expected(text: str, code: str) -> set[int]:
    lines = set()
    for i, line in enumerate(text.splitlines()):
        m = EXPECT.search(line)
        if m and code in {c.strip() for c in m.group(1).split(",")}:
            lines.add(i + 1)
    return lines


@pytest.mark.parametrize("code,path", list(_cases()))
def test_fixture(code: str, path: Path):
    assert code in RULES, f"fixtures for unknown rule {code}"
    text = path.read_text()
    result = Analyzer().analyze(text, path=str(path), select=[code])
    assert not result.errors, result.errors
    got = {f.range.start.line + 1 for f in result.findings if f.code == code}
    if path.name.startswith("negative"):
        assert got == set(), f"{code} fired on a negative fixture at lines {sorted(got)}"
    else:
        want = _expected(text, code)
        assert want, f"positive fixture {path.name} marks no `# expect: {code}` line"
        assert got == want, f"{code}: fired at {sorted(got)}, expected {sorted(want)}"


def test_every_rule_has_doc_and_fixtures():
    for code, info in RULES.items():
        assert info.doc_path.is_file(), f"{code} has no docs/rules/{code}.md"
        doc = info.doc_path.read_text()
        for heading in ("## What it finds", "## Why", "## Example", "## Fix"):
            assert heading in doc, f"{code} doc lacks {heading!r}"
        d = FIXTURES / code
        assert any(d.glob("positive*.py")), f"{code} has no positive fixture"
        assert any(d.glob("negative*.py")), f"{code} has no negative fixture"
