"""Every quick fix a rule fixture offers, applied alone, still compiles with the real Triton.

A fix is only worth offering if the kernel it produces builds: for each finding with a fix in
tests/fixtures/rules/TLNNN/*.py the fix's edits are applied on their own (as the editor applies
one quick fix), the fixed kernel is cross-compiled for sm_90 in every configuration the static
model resolves (its launch sites and autotune configs), and the analyzer, run again on the fixed
text, must no longer report that finding on that line.

A kernel no launch site resolves (fixtures often have no launcher) gets one appended to the
compiled text only, passing PROBE_VALUE for each constexpr that has no default: a power of two
of at least 16, which every tile rule accepts, so a failure is the fix's and not the guess's.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("triton")

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.findings import Finding, apply_edits
from tritonlens.analysis.values import UNKNOWN
from tritonlens.profiling.compile_job import compile_file
from tritonlens.profiling.static_configs import static_configs_of_text

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rules"
PROBE_VALUE = 64
PROBE_LAUNCHER = "_fix_compile_probe"

# (rule, fixture, 1-based line) of fixes known to give a kernel Triton refuses, with the reason;
# strict: once the rule is fixed the entry must go.
KNOWN_BROKEN: dict[tuple[str, str, int], str] = {}


@dataclass(frozen=True)
class FixCase:
    rule: str
    fixture: Path
    finding: Finding

    @property
    def line(self) -> int:
        return self.finding.range.start.line + 1

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.fixture.stem}-L{self.line}"


_analyzer = Analyzer()


def _cases() -> list[FixCase]:
    out: list[FixCase] = []
    for path in sorted(FIXTURES.glob("TL*/*.py")):
        rule = path.parent.name
        seen = set()
        for f in _analyzer.analyze(path.read_text(), path=str(path), select=[rule]).findings:
            if f.code != rule or f.fix is None or not f.fix.edits:
                continue
            key = (f.range.start.line, f.fix.edits)  # one configuration's copy of the same fix is enough
            if key not in seen:
                seen.add(key)
                out.append(FixCase(rule, path, f))
    return out


CASES = _cases()


def _probe_launch(text: str, kernel: str) -> str | None:
    """A launcher of `kernel` for the static model to resolve: one launch per configuration the
    file gives, passing the constexprs it knows and PROBE_VALUE for the others (an autotuned
    kernel: only those its configs leave open). None when the kernel is not in the text."""
    module = _analyzer.analyze(text).module
    k = next((k for k in module.kernels if k.name == kernel), None) if module is not None else None
    if k is None:
        return None
    open_params = [p.name for p in k.params if p.is_constexpr and not p.has_default]
    if k.autotuned:
        tuned = {n for c in k.autotune_configs for n in c.values}
        calls = [{n: PROBE_VALUE for n in open_params if n not in tuned}]
    else:
        calls = []
        for cfg in k.configs or [None]:
            known = {n: cfg.get(n) for n in open_params} if cfg is not None else {}
            call = {n: v if v is not UNKNOWN and isinstance(v, (bool, int, float)) else PROBE_VALUE
                    for n, v in known.items()} if known else {n: PROBE_VALUE for n in open_params}
            if call not in calls:
                calls.append(call)
    body = "".join(f"    {kernel}[(1,)]({', '.join(f'{n}={v!r}' for n, v in call.items())})\n" for call in calls)
    return f"\n\ndef {PROBE_LAUNCHER}():\n{body}"


def _configs(text: str, kernel: str) -> tuple[str, list[dict], str]:
    """(text to compile, its static configurations of `kernel`, what was assumed)."""
    configs, info = static_configs_of_text(text, {kernel})
    if configs.get(kernel):
        return text, configs[kernel], ""
    probe = _probe_launch(text, kernel)
    if probe is None:
        return text, [], info[kernel].note if kernel in info else "not a kernel the static model sees"
    probed = text + probe
    configs, info = static_configs_of_text(probed, {kernel})
    note = info[kernel].note if kernel in info else ""
    return probed, configs.get(kernel, []), note or f"no launch resolves it: each unknown constexpr = {PROBE_VALUE}"


def _diff(before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "fixture", "fixed", n=1))


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=pytest.mark.xfail(
    reason=KNOWN_BROKEN[(c.rule, c.fixture.name, c.line)], strict=True))
    if (c.rule, c.fixture.name, c.line) in KNOWN_BROKEN else pytest.param(c, id=c.id) for c in CASES])
def test_fix_compiles(case: FixCase, tmp_path):
    text = case.fixture.read_text()
    f = case.finding
    fixed = apply_edits(text, f.fix.edits)
    where = f"{case.rule} fix {f.fix.title!r} of {case.fixture.parent.name}/{case.fixture.name}:{case.line} ({f.kernel})"
    assert fixed != text, f"{where} changes nothing"

    again = [g for g in _analyzer.analyze(fixed, path=str(case.fixture), select=[case.rule]).findings
             if g.code == f.code and g.range.start.line == f.range.start.line and g.message == f.message]
    assert not again, f"{where}: still reported after the fix: {again[0].message}\n" + _diff(text, fixed)

    failures, note = _compile_errors(fixed, f.kernel, tmp_path / "fixed", where)
    if failures:
        # The same refusal without the fix comes from the assumed arguments: most often a pointer
        # assumed to hold floats whose loads are indices (`page = tl.load(slot_ptr + tok)`). Try
        # each pointer as int32 instead; a variant the unfixed kernel compiles in judges the fix.
        before, _ = _compile_errors(text, f.kernel, tmp_path / "original", where)
        if set(failures) <= set(before):
            for pointer in _pointer_args(fixed, f.kernel):
                retyped = {pointer: {"kind": "tensor", "dtype": "int32", "align": 16}}
                if _compile_errors(text, f.kernel, tmp_path / "original", where, retyped)[0] == []:
                    failures, note = _compile_errors(fixed, f.kernel, tmp_path / "fixed", where, retyped)
                    note = f"{note}; {pointer} taken as int32" if note else f"{pointer} taken as int32"
                    break
            else:
                pytest.skip(f"{where}: the fixture does not compile with assumed arguments, fix or not: {failures[0]}")
    assert not failures, (f"{where} gives a kernel Triton refuses" + (f" [{note}]" if note else "") + ":\n  "
                          + "\n  ".join(failures) + "\n" + _diff(text, fixed))


def _pointer_args(text: str, kernel_name: str) -> list[str]:
    _, configs, _ = _configs(text, kernel_name)
    return sorted({n for c in configs for n, a in c["args"].items() if a.get("kind") == "tensor"})


def _compile_errors(text: str, kernel_name: str, folder: Path, where: str,
                    retyped: dict | None = None) -> tuple[list[str], str]:
    """The configurations of `kernel_name` Triton refuses in `text`, as 'label: message (line N)';
    `retyped` replaces some arguments' assumed descriptions."""
    compiled, configs, note = _configs(text, kernel_name)
    assert configs, f"{where}: no configuration to compile the kernel in ({note}); give the fixture a launch"
    if retyped:
        configs = [{**c, "args": {**c["args"], **retyped}} for c in configs]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "kernels.py"
    path.write_text(compiled)
    report = compile_file(path, text=compiled, kernel=kernel_name, configs={kernel_name: configs})
    assert report.error is None, f"{where}: the module did not load: {report.error}"
    kernel = next((k for k in report.kernels if k.name == kernel_name), None)
    assert kernel is not None and kernel.configs, f"{where}: the compile job compiled nothing"
    return [f"{c.label}: {c.error.message} (line {c.error.line})" for c in kernel.configs if c.error is not None], note


def test_known_broken_fixes_are_still_offered():
    """An entry whose fix is gone (the rule changed) must go too."""
    offered = {(c.rule, c.fixture.name, c.line) for c in CASES}
    assert set(KNOWN_BROKEN) <= offered, sorted(set(KNOWN_BROKEN) - offered)


def test_every_rule_with_a_fix_has_a_fixture_case():
    """A rule that declares a fix must have it exercised here."""
    from tritonlens.analysis.rules import RULES

    with_fix = {code for code, rule in RULES.items() if rule.fix_title is not None}
    assert with_fix, "no rule declares a fix"
    assert with_fix <= {c.rule for c in CASES}, sorted(with_fix - {c.rule for c in CASES})
