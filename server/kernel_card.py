"""The kernel hover: three to six lines a kernel author reads at a glance (what the compiler made
of it, what is assumed or pending, the top finding, the latest run) and a link to the full report
(kernel_report), where the signature, the configurations and the estimates tables live.

Every line is written once, for markdown or for plain text: user text goes through
`markup.escape` in markdown and stays as it is in plain text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import quote

from lsprotocol import types
from tritonlens.analysis.kernel_roles import role_of
from tritonlens.analysis.values import UNKNOWN
from tritonlens.profiling.occupancy import occupancy_text

from . import kernel_results, markup
from .diagnostics import kernel_hash

# The editor command that shows a report (the client's own, which asks the server's report
# command); the plain-text line names the server command, which any client can execute.
SHOW_REPORT = "tritonlens.showReport"
SERVER_REPORT = "tritonlens.server.report"
MAX_MESSAGE = 110


@dataclass(frozen=True)
class Writer:
    """Markdown or plain text, chosen once from the client's hover format."""

    markdown: bool

    def text(self, s: str) -> str:
        return markup.escape(s) if self.markdown else s

    def strong(self, s: str) -> str:
        return f"**{markup.escape(s)}**" if self.markdown else s

    def join(self, lines: list[str]) -> str:
        return (markup.BREAK if self.markdown else "\n").join(lines)

    def report_link(self, uri: str, kernel: str) -> str:
        if not self.markdown:
            return f"Full report: command {SERVER_REPORT} [uri, \"{kernel}\"]"
        args = quote(json.dumps([uri, kernel]))
        return f"[Full report](command:{SHOW_REPORT}?{args})"


def one_line(message: str, limit: int = MAX_MESSAGE) -> str:
    """The line of an error message that says what went wrong: never a traceback's frames."""
    lines = [ln.strip() for ln in str(message).splitlines() if ln.strip()]
    useful = [ln for ln in lines if not ln.startswith(("Traceback", "File ", "^", "~"))]
    line = (useful or lines or [""])[-1]
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _size(n: int | None) -> str:
    if n is None:
        return "unknown"
    return f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} B"


def _compiled_line(c, of: int) -> str:
    spills = "no spills" if not c.spill_bytes else f"{_size(c.spill_bytes)} spilled"
    occ = occupancy_text(c.occupancy, c.limiter)
    mma = f"MMA {c.mma}" if c.mma else "no tl.dot"
    which = f" (the first of {of} configurations)" if of > 1 else ""
    return f"{c.registers} registers, {spills}, {_size(c.shared_bytes)} shared memory, {occ}, {mma}{which}"


def _source_line(latest, entry, w: Writer) -> str:
    """Where the compiled configurations came from; an assumed value says how to pin it."""
    origin = "the text (launch sites, autotune configs)" if entry.source == "static" else (
        latest.result.source or "the given configurations")
    line = f"Configurations from {w.text(origin)}"
    by_source: dict[str, dict[str, object]] = {"pinned": {}, "assumed": {}}
    for c in entry.configs:
        for name, source in c.value_sources.items():
            if source in by_source and name not in by_source[source]:
                by_source[source][name] = c.constexprs.get(name, getattr(c, name, None))
    pinned, assumed = by_source["pinned"], by_source["assumed"]
    if pinned:  # the user's own choice, named so the card is not read as a guess
        line += "; pinned " + w.text(", ".join(f"{n}={v}" for n, v in pinned.items()))
    if assumed:
        name, value = next(iter(assumed.items()))
        values = ", ".join(f"{n}={v}" for n, v in list(assumed.items())[:3]) + (", …" if len(assumed) > 3 else "")
        pin = f"# tritonlens: {name}={value}"
        line += f"; assumed {w.text(values)}: pin with " + (f"`{pin}`" if w.markdown else pin) + " above the kernel"
    return line


def compile_lines(ctx, k, w: Writer) -> list[str]:
    """What the latest compile says and where its configurations came from, or what is pending."""
    latest = ctx.facts.compiled
    entry = latest.kernel_entry(k.name) if latest is not None else None
    if entry is None:
        how = "on save" if ctx.settings.compile_on_save else "when compileOnSave is on"
        return [f"Compile facts pending: compiled for {w.text(ctx.settings.compile_target)} {how}"]
    stale = " (before the last edit)" if latest.kernel_hashes.get(k.name) != kernel_hash(k.text) else ""
    ok = [c for c in entry.configs if c.compiled]
    if ok:
        first = f"{w.text(latest.target)}{stale}: " + _compiled_line(ok[0], len(ok))
    elif entry.reason:  # the compile's own one line: the JSON and the bench say the same
        first = f"No compile facts{stale}: {w.text(entry.reason)}"
    elif entry.note:
        first = f"Not compiled{stale}: {w.text(one_line(entry.note, 200))}"
    else:
        err = entry.error or next((c.error for c in entry.configs if c.error is not None), None)
        if err is not None:
            where = f" at line {err.line}" if err.line else ""
            first = f"Compile failed{where}{stale}: {w.text(one_line(err.message))}"
        else:
            first = "Not compiled: no launch of this kernel was captured"
    return [first, _source_line(latest, entry, w)] if entry.configs else [first]


def _configurations_line(k, w: Writer) -> str:
    if not k.configs:
        return "No launch of this kernel in this file: configurations unknown"
    n = len(k.configs)
    where = "autotune configs" if k.autotuned else "launch sites"
    line = f"{n} configuration{'s' if n != 1 else ''} from its {where} in this file"
    missing = [p.name for p in k.params if p.is_constexpr and all(c.get(p.name) is UNKNOWN for c in k.configs)]
    if missing:
        line += f"; {w.text(', '.join(missing))} not given here (the compile assumes a value and says how to pin it)"
    return line


def _finding_line(ctx, k, w: Writer) -> str | None:
    here = [f for f in ctx.findings if f.kernel == k.name]
    if not here:
        return None
    f = here[0]
    more = f" (+{len(here) - 1} more in Problems)" if len(here) > 1 else ""
    return f"{w.strong(f.code)} line {f.range.start.line + 1}: {w.text(one_line(f.message))}{more}"


def _results_line(ctx, k, w: Writer) -> str | None:
    parts = []
    m = ctx.measurements.latest(ctx.uri, k.name)
    if m is not None:
        stale = " (before the last edit)" if m.kernel_hash != kernel_hash(k.text) else ""
        parts.append(f"Latest run: {w.text(kernel_results.summary(m))}{stale}")
    opt = ctx.measurements.optimized(ctx.uri, k.name)
    if opt is not None:
        # loaded with the optimize that made `opt`
        from tritonlens.rewrite.api import summary

        parts.append(f"Optimization: {w.text(summary(opt.report))}")
    return " · ".join(parts) or None


def kernel_card(ctx, module, k) -> types.MarkupContent:
    w = Writer(ctx.markup != types.MarkupKind.PlainText)
    role = role_of(module, k)
    if role is not None and not role.launchable:
        # Never launched on its own: its values are its callers', so nothing compiles or runs alone.
        lines = [f"{w.strong(k.name)} · Triton device helper ({w.text(role.reason)})",
                 "Compiled and measured inside the kernels that call it"]
    else:
        head = f"{w.strong(k.name)} · Triton kernel" + (" (autotuned)" if k.autotuned else "")
        compiled = compile_lines(ctx, k, w)
        lines = [head, *compiled]
        if len(compiled) < 2:
            lines.append(_configurations_line(k, w))
        lines += [x for x in (_finding_line(ctx, k, w), _results_line(ctx, k, w)) if x]
    lines = lines[:5] + [w.report_link(ctx.uri, k.name)]
    return types.MarkupContent(kind=markup_kind(w), value=w.join(lines))


def markup_kind(w: Writer) -> types.MarkupKind:
    return types.MarkupKind.Markdown if w.markdown else types.MarkupKind.PlainText
