"""Documentation in the markup the client reads: the server writes markdown; a client that
declared plain text only gets it without fences, emphasis and code ticks."""

from __future__ import annotations

import re

from lsprotocol import types

_FENCE = re.compile(r"^```\w*\s*$", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}\s+", re.MULTILINE)
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_ITALIC = re.compile(r"(?<!\w)_([^\s_][^_\n]*?)_(?!\w)")  # `_note_`, not the `_` of `x_ptr`
_RULE = re.compile(r"^---$", re.MULTILINE)


def plain(markdown: str) -> str:
    text = _FENCE.sub("", markdown)
    text = _HEADING.sub("", text)
    text = _EMPHASIS.sub(r"\2", text)
    text = _ITALIC.sub(r"\1", text)
    text = _RULE.sub("", text)
    text = text.replace("`", "")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def content(markdown: str, kind: types.MarkupKind) -> types.MarkupContent:
    """`markdown` as a MarkupContent of `kind`."""
    if kind == types.MarkupKind.PlainText:
        return types.MarkupContent(kind=kind, value=plain(markdown))
    return types.MarkupContent(kind=kind, value=markdown)
