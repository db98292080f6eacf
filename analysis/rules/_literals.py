"""Editing the literal a configuration value came from (for fixes of TL009 and TL015).

Not a rule (the registry only loads `tl*` modules). A value's origin range is either the literal
itself (`num_warps=16` at a launch, `triton.Config({"BLOCK": 64})`) or a wrapper assignment
`BLOCK = 64`; only those are rewritten, never an expression whose value we merely computed.
"""

from __future__ import annotations

import re

from ..findings import Position, Range, TextEdit

_ASSIGN_INT = re.compile(r"^(\s*[A-Za-z_][A-Za-z_0-9]*\s*=\s*)(\d+)\s*$")


def literal_edit(src, rng: Range | None, new_value: int) -> TextEdit | None:
    """A TextEdit replacing the integer literal at `rng` (or on the right of `NAME = <int>` there)."""
    if rng is None or rng.start.line != rng.end.line:
        return None
    line = src.line_text(rng.start.line)
    text = line[rng.start.column:rng.end.column]
    if text.strip().isdigit():
        lead = len(text) - len(text.lstrip())
        start = rng.start.column + lead
        return TextEdit(Range(Position(rng.start.line, start), Position(rng.start.line, start + len(text.strip()))),
                        str(new_value))
    m = _ASSIGN_INT.match(text)
    if m:
        start = rng.start.column + len(m.group(1))
        return TextEdit(Range(Position(rng.start.line, start), Position(rng.start.line, start + len(m.group(2)))),
                        str(new_value))
    return None


def is_wrapper_assignment(src, rng: Range | None) -> bool:
    if rng is None or rng.start.line != rng.end.line:
        return False
    line = src.line_text(rng.start.line)
    return bool(_ASSIGN_INT.match(line[rng.start.column:rng.end.column]))
