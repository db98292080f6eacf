"""TL025 is a warning: its finding fails only for some inputs, so it is not put to
Triton's front end as an error is, and the confirmation step leaves it as it is."""

from __future__ import annotations

from pathlib import Path

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.findings import Severity
from tritonlens.profiling import confirm_errors as ce
from tritonlens.profiling.confirm_plan import prepare

FIXTURE = Path(__file__).parent.parent / "fixtures" / "rules" / "TL025" / "positive_unrounded_head_dim.py"


def _findings():
    result = Analyzer().analyze(FIXTURE.read_text(encoding="utf-8"), path=str(FIXTURE), select=["TL025"])
    return result


def test_unrounded_size_is_a_warning_naming_size_and_parameter():
    found = _findings().findings
    assert found and all(f.severity is Severity.WARNING for f in found)
    assert any("head_dim" in f.message and "HEAD_DIM" in f.message for f in found)


def test_confirmation_neither_asks_about_nor_changes_it():
    result = _findings()
    assert prepare(result.findings, result.module, str(FIXTURE)).asks == []
    kept = ce.apply(result.findings, {}, default="not confirmed")
    assert kept == result.findings and not any("unconfirmed" in f.data for f in kept)
