"""A kernel's full report, in markdown: what the hover card leaves out. Its signature, the resolved
configurations, the static estimates on the target GPU's roofline, every finding, the compile facts
of each configuration, the latest measurement and optimization. The card links to it; the report
command answers it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tritonlens.analysis.kernel_roles import role_of
from tritonlens.analysis.values import UNKNOWN, fmt

from . import estimates_view, kernel_results, line_hints
from .diagnostics import kernel_hash
from .markup import escape
from .measurements import compiled_columns

if TYPE_CHECKING:
    from tritonlens.profiling.worker.reports import OptimizeReport

MAX_CONFIGS = 12


def configurations_table(k, recorded: int = 0) -> str:
    """One row per distinct configuration; a value no launch gives is left blank, and the values
    the text never gives are listed once below instead of a column of unknowns: as given by the
    `recorded` launches of the kernel when there are any (they are what profile runs)."""
    constexprs = [p.name for p in k.params if p.is_constexpr]
    if not k.configs:
        return "_No launch of this kernel in this file: values unknown._"
    cols = [n for n in constexprs + ["num_warps", "num_stages"] if any(c.get(n) is not UNKNOWN for c in k.configs)]
    unknown = [n for n in constexprs if n not in cols]
    rows = []
    for c in k.configs[:MAX_CONFIGS]:
        cells = []
        for name in cols:
            v = c.values.get(name)
            cells.append("" if v is None or v.value is UNKNOWN else escape(fmt(v.value))
                         + (" (default)" if v.origin.startswith("Triton's default") else ""))
        row = f"| {escape(c.label)} | " + " | ".join(cells) + " |"
        if row not in rows:
            rows.append(row)
    head = "| configuration | " + " | ".join(f"`{n}`" for n in cols) + " |\n|---|" + "---|" * len(cols)
    text = head + "\n" + "\n".join(rows)
    if len(k.configs) > MAX_CONFIGS:
        text += f"\n\n_{len(k.configs) - MAX_CONFIGS} more configurations not shown._"
    if unknown:
        names = ", ".join(f"`{n}`" for n in unknown)
        text += (f"\n\n{names}: from the {recorded} recorded launch{'es' if recorded != 1 else ''} of this kernel, "
                 "not from this file's text." if recorded else f"\n\nNo launch in this file gives {names}.")
    return text


def optimize_section(report: OptimizeReport) -> str:
    refused = [c for c in report.candidates if not c.accepted]
    accepted = [c for c in report.candidates if c.accepted]
    from tritonlens.rewrite.api import proven, summary

    lines = [f"**Optimization** ({report.mode or 'unknown'} mode): {escape(summary(report))}"]
    for c in accepted[:3]:
        offered = proven(c) and (c.title, c.source) == (report.best.title, report.best.source)
        lines.append(f"- {'offered as a quick fix' if offered else 'correct, not offered'}: {escape(c.title)}"
                     + (f" ({c.speedup:.3g}x faster)" if offered else ""))
    if report.refusals:
        lines.append(f"- {escape(report.refusals)}")
    else:
        for c in refused[:5]:
            lines.append(f"- refused ({escape(c.proposer)}): {escape(c.reason)}")
    return "\n".join(lines)


def _recorded(uri: str, kernel: str) -> int:
    from pygls.uris import to_fs_path
    from tritonlens.profiling.launch_records import records_for

    path = to_fs_path(uri)
    return len(records_for(path, kernel)) if path else 0


def kernel_report(ctx, module, k) -> str:
    """The full report of kernel `k` (ctx: hover.HoverContext)."""
    role = role_of(module, k)
    if role is not None and not role.launchable:
        parts = [f"# `{k.name}` · Triton device helper ({escape(role.reason)})", f"```python\n{k.signature}\n```"]
    else:
        parts = [f"# `{k.name}` · Triton kernel" + (" (autotuned)" if k.autotuned else ""),
                 f"```python\n{k.signature}\n```",
                 "**Configurations** (resolved constexpr values per launch site)\n\n"
                 + configurations_table(k, _recorded(ctx.uri, k.name))]
        est = estimates_view.kernel_section(module, k, ctx.settings)
        if est:
            parts.append(est)
    here = [f for f in ctx.findings if f.kernel == k.name]
    if here:
        items = "\n".join(f"- **{f.code}** line {f.range.start.line + 1}: {escape(f.message)}" for f in here)
        parts.append(f"**Findings** ({len(here)})\n\n{items}")
    compiled = ctx.facts.hover_section(k)
    if compiled:
        parts.append(compiled)
    m = ctx.measurements.latest(ctx.uri, k.name)
    if m is not None:
        parts.append(kernel_results.hover_markdown(m, stale=m.kernel_hash != kernel_hash(k.text),
                                                   compiled=compiled_columns(ctx.facts, m)))
        hot = line_hints.report_section(m, k, module.src.text.splitlines())
        if hot:
            parts.append(hot)
    opt = ctx.measurements.optimized(ctx.uri, k.name)
    if opt is not None:
        parts.append(optimize_section(opt.report))
    return "\n\n---\n\n".join(parts)
