"""A rule's page, rendered from the docstring of the module that defines it.

The docstring's first line is the page's title (`TL001 — ...`), the rest its body (What it finds,
Why, Example, Fix). The line under the title and the closing "Fix safety" section come from the
rule's metadata, so severity, whether the rule is in the default set and fix applicability are
stated once, in code.
"""

from __future__ import annotations

import inspect
import textwrap

from ..findings import Applicability
from .base import RuleInfo

SECTIONS = ("## What it finds", "## Why", "## Example", "## Fix")

_APPLICABILITY_WORDS = {
    Applicability.SAFE: "safe: `tritonlens check --fix` applies it",
    Applicability.UNSAFE: "unsafe: `tritonlens check --fix` applies it only with `--unsafe-fixes`, "
                          "and the editor offers it without marking it preferred",
    Applicability.DISPLAY_ONLY: "display-only: shown, never applied automatically",
}


def docstring_of(code: str) -> str:
    from . import DOC_MODULES

    module = DOC_MODULES.get(code)
    if module is None:
        raise KeyError(f"unknown rule {code}")
    return inspect.cleandoc(module.__doc__ or "")


def default_words(info: RuleInfo) -> str:
    """Whether `info` runs without `--select`, as `tritonlens rules` and the rule's page say it."""
    if info.default:
        return "on"
    why = f"{info.off_because}; " if info.off_because else ""
    return f"off ({why}`--select {info.id}` or `--select ALL` runs it)"


def _header(info: RuleInfo) -> str:
    parts = [f"**Severity:** {info.severity.value}", f"**Default:** {default_words(info)}"]
    if info.kind == "compile":
        parts.append("**Source:** the cross-compile (`tritonlens compile`)")
    elif info.fix_title is None:
        parts.append("**Fix:** none automatic")
    else:
        parts.append(f"**Fix:** {info.fix_title} ({info.fix_applicability.value})")
    return " · ".join(parts)


def page(info: RuleInfo) -> str:
    """The markdown page of `info`: what docs/rules/<id>.md holds."""
    doc = docstring_of(info.id)
    title, _, body = doc.partition("\n")
    if not title.startswith(f"{info.id} — "):
        raise ValueError(f"{info.id}: the docstring must open with '{info.id} — <title>', not {title!r}")
    out = [f"# {title}", "", _header(info), "", body.strip("\n")]
    if info.fix_applicability is not None:
        text = f"This fix is {_APPLICABILITY_WORDS[info.fix_applicability]}. {info.fix_safety}"
        out += ["", "## Fix safety", textwrap.fill(text, width=100, break_on_hyphens=False)]
    return "\n".join(out) + "\n"


def missing_sections(info: RuleInfo) -> list[str]:
    doc = docstring_of(info.id)
    return [s for s in SECTIONS if f"\n{s}\n" not in doc + "\n"]
