"""Every rule against its fixtures, pinned by a snapshot (ruff's fixture + snapshot).

tests/fixtures/rules/TLxxx/ holds `positive_*.py` and `negative_*.py` fixtures and TLxxx.snap,
the rule's findings on them: for each finding its severity, range, kernel, message, related
locations, and its fix as applicability, title and the unified diff the fix makes to the fixture.
A mismatch fails with the diff between the committed snapshot and what the rule reports now;
after checking that the new behaviour is right, regenerate with

    TRITONLENS_UPDATE_SNAPSHOTS=1 pytest tests/analysis/test_rule_fixtures.py

and review the snapshot's diff before committing it. Fixtures also mark each line where the rule
must fire with `# expect: TLxxx`, so a regenerated snapshot cannot silently drop or add a finding.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import pytest
from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.findings import MESSAGE_LIMIT, Finding, Range, apply_edits
from tritonlens.analysis.rules import RULES

FIXTURES = Path(__file__).parent.parent / "fixtures" / "rules"
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")
UPDATE = os.environ.get("TRITONLENS_UPDATE_SNAPSHOTS") == "1"


def _rules_with_fixtures() -> list[str]:
    return sorted(d.name for d in FIXTURES.iterdir() if d.is_dir())


def _fixtures(code: str) -> list[Path]:
    return sorted((FIXTURES / code).glob("*.py"))


def _analyze(code: str, path: Path) -> tuple[str, list[Finding]]:
    text = path.read_text(encoding="utf-8")
    result = Analyzer().analyze(text, path=str(path), select=[code])
    assert not result.errors, result.errors
    return text, [f for f in result.findings if f.code == code]


def _span(r: Range) -> str:
    return f"{r.start.line + 1}:{r.start.column + 1}-{r.end.line + 1}:{r.end.column + 1}"


def _fix_diff(text: str, f: Finding, name: str) -> list[str]:
    fixed = apply_edits(text, f.fix.edits)
    diff = difflib.unified_diff(text.splitlines(), fixed.splitlines(), f"a/{name}", f"b/{name}", n=0, lineterm="")
    return [line for line in diff if not line.startswith(("---", "+++"))]


def render(code: str) -> str:
    """The snapshot of `code` on its fixtures, as committed in TLxxx.snap."""
    out = [f"# {code} on tests/fixtures/rules/{code}/ (regenerate: TRITONLENS_UPDATE_SNAPSHOTS=1)"]
    for path in _fixtures(code):
        text, findings = _analyze(code, path)
        out += ["", f"== {path.name}"]
        if not findings:
            out.append("(no findings)")
        for f in sorted(findings, key=lambda f: (f.range, f.message)):
            out.append(f"{_span(f.range)} {f.severity.value} [{f.kernel}]")
            out.append(f"  message: {f.message}")
            for r in f.related:
                out.append(f"  related {_span(r.range)}: {r.message}")
            if f.fix is not None:
                out.append(f"  fix ({f.fix.applicability.value}): {f.fix.title}")
                out += ["    " + line for line in _fix_diff(text, f, path.name)]
    return "\n".join(out) + "\n"


def _expected_lines(text: str, code: str) -> set[int]:
    lines = set()
    for i, line in enumerate(text.splitlines()):
        m = EXPECT.search(line)
        if m and code in {c.strip() for c in m.group(1).split(",")}:
            lines.add(i + 1)
    return lines


@pytest.mark.parametrize("code", _rules_with_fixtures())
def test_fixture_lines(code: str):
    """Where the rule fires on each fixture: exactly the `# expect:` lines, none on negatives; each
    message within MESSAGE_LIMIT and without markdown."""
    assert code in RULES, f"fixtures for unknown rule {code}"
    for path in _fixtures(code):
        text, findings = _analyze(code, path)
        got = {f.range.start.line + 1 for f in findings}
        for f in findings:  # plain text within the limit: see test_finding_messages.py
            assert len(f.message) <= MESSAGE_LIMIT and "`" not in f.message, f"{code} on {path.name}: {f.message!r}"
        if path.name.startswith("negative"):
            assert got == set(), f"{code} fired on {path.name} at lines {sorted(got)}"
        else:
            want = _expected_lines(text, code)
            assert want, f"positive fixture {path.name} marks no `# expect: {code}` line"
            assert got == want, f"{code} on {path.name}: fired at {sorted(got)}, expected {sorted(want)}"


@pytest.mark.parametrize("code", _rules_with_fixtures())
def test_snapshot(code: str):
    snap = FIXTURES / code / f"{code}.snap"
    now = render(code)
    if UPDATE:
        if not snap.is_file() or snap.read_text(encoding="utf-8") != now:
            snap.write_text(now, encoding="utf-8")
        return
    assert snap.is_file(), f"{code} has no snapshot; create it with TRITONLENS_UPDATE_SNAPSHOTS=1"
    committed = snap.read_text(encoding="utf-8")
    if committed != now:
        diff = difflib.unified_diff(committed.splitlines(), now.splitlines(), f"{code}.snap (committed)",
                                    f"{code}.snap (now)", lineterm="")
        pytest.fail(f"{code}'s findings differ from its snapshot:\n" + "\n".join(diff)
                    + "\n\nIf the new output is right: TRITONLENS_UPDATE_SNAPSHOTS=1 pytest " + __file__, pytrace=False)


def test_every_rule_has_fixtures_and_snapshot():
    for code in RULES:
        d = FIXTURES / code
        assert any(d.glob("positive*.py")), f"{code} has no positive fixture"
        assert any(d.glob("negative*.py")), f"{code} has no negative fixture"
        assert (d / f"{code}.snap").is_file(), f"{code} has no snapshot"
