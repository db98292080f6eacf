"""textDocument/hover: a kernel's card of at most six lines (kernel_card; the rest is in its full
report, kernel_report), a tl.load / tl.store / tl.dot card (what it moves, what fired there), else a
Triton API name or a kernel variable (hover_names); on a profiled kernel's hot line, its stall
samples first (line_hints). No hover is longer than twelve lines: a card
is read at a glance, the full report is one click away."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from lsprotocol import types
from tritonlens.analysis import tlapi
from tritonlens.analysis.findings import Position, Range

from . import estimates_view, line_hints, markup
from .analyzed import analyzed, module_of
from .compile_facts import CompileFacts
from .config import Settings
from .diagnostics import shown_findings
from .hover_names import api_hover_text, variable_hover_text
from .kernel_card import kernel_card, one_line
from .kernel_report import kernel_report
from .kernel_results import KernelResultStore

log = logging.getLogger(__name__)

MAX_LINES = 12
MAX_MOVES = 3  # configurations whose bytes a memory card lists
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


def call_card(module, k, call, findings, settings) -> str:
    """A memory access or tl.dot: the call, what it moves per configuration, what fired there."""
    src_text = (k.src or module.src).text_of(call.node)  # a cached model's nodes index its own text
    if len(src_text) > 160:
        src_text = src_text[:157] + "..."
    head = f"**tl.{call.name}** in **{markup.escape(k.name)}**"
    if call.loops:
        head += (f" · inside {len(call.loops)} loop{'s' if len(call.loops) > 1 else ''} (line "
                 + ", ".join(str(loop.range.start.line + 1) for loop in call.loops) + ")")
    lines = [head, f"```python\n{src_text}\n```"]
    lines += estimates_view.call_lines(module, k, call, settings)[:MAX_MOVES]
    fired = [f for f in findings if f.kernel == k.name and _overlaps(f.range, call.range)]
    lines += [f"**{f.code}**: {markup.escape(one_line(f.message))}" for f in fired[:2]]
    return markup.BREAK.join(lines)


def _overlaps(a: Range, b: Range) -> bool:
    return not ((a.end.line, a.end.column) < (b.start.line, b.start.column)
                or (b.end.line, b.end.column) < (a.start.line, a.start.column))


def hover_at(ctx: HoverContext, snap, module, pos: Position) -> types.Hover | None:
    """The card under `pos`. Runs shape inference and estimates: on the analysis thread only."""
    k = kernel_at_word(module, snap, pos)
    if k is not None:
        rng = k.name_range if _inside(k.name_range, pos) else None
        return types.Hover(contents=kernel_card(ctx, module, k), range=snap.range(rng) if rng is not None else None)
    k = module.kernel_at(pos.line)
    call = k.call_at(pos.line, pos.column) if k is not None else None
    # A hot line of the kernel's profile: its stall samples come first, whatever else is hovered.
    hot = line_hints.hot_line_at(ctx.measurements, ctx.uri, module, pos.line) if k is not None else None
    samples = line_hints.line_card(hot) if hot is not None else None
    if call is None or call.name not in MEMORY_CALLS:
        # A Triton API name anywhere, a variable in a kernel.
        text = api_hover_text(snap, module, pos, ctx.api) or variable_hover_text(module, pos, ctx.facts)
        if text is None and samples is None:
            return None
        return types.Hover(contents=markup.content(_after(samples, text), ctx.markup))
    text = call_card(module, k, call, ctx.findings, ctx.settings)
    api = api_hover_text(snap, module, pos, ctx.api)
    if api:
        text += "\n\n" + api
    return types.Hover(contents=markup.content(_after(samples, text), ctx.markup), range=snap.range(call.range))


def _after(samples: str | None, text: str | None) -> str:
    """`text` clipped to the lines a hover has, after the line's stall samples when it has them;
    a table the clip would cut is left out rather than shown as a header."""
    if samples is None:
        return markup.clip(text or "", MAX_LINES)
    room = MAX_LINES - len(samples.splitlines()) - 1
    if not text or room < 2:
        return samples
    kept = markup.clip(text, room).splitlines()
    if kept[-1] == "…":
        kept.pop()
        while kept and (kept[-1].startswith("|") or not kept[-1].strip()):
            kept.pop()
        kept.append("…")
    return samples + "\n\n" + "\n".join(kept)


def kernel_report_for(ctx: HoverContext, module, name: str) -> str | None:
    """The full report of the kernel `name` (its last definition), on the analysis thread."""
    k = module.kernel(name)
    return kernel_report(ctx, module, k) if k is not None else None


def context(ls, uri: str, snap, result) -> HoverContext:
    return HoverContext(uri, ls.settings.for_uri(uri), shown_findings(ls, ls.analysis.state(uri), snap, result),
                        ls.client_support.hover_markup, ls.api_index.for_uri(uri), ls.compiles.facts(uri),
                        ls.measurements)


async def full_report(ls, uri: str, kernel: str) -> str | None:
    """What the card's "Full report" link shows: for the report command."""
    snap, result = await analyzed(ls, uri)
    module = module_of(result)
    if module is None:
        return None
    return await ls.analysis.run(kernel_report_for, context(ls, uri, snap, result), module, kernel)


def register(ls) -> None:
    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    async def _hover(params: types.HoverParams):
        uri = params.text_document.uri
        snap, result = await analyzed(ls, uri)
        module = module_of(result)
        if module is None:
            return None
        return await ls.analysis.run(hover_at, context(ls, uri, snap, result), snap, module,
                                     snap.engine_position(params.position))
