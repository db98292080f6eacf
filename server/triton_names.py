"""Triton names in the source text: which module a dotted name belongs to, the call around the
cursor, and how an API entry reads. Pure text and model helpers shared by completion, signature
help and hover; no LSP types."""

from __future__ import annotations

import re
from typing import NamedTuple

from tritonlens.analysis import tlapi
from tritonlens.analysis.findings import Position
from tritonlens.analysis.values import UNKNOWN, fmt

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LIBDEVICE_IMPORT = re.compile(
    r"^\s*from\s+triton\.language\.extra(?:\.cuda)?\s+import\s+libdevice(?:\s+as\s+(\w+))?", re.MULTILINE)
TRITON_SUBMODULES = ("language", "testing")


def version_note(api: tlapi.ApiIndex) -> str:
    return f"_Triton {api.version} ({api.source})_"


def libdevice_aliases(text: str) -> set[str]:
    return {m.group(1) or "libdevice" for m in _LIBDEVICE_IMPORT.finditer(text)}


def module_of_prefix(prefix: str, module, libdevice: set[str]) -> str | None:
    """`tl` → triton.language, `tl.math` → triton.language.math, `triton` → triton, …"""
    if prefix in libdevice:
        return "triton.language.extra.libdevice"
    probe = module.aliases.tl_function(prefix + ".__probe__") if module is not None else None
    if probe is not None:
        mod, _ = tlapi.split_tl(probe)
        return mod
    head, _, rest = prefix.partition(".")
    triton_names = module.aliases.triton if module is not None else {"triton"}
    if head in triton_names | {"triton"}:
        if not rest:
            return "triton"
        if rest in TRITON_SUBMODULES:
            return "triton." + rest
    return None


def resolve_name(dotted: str, module, libdevice: set[str]) -> tuple[str, str] | None:
    """("triton.language", "load") for `tl.load`; None for anything that is not Triton's."""
    if "." in dotted:
        prefix, _, name = dotted.rpartition(".")
        mod = module_of_prefix(prefix, module, libdevice)
        if mod is not None:
            return mod, name
        return None
    if module is not None:
        tl = module.aliases.tl_function(dotted)
        if tl is not None:
            return tlapi.split_tl(tl)
        ta = module.aliases.triton_attr(dotted)
        if ta is not None:
            return "triton", ta
    return None


def dotted_at(line: str, col: int) -> tuple[str, int, int] | None:
    """The dotted name under the cursor, cut at the end of the word under it."""
    if not line:
        return None
    end = col
    while end < len(line) and (line[end].isalnum() or line[end] == "_"):
        end += 1
    start = col
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] in "_."):
        start -= 1
    text = line[start:end].lstrip(".")
    start = end - len(text)
    if not text or not _IDENT.match(text):
        return None
    return text, start, end


def api_markdown(entry: tlapi.ApiEntry, shown: str, api: tlapi.ApiIndex) -> str:
    sig = entry.signature or ""
    head = f"```python\n{shown}{sig}\n```" if entry.kind in ("function", "class", "method") else f"```python\n{shown}\n```"
    parts = [head]
    if entry.doc:
        parts.append(entry.doc)
    parts.append(f"{entry.kind} · `{entry.qualname}` · {version_note(api)}")
    return "\n\n".join(parts)


def param_values(kernel, name: str) -> list[str]:
    """The values a constexpr parameter takes, one per distinct configuration value ("?" unknown)."""
    vals = []
    for c in kernel.configs:
        v = c.get(name)
        s = fmt(v) if v is not UNKNOWN else "?"
        if s not in vals:
            vals.append(s)
    return vals


def text_offset(lines: list[str], pos: Position) -> int:
    return sum(len(ln) + 1 for ln in lines[:pos.line]) + pos.column


class EnclosingCall(NamedTuple):
    callee: str  # the called name as written: `tl.load`, `kernel` of `kernel[grid](…)`
    launch: bool  # `kernel[grid](…)`
    index: int  # the argument the cursor is in, counted by commas
    keyword: str | None  # the keyword being typed; "{" inside `triton.Config({…`
    given: set[str]  # keywords (or Config dict keys) already written
    paren: int  # offset of the opening parenthesis (or brace)


def enclosing_call(text: str, offset: int, limit: int = 4000) -> EnclosingCall | None:
    """The call whose parentheses hold `offset`, or None."""
    depth = 0
    i = offset - 1
    lo = max(0, offset - limit)
    commas = 0
    quote = None
    while i >= lo:
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                if ch != "(":
                    return None if ch == "[" else _dict_context(text, i, offset)
                break
            depth -= 1
        elif ch == "," and depth == 0:
            commas += 1
        i -= 1
    else:
        return None
    if i < lo:
        return None
    before = text[:i].rstrip()
    launch = False
    if before.endswith("]"):
        # kernel[grid](…): skip the grid subscript
        d, j = 0, len(before) - 1
        while j >= 0:
            if before[j] == "]":
                d += 1
            elif before[j] == "[":
                d -= 1
                if d == 0:
                    break
            j -= 1
        before = before[:j].rstrip()
        launch = True
    m = re.search(r"([A-Za-z_][\w.]*)$", before)
    if m is None:
        return None
    inside = text[i + 1:offset]
    given = set(re.findall(r"(?:^|[,(\s])([A-Za-z_]\w*)\s*=(?!=)", inside))
    current = inside.rsplit(",", 1)[-1] if commas else inside
    kw = re.match(r"\s*([A-Za-z_]\w*)\s*=(?!=)", current)
    return EnclosingCall(m.group(1), launch, commas, kw.group(1) if kw else None, given, i)


def _dict_context(text: str, brace: int, offset: int):
    """Inside `triton.Config({` … : report the Config call with a marker for dict keys."""
    before = text[:brace].rstrip()
    if before.endswith("("):
        m = re.search(r"([A-Za-z_][\w.]*)\s*\($", before)
        if m:
            keys = set(re.findall(r"[\"'](\w+)[\"']\s*:", text[brace:offset]))
            return EnclosingCall(m.group(1), False, 0, "{", keys, brace)
    return None
