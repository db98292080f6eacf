"""The compile rules' judged samples (docs/judgements/compile) and their place in the default set agree:
a rule under 90% true is off by default and says the counts its table gives."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from compile_precision import DEFAULT_BAR, JUDGED, compile_precision  # noqa: E402


def test_every_row_is_read_with_a_verdict_and_a_source():
    rows = compile_precision()
    assert set(rows) == {f"TL10{i}" for i in range(1, 7)}
    for code, r in rows.items():
        table = (JUDGED / f"{code}.md").read_text(encoding="utf-8")
        lines = [ln for ln in table.splitlines() if ln.startswith("| ") and ":" in ln.split("|")[1]]
        assert r["judged"] == len(lines) == r["true"] + r["pedantic"] + r["false"], code
        assert sum(r["sources"].values()) == r["judged"], code
        assert set(r["sources"]) <= {"pin", "captured", "static", "assumed"}, code


def test_a_rule_under_the_bar_is_off_and_says_its_counts():
    from tritonlens.analysis.rules import ALL_RULES

    for code, r in compile_precision().items():
        info = ALL_RULES[code]
        if r["precision"] < DEFAULT_BAR:
            assert not info.default, code
            assert f"judged {r['true']} of {r['judged']} " in info.off_because, (code, info.off_because)


def test_precision_counts_pedantic_against_the_rule(tmp_path):
    (tmp_path / "TL101.md").write_text(
        "| location | verdict | source | reason |\n|---|---|---|---|\n"
        "| p/a.py:3 | true | static | real |\n"
        "| p/a.py:9 | pedantic | assumed | right, not worth it |\n", encoding="utf-8")
    (r,) = compile_precision(tmp_path).values()
    assert (r["judged"], r["true"], r["pedantic"], r["precision"]) == (2, 1, 1, 0.5)
    assert r["sources"] == {"static": 1, "assumed": 1}
