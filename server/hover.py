"""textDocument/hover: a kernel's card (signature, configurations, static estimates, roofline
position, compile facts, latest measurement), a tl.load / tl.store / tl.dot card (what it moves,
what fired there), else a Triton API name or a kernel variable (hover_names)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types
from tritonlens.analysis import tlapi
from tritonlens.analysis.findings import Position, Range
from tritonlens.analysis.kernel_roles import role_of
from tritonlens.analysis.values import fmt

from . import estimates_view, kernel_results, markup
from .analyzed import analyzed, module_of
from .compile_facts import CompileFacts
from .config import Settings
from .diagnostics import kernel_hash, shown_findings
from .hover_names import api_hover_text, variable_hover_text
from .kernel_results import KernelResultStore

if TYPE_CHECKING:
    from tritonlens.profiling.worker.reports import OptimizeReport

log = logging.getLogger(__name__)

MEMORY_CALLS = ("load", "store", "dot", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg")


def _inside(r: Range, p: Position) -> bool:
    return (r.start.line, r.start.column) <= (p.line, p.column) <= (r.end.line, r.end.column)


def _word_at(line: str, col: int) -> tuple[str, int, int]:
    start = col
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] == "_"):
        start -= 1
    end = col
    while end < len(line) and (line[end].isalnum() or line[end] == "_"):
        end += 1
    return line[start:end], start, end


def kernel_at_word(module, snap, pos: Position):
    """The kernel whose name is under the cursor: at its definition or at a launch site."""
    if pos.line >= len(snap.lines):
        return None
    word, _, _ = _word_at(snap.lines[pos.line], pos.column)
    if not word:
        return None
    # Every definition of the name (both branches of a module-level `if` may define it); a launch
    # reaches the name's last definition, which comes first here.
    for k in reversed(module.kernels):
        if k.name == word and (_inside(k.name_range, pos) or any(_inside(l.range, pos) for l in k.launches)):
            return k
    return None


def configurations_table(k) -> str:
    constexprs = [p.name for p in k.params if p.is_constexpr]
    cols = constexprs + ["num_warps", "num_stages"]
    if not k.configs:
        return "_No launch of this kernel in this file: values unknown._"
    rows = []
    seen = set()
    for c in k.configs[:12]:
        cells = []
        for name in cols:
            v = c.values.get(name)
            if v is None:
                cells.append("?")
            else:
                cells.append(fmt(v.value) + (" (default)" if v.origin.startswith("Triton's default") else ""))
        row = f"| {c.label} | " + " | ".join(cells) + " |"
        if row not in seen:
            seen.add(row)
            rows.append(row)
    head = "| configuration | " + " | ".join(f"`{n}`" for n in cols) + " |\n|---|" + "---|" * len(cols)
    more = f"\n\n_{len(k.configs) - 12} more configurations not shown._" if len(k.configs) > 12 else ""
    return head + "\n" + "\n".join(rows) + more


@dataclass(frozen=True)
class HoverContext:
    """Everything a hover reads besides the analysis, gathered on the event loop."""

    uri: str
    settings: Settings
    findings: list
    markup: types.MarkupKind
    api: tlapi.ApiIndex
    facts: CompileFacts
    measurements: KernelResultStore


def kernel_card(ctx: HoverContext, module, k) -> str:
    role = role_of(module, k)
    if role is not None and not role.launchable:
        # Never launched on its own: its values are its callers', so it has no configurations and
        # no estimates of its own.
        parts = [f"### `{k.name}` · Triton device helper ({role.reason})", f"```python\n{k.signature}\n```"]
    else:
        parts = [f"### `{k.name}` · Triton kernel" + (" (autotuned)" if k.autotuned else ""),
                 f"```python\n{k.signature}\n```",
                 "**Configurations** (resolved constexpr values per launch site)\n\n" + configurations_table(k)]
        est = estimates_view.kernel_section(module, k, ctx.settings)
        if est:
            parts.append(est)
    here = [f for f in ctx.findings if f.kernel == k.name]
    if here:
        items = "\n".join(f"- **{f.code}** line {f.range.start.line + 1}: {f.message}" for f in here[:8])
        parts.append(f"**Findings** ({len(here)})\n\n{items}")
    compiled = ctx.facts.hover_section(k)
    if compiled:
        parts.append(compiled)
    m = ctx.measurements.latest(ctx.uri, k.name)
    if m is not None:
        parts.append(kernel_results.hover_markdown(m, stale=m.kernel_hash != kernel_hash(k.text)))
    opt = ctx.measurements.optimized(ctx.uri, k.name)
    if opt is not None:
        parts.append(_optimize_section(opt.report))
    return "\n\n---\n\n".join(parts)


def _optimize_section(report: OptimizeReport) -> str:
    refused = [c for c in report.candidates if not c.accepted]
    accepted = [c for c in report.candidates if c.accepted]
    lines = [f"**Optimization** ({report.mode or '?'} mode): {len(accepted)} accepted, {len(refused)} refused"]
    for c in accepted[:3]:
        lines.append(f"- offered as a quick fix: {c.quick_fix_title or c.title}")
    if report.refusals:
        lines.append(f"- {report.refusals}")
    else:
        for c in refused[:5]:
            lines.append(f"- refused ({c.proposer}): {c.reason}")
    return "\n".join(lines)


def call_card(module, k, call, findings, settings, snap) -> str:
    src_text = (k.src or module.src).text_of(call.node)  # a cached model's nodes index its own text
    if len(src_text) > 160:
        src_text = src_text[:157] + "..."
    parts = [f"### `tl.{call.name}` in `{k.name}`", f"```python\n{src_text}\n```"]
    moved = estimates_view.call_section(module, k, call, settings)
    if moved:
        parts.append(moved)
    if call.loops:
        parts.append(f"Inside {len(call.loops)} loop(s): runs once per iteration of "
                     + ", ".join(f"`{l.kind}` at line {l.range.start.line + 1}" for l in call.loops) + ".")
    fired = [f for f in findings if f.kernel == k.name and (_overlaps(f.range, call.range))]
    if fired:
        parts.append("**Why tritonlens flagged it**\n\n" + "\n".join(f"- **{f.code}**: {f.message}" for f in fired))
    return "\n\n---\n\n".join(parts)


def _overlaps(a: Range, b: Range) -> bool:
    return not ((a.end.line, a.end.column) < (b.start.line, b.start.column)
                or (b.end.line, b.end.column) < (a.start.line, a.start.column))


def hover_at(ctx: HoverContext, snap, module, pos: Position) -> types.Hover | None:
    """The card under `pos`. Runs shape inference and estimates: on the analysis thread only."""
    k = kernel_at_word(module, snap, pos)
    if k is not None:
        text = kernel_card(ctx, module, k)
        rng = k.name_range if _inside(k.name_range, pos) else None
    else:
        k = module.kernel_at(pos.line)
        call = k.call_at(pos.line, pos.column) if k is not None else None
        if call is None or call.name not in MEMORY_CALLS:
            # A Triton API name anywhere, a variable in a kernel.
            text = api_hover_text(snap, module, pos, ctx.api) or variable_hover_text(module, pos, ctx.facts)
            if text is None:
                return None
            return types.Hover(contents=markup.content(text, ctx.markup))
        text = call_card(module, k, call, ctx.findings, ctx.settings, snap)
        api = api_hover_text(snap, module, pos, ctx.api)
        if api:
            text = api + "\n\n---\n\n" + text
        rng = call.range
    return types.Hover(
        contents=markup.content(text, ctx.markup),
        range=snap.range(rng) if rng is not None else None,
    )


def register(ls) -> None:
    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    async def _hover(params: types.HoverParams):
        uri = params.text_document.uri
        snap, result = await analyzed(ls, uri)
        module = module_of(result)
        if module is None:
            return None
        ctx = HoverContext(uri, ls.settings.for_uri(uri), shown_findings(ls, ls.analysis.state(uri), snap, result),
                           ls.client_support.hover_markup, ls.api_index.for_uri(uri), ls.compiles.facts(uri),
                           ls.measurements)
        return await ls.analysis.run(hover_at, ctx, snap, module, snap.engine_position(params.position))
