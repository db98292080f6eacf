"""`# tritonlens: ignore[TL002]` (or a bare `# tritonlens: ignore`) silences findings on its line."""

from __future__ import annotations

import re

from .findings import Finding

_PATTERN = re.compile(r"#\s*tritonlens:\s*ignore(?:\[(?P<codes>[A-Za-z0-9_,\s]*)\])?")


def suppressions(text: str) -> dict[int, set[str] | None]:
    """0-based line → codes silenced there (None = all)."""
    out: dict[int, set[str] | None] = {}
    if "tritonlens" not in text:
        return out
    for i, line in enumerate(text.splitlines()):
        if "#" not in line:
            continue
        m = _PATTERN.search(line)
        if not m:
            continue
        codes = m.group("codes")
        if codes is None or not codes.strip():
            out[i] = None
        else:
            out[i] = {c.strip().upper() for c in codes.split(",") if c.strip()}
    return out


def is_suppressed(f: Finding, table: dict[int, set[str] | None]) -> bool:
    for line in {f.range.start.line, f.range.end.line}:
        if line in table:
            codes = table[line]
            if codes is None or f.code in codes:
                return True
    return False


def ignore_comment_edit(line_text: str, code: str) -> str:
    """The line with `code` added to its ignore comment (or a new comment appended)."""
    m = _PATTERN.search(line_text)
    if m and m.group("codes") is not None:
        codes = [c.strip() for c in m.group("codes").split(",") if c.strip()]
        if code not in codes:
            codes.append(code)
        return line_text[: m.start()] + f"# tritonlens: ignore[{', '.join(codes)}]" + line_text[m.end():]
    if m:
        return line_text  # a bare ignore already silences everything
    stripped = line_text.rstrip()
    return f"{stripped}  # tritonlens: ignore[{code}]"
