"""Moving findings to where their text now is.

A finding computed on one version of a file stays true on a later version whose relevant text is
unchanged but sits on other lines: the engine's per-kernel cache serves the findings of a kernel
(and of the wrappers launching it, the constants it reads) wherever that text now is, and the
server keeps slow producers' findings on their kernel while the user types above it. Whatever
names a line moves: ranges, related locations, fix edits, and the "line N" a message or its data
mentions (the launch, the loop, the module constant a finding explains itself with).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from .findings import Finding, Range, Related, TextEdit

# How messages name a line: "the launch at line 31", "autotune config #2 (line 5)". 1-based.
_MENTION = re.compile(r"\bline (\d+)\b")

LineMap = Callable[[int], "int | None"]  # 0-based line of the old text → its line now (None: unknown)


def spans_map(spans: list[tuple[int, int, int]]) -> LineMap:
    """The map of text moved in whole pieces: (first line, last line, lines moved by) each."""

    def line(old: int) -> int | None:
        for first, last, delta in spans:
            if first <= old <= last:
                return old + delta
        return None

    return line


def shift_map(delta: int) -> LineMap:
    return lambda old: old + delta


def lines_named(f: Finding) -> set[int]:
    """Every 0-based line `f` names: its positions and the lines its message and data mention."""
    out = {f.range.start.line, f.range.end.line}
    for r in f.related:
        out.update((r.range.start.line, r.range.end.line))
        out.update(int(m) - 1 for m in _MENTION.findall(r.message))
    if f.fix is not None:
        for e in f.fix.edits:
            out.update((e.range.start.line, e.range.end.line))
    out.update(int(m) - 1 for m in _MENTION.findall(f.message))
    _data_lines(f.data, out)
    return out


def moved(f: Finding, line: LineMap) -> Finding:
    """`f` with every line it names mapped by `line`; the caller has checked (with
    `lines_named`) that each of them maps."""

    def rng(r: Range) -> Range:
        return Range.of(line(r.start.line), r.start.column, line(r.end.line), r.end.column)

    fix = f.fix
    if fix is not None:
        fix = replace(fix, edits=tuple(TextEdit(rng(e.range), e.new_text) for e in fix.edits))
    return replace(
        f,
        range=rng(f.range),
        related=tuple(Related(rng(r.range), _text(r.message, line)) for r in f.related),
        fix=fix,
        message=_text(f.message, line),
        data=_data(f.data, line),
    )


def _text(s: str, line: LineMap) -> str:
    if "line " not in s:
        return s

    def sub(m: re.Match) -> str:
        new = line(int(m.group(1)) - 1)
        return m.group(0) if new is None else f"line {new + 1}"

    return _MENTION.sub(sub, s)


def _is_line_key(key) -> bool:
    return isinstance(key, str) and (key == "line" or key.endswith("_line"))


def _data(value, line: LineMap):
    if isinstance(value, str):
        return _text(value, line)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if _is_line_key(k) and isinstance(v, int) and line(v - 1) is not None:
                out[k] = line(v - 1) + 1
            else:
                out[k] = _data(v, line)
        return out
    if isinstance(value, (list, tuple)):
        return type(value)(_data(v, line) for v in value)
    return value


def _data_lines(value, out: set[int]) -> None:
    if isinstance(value, str):
        out.update(int(m) - 1 for m in _MENTION.findall(value))
    elif isinstance(value, dict):
        for k, v in value.items():
            if _is_line_key(k) and isinstance(v, int):
                out.add(v - 1)
            else:
                _data_lines(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _data_lines(v, out)
