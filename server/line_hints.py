"""Where a profiled kernel's time goes, on its lines: the hottest lines of its first launch's stall
samples (`LaunchProfile.lines`) as end-of-line inlay hints ("38% · waiting on global memory"),
and a hover naming the stall reasons and the instructions behind them.

A hint is shown only while the kernel's text is the one that was measured: it moves with the
kernel when lines are inserted or removed above it, and is gone once the kernel itself changes.
Samples are measurements, never findings: nothing here reaches the Problems panel.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from lsprotocol import types
from tritonlens.analysis.findings import Position

from . import markup
from .diagnostics import kernel_hash

if TYPE_CHECKING:
    from tritonlens.profiling.worker.line_profile import LineProfile, LineSamples

    from .kernel_results import KernelResultStore, Measurement

HOT_LINES = 3  # LineProfile.hottest's defaults: the lines worth a glance
MIN_SHARE = 0.05
HOVER_REASONS = 3
# VS Code cuts a line's inlay hints at 43 characters in all (editor.inlayHints.maximumLength).
LABEL_CHARS = 43
HOVER_KINDS = 3


@dataclass(frozen=True)
class HotLine:
    """One hot line of a kernel, placed in the document's current text."""

    kernel: str
    line: int  # 0-based line of the current document
    samples: LineSamples
    profile: LineProfile


def _line_profile(m: Measurement) -> LineProfile | None:
    launch = m.first_launch
    lines = launch.lines if launch is not None else None
    return lines if lines is not None and lines.error is None and lines.lines else None


def sampled_hash(k) -> str:
    """The profiler's source hash of kernel `k` (profiling/worker/launch_source.source_hash): sha256
    of the dedented source `inspect.getsource` gives, from its first decorator to its last line."""
    from tritonlens.profiling.worker.launch_source import text_hash

    return text_hash(" " * k.range.start.column + k.text + "\n")


def placed_lines(m: Measurement, k) -> list[HotLine]:
    """The hottest lines of the measurement of kernel `k` (the current model's), where they are in
    the current text; none once the kernel's text is not the one measured and sampled (a profile of
    the saved file while the editor held an edit of the kernel samples other text).

    A sampled line is 1-based in the file as it was profiled, where the kernel's `def` was at the
    report's `line`: its offset from the `def` holds while the kernel's text is unchanged."""
    lp = _line_profile(m)
    if lp is None or k.text is None or kernel_hash(k.text) != m.kernel_hash:
        return []
    if lp.source_hash is not None and lp.source_hash != sampled_hash(k):
        return []
    def_now = k.name_range.start.line
    first, last = k.range.start.line, k.range.end.line
    out = []
    delta = def_now + 1 - m.entry.line  # profiled 1-based line + delta = current 1-based line
    for s in lp.hottest(HOT_LINES, MIN_SHARE):
        line = s.line + delta - 1
        if first <= line <= last:  # a line outside the kernel was not folded onto it: not the kernel's
            out.append(HotLine(m.kernel, line, _moved(s, delta), lp))
    return out


def _moved(s: LineSamples, delta: int) -> LineSamples:
    """The samples with the lines they name (the loads a stall waits on) in the current text."""
    if delta == 0 or not s.waits_on:
        return s
    return replace(s, line=s.line + delta, waits_on=[w + delta for w in s.waits_on])


def hot_lines(store: KernelResultStore, uri: str, module) -> list[HotLine]:
    out: list[HotLine] = []
    for k in module.kernels:
        m = store.latest(uri, k.name)
        if m is not None:
            out.extend(placed_lines(m, k))
    return out


def hot_line_at(store: KernelResultStore, uri: str, module, line: int) -> HotLine | None:
    k = module.kernel_at(line)
    m = store.latest(uri, k.name) if k is not None else None
    if m is None:
        return None
    return next((h for h in placed_lines(m, k) if h.line == line), None)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "—"


def line_card(hot: HotLine) -> str:
    """The hover of a hot line, in markdown: its share, why its warps stalled, which instructions."""
    from tritonlens.profiling.worker.line_profile import stall_text

    s, lp = hot.samples, hot.profile
    head = (f"**{100 * s.share:.0f}% of {markup.escape(hot.kernel)}'s stall samples** on this line "
            f"({s.samples:,} of {lp.total_samples:,}, {markup.escape(lp.method)})")
    lines = [head]
    if s.stalls:
        lines.append("stalls: " + ", ".join(f"{markup.escape(stall_text(st.reason))} {_pct(st.samples, s.samples)}"
                                             for st in s.stalls[:HOVER_REASONS]))
    for ins in s.instructions[:HOVER_KINDS]:
        example = f" `{ins.example.strip()}`" if ins.example.strip() else ""
        lines.append(f"{markup.escape(ins.kind)} {_pct(ins.samples, s.samples)}{example}")
    if s.waits_on:
        lines.append("its data comes from the load on line " + ", ".join(str(w) for w in s.waits_on[:3]))
    if s.via:
        lines.append("inlined from " + ", ".join(markup.escape(v) for v in s.via[:3]))
    return markup.BREAK.join(lines)


def inlay_hints(snap, hot: list[HotLine], first: int, last: int, kind: types.MarkupKind) -> list[types.InlayHint]:
    """End-of-line hints for the hot lines between `first` and `last` (0-based, inclusive)."""
    out = []
    for h in hot:
        if not (first <= h.line <= last) or h.line >= len(snap.lines):
            continue
        end = snap.position(Position(h.line, len(snap.lines[h.line])))
        out.append(types.InlayHint(position=end, label=label(h.samples), padding_left=True,
                                   tooltip=markup.content(line_card(h), kind)))
    return out


def label(s: LineSamples) -> str:
    """The line's label, short enough to be read whole: the load a stall waits on, when naming it
    would make it too long, is left to the hover."""
    text = s.label()
    return text if len(text) <= LABEL_CHARS or not s.waits_on else replace(s, waits_on=[]).label()


def report_section(m: Measurement, k, text_lines: list[str]) -> str | None:
    """The kernel report's "where the time goes": the hot lines as the hints show them, with what
    the sampling cost (a replay of its own, after the timing the report's figures come from)."""
    hot = placed_lines(m, k)
    if not hot:
        return None
    lp = hot[0].profile
    cost = f", {lp.cost_s:.1f} s in a replay of its own after the timing" if lp.cost_s is not None else ""
    if lp.tensor_pipe_pct is not None and any(i.kind == "tensor core" for h in hot for i in h.samples.instructions):
        cost += f"; tensor cores busy {lp.tensor_pipe_pct:.1f}% of peak"
    rows = []
    for h in hot:
        code = text_lines[h.line].strip() if h.line < len(text_lines) else ""
        rows.append(f"- line {h.line + 1} `{code}`: {markup.escape(h.samples.label())}")
    return (f"**Where the time goes** ({lp.total_samples:,} samples, {markup.escape(lp.method)}{cost})\n\n"
            + "\n".join(rows))
