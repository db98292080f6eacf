"""Findings from slow producers (profiling, compiling) follow their kernel through edits above
it and disappear when the kernel itself changes."""

from __future__ import annotations

from pathlib import Path

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.findings import Finding, Range, Severity
from tritonlens.server.diagnostics import AnchoredFinding, kernel_hash

TEXT = (Path(__file__).parent / "data" / "scale.py").read_text()


def _anchored() -> AnchoredFinding:
    k = Analyzer().analyze(TEXT).module.kernel("scale_kernel")
    f = Finding(code="profile", severity=Severity.INFO, message="35% of copy bandwidth: memory-bound; see hover",
                range=k.name_range, kernel=k.name)
    return AnchoredFinding(f, k.name, kernel_hash(k.text), k.range.start.line)


def test_moves_with_lines_inserted_above():
    a = _anchored()
    moved = Analyzer().analyze("# one\n# two\n" + TEXT).module
    placed = a.placed(moved)
    assert placed is not None
    assert placed.range == Range.of(a.finding.range.start.line + 2, a.finding.range.start.column,
                                    a.finding.range.end.line + 2, a.finding.range.end.column)
    assert placed.fix is None


def test_dropped_when_the_kernel_changes():
    a = _anchored()
    changed = Analyzer().analyze(TEXT.replace("x * 2", "x * 3")).module
    assert a.placed(changed) is None
    assert a.placed(Analyzer().analyze(TEXT.replace("scale_kernel", "other_kernel")).module) is None


def test_lines_named_in_the_message_move_with_it():
    k = Analyzer().analyze(TEXT).module.kernel("scale_kernel")
    line = k.range.start.line + 2
    f = Finding(code="TL102", severity=Severity.WARNING, message=f"registers spill at line {line + 1}",
                range=Range.of(line, 4, line, 20), kernel=k.name, data={"source_line": line + 1})
    placed = AnchoredFinding(f, k.name, kernel_hash(k.text), k.range.start.line).placed(
        Analyzer().analyze("# one\n# two\n" + TEXT).module)
    assert placed.message == f"registers spill at line {line + 3}"
    assert placed.data == {"source_line": line + 3}
    assert placed.range == Range.of(line + 2, 4, line + 2, 20)
