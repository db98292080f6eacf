"""One finding where the rules report the same problem many times.

A rule checks a kernel once per configuration (each launch, each autotune config), so a line that is
wrong in every configuration would be reported once per configuration, and a line holding three
products that overflow once per product. `per_line` keeps one finding per rule and line, saying which
configurations or which other subjects it also holds for. `once_per_file` keeps one finding for a
problem that is the same wherever it appears in a file (a removed API used twenty times: fixing one
use shows how to fix all), saying how many more uses there are.

Both read only what every message already follows: values are written `NAME=VALUE`, and the first
'quoted' text of a message names its subject. What they add is kept within MESSAGE_LIMIT: a count
that does not fit is left to the related locations.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .findings import MESSAGE_LIMIT, Finding, Related
from .message_text import USES_ROOM

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2, "hint": 3}
_ASSIGNED = re.compile(r"\b([A-Za-z_]\w*)=(-?[\w.]+)")
_SUBJECT = re.compile(r"(?<!\w)'([^']+)'(?!\w)")  # not the apostrophe of "tl.load's"
OTHER_USES_LISTED = 20  # related locations a once-per-file finding lists; more are only counted


def _values(message: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in _ASSIGNED.findall(message):
        out.setdefault(name, value)
    return out


def _subject(message: str) -> str | None:
    m = _SUBJECT.search(message)
    return m.group(1) if m else None


def _distinct(items) -> list:
    out = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def _configurations(group: list[Finding]) -> list[str]:
    """Each finding's configuration, as the values that differ between the findings of `group`
    (the first finding's first)."""
    values = [_values(f.message) for f in group]
    names = _distinct(n for v in values for n in v)
    varying = [n for n in names if len({v.get(n) for v in values}) > 1]
    if not varying:
        return []
    return _distinct(" ".join(f"{n}={v[n]}" for n in varying if n in v) for v in values)


def _listed(head: str, items: list[str], room: int, fallback: str) -> str:
    """`head` and as many of `items` as fit in `room` characters ('…' for the rest), or `fallback`
    when not even one fits."""
    shown: list[str] = []
    for i, item in enumerate(items):
        ellipsis = 0 if i + 1 == len(items) else 3
        if len(head) + len(", ".join(shown + [item])) + ellipsis > room:
            break
        shown.append(item)
    if not shown:
        return fallback
    return head + ", ".join(shown) + (", …" if len(shown) < len(items) else "")


def _suffix(kept: Finding, group: list[Finding]) -> str:
    # A problem reported once per file keeps room for the count of its other uses, added later.
    limit = MESSAGE_LIMIT - (USES_ROOM if isinstance(kept.data.get("once_per_file"), str) else 0)
    room = limit - len(kept.message) - 3  # the space and parentheses
    # Findings on the kept one's range differ by configuration only; elsewhere on the line, by subject.
    first_at: dict = {}
    for f in group:
        first_at.setdefault(f.range, f)
    elsewhere = [f for r, f in first_at.items() if r != kept.range]
    parts = []
    subjects = _distinct(_subject(f.message) for f in elsewhere)
    subjects = [s for s in subjects if s != _subject(kept.message)]  # the same text again says nothing new
    if subjects:
        fallback = f"and {len(subjects)} more on this line"
        parts.append(_listed("also ", [f"'{s}'" for s in subjects], room, fallback) if None not in subjects else fallback)
        room -= len(parts[-1]) + 2
    configs = _configurations(group)  # the kept one's first: its message names its own values
    if len(configs) > 1:
        more = len(configs) - 1
        parts.append(_listed("also ", configs[1:], room, f"and {more} more configuration{'s' if more > 1 else ''}"))
    while parts and len(" (" + "; ".join(parts) + ")") > limit - len(kept.message):
        parts.pop()
    if not parts:
        return ""
    return " (" + "; ".join(parts) + ")"


def _merge(group: list[Finding]) -> Finding:
    ordered = sorted(group, key=lambda f: (SEVERITY_ORDER[f.severity.value], f.range.start.column))
    kept = ordered[0]
    related = _distinct(r for f in ordered for r in f.related)
    fixes = {f.fix for f in group}
    fix = kept.fix if len(fixes) == 1 else None  # one edit for all of them, or none to apply blindly
    data = {**kept.data, "merged": len(group)}
    configs = _configurations(ordered)
    if configs:
        data["configurations"] = configs
    return replace(kept, message=kept.message + _suffix(kept, ordered), related=tuple(related), fix=fix, data=data)


def per_line(findings: list[Finding]) -> list[Finding]:
    """One finding per rule and line: the most severe, naming what the others add."""
    groups: dict[tuple[str, int], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.code, f.range.start.line), []).append(f)
    return [group[0] if len(group) == 1 else _merge(group) for group in groups.values()]


def once_per_file(findings: list[Finding]) -> list[Finding]:
    """Findings whose `data["once_per_file"]` is equal merged into the first of them in the file."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        key = f.data.get("once_per_file")
        if isinstance(key, str):
            groups.setdefault((f.code, key), []).append(f)
    if not any(len(g) > 1 for g in groups.values()):
        return findings
    merged: dict[int, Finding] = {}
    dropped: set[int] = set()
    for group in groups.values():
        if len(group) < 2:
            continue
        group = sorted(group, key=lambda f: f.range.start)
        first, rest = group[0], group[1:]
        uses = f"{len(rest)} more use{'s' if len(rest) != 1 else ''} in this file"
        others = tuple(Related(f.range, "another use") for f in rest[:OTHER_USES_LISTED])
        message = f"{first.message} (and {uses})"
        merged[id(first)] = replace(first, message=message if len(message) <= MESSAGE_LIMIT else first.message,
                                    related=first.related + others,
                                    data={**first.data, "merged": len(group)})
        dropped.update(id(f) for f in rest)
    return [merged.get(id(f), f) for f in findings if id(f) not in dropped]
