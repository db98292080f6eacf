"""How many findings the engine reports for one problem: one per rule and line, one per file for a
problem the same everywhere, and only the default rule set unless asked."""

from __future__ import annotations

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.findings import (
    MESSAGE_LIMIT,
    Applicability,
    Finding,
    Fix,
    Range,
    Related,
    Severity,
    TextEdit,
)
from tritonlens.analysis.merge import once_per_file, per_line

THREE_LAUNCHES = '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))

def launch(x, y):
    k[(1,)](x, y, BLOCK=3)
    k[(1,)](x, y, BLOCK=5)
    k[(1,)](x, y, BLOCK=6)
'''


def _finding(message: str, *, line: int = 4, column: int = 8, severity=Severity.WARNING, fix=None, related=(),
             data=None, code: str = "TL900") -> Finding:
    return Finding(code, severity, message, Range.of(line, column, line, column + 5), "k", fix, tuple(related), data or {})


def _fix(text: str) -> Fix:
    return Fix("change it", (TextEdit(Range.of(1, 0, 1, 3), text),), Applicability.SAFE)


def test_one_finding_per_line_names_the_other_configurations():
    found = Analyzer().analyze(THREE_LAUNCHES, select=["TL001"]).findings
    assert len(found) == 1
    f = found[0]
    assert "BLOCK=3" in f.message and f.message.endswith("(also BLOCK=5, BLOCK=6)"), f.message
    assert f.data["configurations"] == ["BLOCK=3", "BLOCK=5", "BLOCK=6"]
    assert len(f.related) == 3  # each launch that gives a value


def test_merge_keeps_the_most_severe_and_merges_related():
    a = _finding("slow with BLOCK=16", related=[Related(Range.of(9, 0, 9, 1), "the launch at line 10")])
    b = _finding("wrong with BLOCK=32", severity=Severity.ERROR, related=[Related(Range.of(11, 0, 11, 1), "the launch at line 12")])
    (merged,) = per_line([a, b])
    assert merged.severity is Severity.ERROR
    assert merged.message == "wrong with BLOCK=32 (also BLOCK=16)"
    assert [r.message for r in merged.related] == ["the launch at line 12", "the launch at line 10"]
    assert merged.data["merged"] == 2


def test_merge_keeps_a_fix_only_when_every_fix_is_the_same():
    same = per_line([_finding("x BLOCK=1", fix=_fix("64")), _finding("x BLOCK=2", fix=_fix("64"))])
    assert same[0].fix == _fix("64")
    differ = per_line([_finding("x BLOCK=1", fix=_fix("64")), _finding("x BLOCK=2", fix=_fix("128"))])
    assert differ[0].fix is None
    partly = per_line([_finding("x BLOCK=1", fix=_fix("64")), _finding("x BLOCK=2")])
    assert partly[0].fix is None


def test_other_subjects_on_the_line_are_named():
    a = _finding("'a * s' overflows", column=4)
    b = _finding("'b * t' overflows", column=20)
    c = _finding("'c * u' overflows", column=40)
    (merged,) = per_line([c, a, b])
    assert merged.message == "'a * s' overflows (also 'b * t', 'c * u')"
    assert merged.range == a.range


def test_merged_message_stays_within_the_budget():
    group = [_finding("x" * 80 + f" BLOCK={b}") for b in (16, 32, 64, 128, 256, 512)]
    (merged,) = per_line(group)
    assert merged.message.endswith(" BLOCK=16 (also BLOCK=32, BLOCK=64, …)") and len(merged.message) <= MESSAGE_LIMIT
    # No room for even a count: the message stays as the rule wrote it, the data lists them all.
    group = [_finding("x" * 105 + f" BLOCK={b}") for b in (16, 32, 64, 128, 256, 512)]
    (merged,) = per_line(group)
    assert merged.message == "x" * 105 + " BLOCK=16" and len(merged.data["configurations"]) == 6
    uses = [_finding("y" * 100, line=n, data={"once_per_file": "y"}) for n in (1, 2)]
    assert once_per_file(uses)[0].message == "y" * 100


def test_different_rules_and_lines_are_not_merged():
    group = [_finding("a BLOCK=1"), _finding("a BLOCK=2", code="TL901"), _finding("a BLOCK=3", line=5)]
    assert per_line(group) == group


def test_once_per_file_keeps_the_first_use_and_counts_the_others():
    uses = [_finding("tl.foo was removed", line=n, data={"once_per_file": "tl.foo"}) for n in (30, 10, 20)]
    other = _finding("tl.bar was removed", line=40, data={"once_per_file": "tl.bar"})
    out = once_per_file([*uses, other])
    assert len(out) == 2
    first = next(f for f in out if "foo" in f.message)
    assert first.range.start.line == 10
    assert first.message == "tl.foo was removed (and 2 more uses in this file)"
    assert sorted(r.range.start.line for r in first.related) == [20, 30]
    assert other in out


def test_once_per_file_spans_kernels_in_the_engine(monkeypatch):
    """Kernels are cached one by one; the merge runs over the whole file's findings."""
    import types

    from tritonlens.analysis import engine
    from tritonlens.analysis.rules import RuleInfo

    def check(ctx):
        for call in ctx.kernel.calls_named("store"):
            yield ctx.finding(call.range, "tl.store is gone", data={"once_per_file": "tl.store"})

    rule = types.SimpleNamespace(RULE=RuleInfo("TL999", "test-rule", Severity.WARNING, "test"), check=check)
    monkeypatch.setitem(engine.RULE_MODULES, "TL999", rule)
    text = THREE_LAUNCHES + """
@triton.jit
def other(x_ptr):
    tl.store(x_ptr, 2.0)
"""
    found = Analyzer().analyze(text, select=["TL999"]).findings
    assert [f.message for f in found] == ["tl.store is gone (and 1 more use in this file)"]
    assert found[0].kernel == "k" and found[0].related[0].message == "another use"


MATMUL_FIXED = '''
import triton
import triton.language as tl

@triton.jit
def mm(a_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], tl.dot(a, a))

def run(a, c):
    mm[(1,)](a, c, BLOCK=64)
'''


def test_without_select_only_the_default_rules_run():
    from tritonlens.analysis.rules import RULES

    assert not RULES["TL008"].default
    assert "TL008" not in {f.code for f in Analyzer().analyze(MATMUL_FIXED).findings}
    assert "TL008" in {f.code for f in Analyzer().analyze(MATMUL_FIXED, select=["ALL"]).findings}
    assert {f.code for f in Analyzer().analyze(MATMUL_FIXED, select=["TL008"]).findings} == {"TL008"}
    assert "TL008" not in {f.code for f in Analyzer().analyze(MATMUL_FIXED, select=["ALL"], ignore=["TL008"]).findings}


def test_rules_listing_and_pages_say_which_rules_are_off_by_default(capsys):
    import argparse
    import json

    from tritonlens.analysis.cli import run_rules
    from tritonlens.analysis.rules import ALL_RULES
    from tritonlens.analysis.rules.rule_docs import page

    run_rules(argparse.Namespace(format="json"))
    listed = {r["id"]: r["default"] for r in json.loads(capsys.readouterr().out)}
    assert listed == {code: info.default for code, info in ALL_RULES.items()}
    run_rules(argparse.Namespace(format="text"))
    lines = {x[:5]: x for x in capsys.readouterr().out.splitlines()}
    assert "off by default" in lines["TL008"]
    assert "**Default:** off" in page(ALL_RULES["TL008"]) and "**Default:** on" in page(ALL_RULES["TL002"])
    # A rule turned off for its judged precision says why, in the listing and on its page.
    judged = [code for code, info in ALL_RULES.items() if info.off_because]
    assert "TL106" in judged
    for code in judged:
        assert ALL_RULES[code].off_because in lines[code] and ALL_RULES[code].off_because in page(ALL_RULES[code])


def test_one_selection_for_static_and_compile_rules():
    from tritonlens.analysis.rules import ALL_RULES, is_selected

    off = next(c for c, info in ALL_RULES.items() if not info.default)
    assert not is_selected(off) and is_selected(off, ["ALL"]) and is_selected(off, [off[:3]])
    assert not is_selected("TL106") and is_selected("TL106", ["ALL"]) and is_selected("tl106", ["TL1"])
    assert not is_selected("TL106", ["TL0"]) and not is_selected("TL106", ["ALL"], ["TL106"])
    assert not is_selected("TL106", None, ["TL10"])
