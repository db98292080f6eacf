"""Pieces of a finding's message: code quoted short, and optional detail kept only while it fits
under findings.MESSAGE_LIMIT."""

from __future__ import annotations

import re

from .findings import MESSAGE_LIMIT

CODE_WIDTH = 32  # characters of quoted code: an expression of real code can be a line long
# What merge.once_per_file appends to a problem reported once per file: rules that report one leave
# it room, so the count of other uses is never the part that is dropped.
USES_ROOM = len(" (and 99 more uses in this file)")


def clip(text: str, width: int = CODE_WIDTH) -> str:
    """`text` on one line, cut to `width` characters with '…'."""
    one = " ".join(text.split())
    return one if len(one) <= width else one[:width - 1].rstrip() + "…"


def clip_words(text: str, width: int) -> str:
    """`text` on one line, cut at a word boundary to fit `width` with '…': never inside a name."""
    one = " ".join(text.split())
    if len(one) <= width:
        return one
    cut = one[:width - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut).rstrip(" ,;:") + "…"


def without_tail(text: str, width: int) -> str:
    """`text` within `width`: its trailing clauses (" (…)", "; …") dropped, last first, while it is
    too long; cut at a word boundary only when its first clause alone is."""
    while len(text) > width:
        cut = max(text.rfind(" ("), text.rfind("; "))
        if cut <= 0:
            return clip_words(text, width)
        text = text[:cut]
    return text


def code(text: str, width: int = CODE_WIDTH) -> str:
    """`text` on one line in single quotes, cut to `width` characters with '…'."""
    return f"'{clip(text, width)}'"


def name(text: str, width: int = CODE_WIDTH) -> str:
    """A bare identifier as is; anything else (an expression, a call) quoted with code()."""
    one = " ".join(text.split())
    return one if one.replace(".", "").replace("_", "").isalnum() and len(one) <= width else code(one, width)


def names(items, width: int = CODE_WIDTH) -> str:
    """'a, b and 3 more': as many whole names as fit in `width`, never one cut in the middle."""
    items = [str(i) for i in items]
    for shown in range(len(items), 0, -1):
        rest = len(items) - shown
        text = ", ".join(items[:shown]) + (f" and {rest} more" if rest else "")
        if len(text) <= width or shown == 1:
            return text
    return ""


def fit(message: str, *details: str, limit: int = MESSAGE_LIMIT) -> str:
    """`message` followed by each of `details` in order while the whole stays within `limit`."""
    for d in details:
        if d and len(message) + len(d) <= limit:
            message += d
    return message


def shortest_needed(*candidates: str, limit: int = MESSAGE_LIMIT) -> str:
    """The first of `candidates` (fullest first) within `limit`, else the last."""
    return next((c for c in candidates if len(c) <= limit), candidates[-1])


def plain_quotes(markdown: str) -> str:
    """Markdown's `code` spans as 'code': for text an editor shows as is (a diagnostic's related
    locations), where backticks would show literally."""
    return re.sub(r"`([^`\n]*)`", r"'\1'", markdown)
