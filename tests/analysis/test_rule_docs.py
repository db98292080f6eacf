"""Rule pages are generated from the rule modules' docstrings (ruff's convention): the committed
docs/rules/*.md must be exactly what scripts/gen_rule_docs.py writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tritonlens.analysis.findings import Applicability
from tritonlens.analysis.rules import ALL_RULES, COMPILE_RULES, RULES
from tritonlens.analysis.rules.base import RuleInfo
from tritonlens.analysis.rules.rule_docs import missing_sections, page

REPO = Path(__file__).resolve().parents[2]


def test_committed_pages_are_generated():
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_rule_docs.py"), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, "stale rule pages; run `python scripts/gen_rule_docs.py`:\n" + r.stderr


@pytest.mark.parametrize("code", list(ALL_RULES))
def test_docstring_is_a_full_page(code: str):
    info = ALL_RULES[code]
    assert missing_sections(info) == [], f"{code}'s docstring lacks {missing_sections(info)}"
    text = page(info)
    assert text.startswith(f"# {code} — ")
    assert f"**Severity:** {info.severity.value}" in text.splitlines()[2]


def test_every_fix_declares_its_applicability():
    fixable = {code: r for code, r in RULES.items() if r.fix_title}
    assert fixable, "no rule offers a fix"
    for code, r in fixable.items():
        assert isinstance(r.fix_applicability, Applicability) and len(r.fix_safety) > 20, code
        assert f"## Fix safety\nThis fix is {r.fix_applicability.value}" in page(r)
    assert all(r.fix_applicability is None and r.kind == "compile" for r in COMPILE_RULES.values())


def test_a_fix_without_applicability_is_refused():
    with pytest.raises(ValueError):
        RuleInfo("TL999", "x", RULES["TL001"].severity, "x", fix_title="do it")
