"""Documentation in the markup the client reads: the server writes markdown; a client that
declared plain text only gets it without fences, emphasis, links, escapes and code ticks.

User text (kernel names, values, messages) goes into markdown through `escape`, so that
`_rms_norm_fwd_kernel` is not read as emphasis and a `|` does not open a table cell.
"""

from __future__ import annotations

import re

from lsprotocol import types

_FENCE = re.compile(r"^```\w*\s*$", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}\s+", re.MULTILINE)
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_ITALIC = re.compile(r"(?<!\w)_([^\s_][^_\n]*?)_(?!\w)")  # `_note_`, not the `_` of `x_ptr`
_RULE = re.compile(r"^---$", re.MULTILINE)
_LINK = re.compile(r"\[([^\]\n]+)\]\([^)\s]+\)")
_SPECIAL = re.compile(r"[\\`*_\[\]<>|~]")
_ESCAPED = re.compile(r"\\([\\`*_\[\]<>|~])")
_CODE_SPAN = re.compile(r"(`[^`\n]+`)")
# An escaped character is parked on a private-use code point while the markup is stripped, so
# that `\_` and `\*` are never taken for emphasis; the character itself comes back afterwards.
_PARK = 0xF0000

# Two trailing spaces: a line break inside one paragraph, so a card of n lines is n lines.
BREAK = "  \n"


def escape(text: str) -> str:
    """`text` as literal markdown: every character markdown could read as syntax is escaped, but
    for the code spans a message already marks (`row_stride`), which markdown shows as they are."""
    parts = _CODE_SPAN.split(str(text))
    return "".join(p if i % 2 else _SPECIAL.sub(lambda m: "\\" + m.group(0), p) for i, p in enumerate(parts))


def plain(markdown: str) -> str:
    text = _ESCAPED.sub(lambda m: chr(_PARK + ord(m.group(1))), markdown)
    text = _FENCE.sub("", text)
    text = _HEADING.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    text = _ITALIC.sub(r"\1", text)
    text = _RULE.sub("", text)
    text = text.replace("`", "").replace(BREAK, "\n")
    text = re.sub("[\U000f0000-\U000f007f]", lambda m: chr(ord(m.group(0)) - _PARK), text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def clip(markdown: str, max_lines: int) -> str:
    """At most `max_lines` lines, the last saying that more was left out."""
    lines = markdown.splitlines()
    if len(lines) <= max_lines:
        return markdown
    kept = lines[:max_lines - 1]
    fences = [i for i, ln in enumerate(kept) if ln.startswith("```")]
    if len(fences) % 2:  # a code block cut open is left out whole
        kept = kept[:fences[-1]]
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept + ["…"])


def content(markdown: str, kind: types.MarkupKind) -> types.MarkupContent:
    """`markdown` as a MarkupContent of `kind`."""
    if kind == types.MarkupKind.PlainText:
        return types.MarkupContent(kind=kind, value=plain(markdown))
    return types.MarkupContent(kind=kind, value=markdown)
