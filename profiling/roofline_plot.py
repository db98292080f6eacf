"""The roofline picture of a profile (and of its proven rewrites), drawn with matplotlib's Agg
and SVG backends: no display, no pyplot state.

    svg_text = roofline_svg(profile_report, [optimize_report])
    png_bytes = roofline_png(profile_report)

Left, the roofline: arithmetic intensity (FLOP/byte) against achieved TFLOP/s, both log scale,
under the measured copy-bandwidth slope and matmul roof (and the tf32 roof, when measured). Right,
when some launch has bytes but no FLOP count, its achieved bandwidth against the copy ceiling.
A rewrite's point sits beside its original's, an arrow from one to the other. What was left out
is named under the plots. Points and ceilings carry SVG ids (`point:LABEL`, `rewrite:LABEL`,
`point-bandwidth:LABEL`, `rewrite-bandwidth:LABEL`, `bandwidth-stem:LABEL`, `roof:copy`, `roof:matmul`,
`roof:tf32`, `roof:copy-bandwidth`).

The output is the same for the same reports: fixed SVG id salt, no date, text kept as text.
Raises roofline_points.NothingToPlot (one short line) when there is nothing to draw.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .roofline_points import (
    Ceilings,
    NothingToPlot,
    RooflineData,
    RooflinePoint,
    roofline_data,
)

if TYPE_CHECKING:
    from tritonlens.profiling.worker.reports import OptimizeReport, ProfileReport

__all__ = ["NothingToPlot", "render", "roofline_png", "roofline_svg"]

ORIGINAL = "#1f5fa8"
REWRITE = "#d9591b"
ROOF = "#333333"
LABEL_BOX = {"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}
RC = {"svg.hashsalt": "tritonlens-roofline", "svg.fonttype": "none", "font.size": 9,
      "font.family": "DejaVu Sans", "axes.titlesize": 10}


def roofline_svg(profile: ProfileReport, optimizes: Iterable[OptimizeReport] = ()) -> str:
    return render(roofline_data(profile, optimizes), "svg").decode("utf-8")


def roofline_png(profile: ProfileReport, optimizes: Iterable[OptimizeReport] = ()) -> bytes:
    return render(roofline_data(profile, optimizes), "png")


def _tera(value: float) -> str:
    return f"{value / 1000:.2f} TB/s" if value >= 1000 else f"{value:.0f} GB/s"


def _decades(lo: float, hi: float) -> tuple[float, float]:
    return 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))


def _roofline_axes(ax, data: RooflineData) -> None:
    c: Ceilings = data.ceilings
    points = data.on_roofline
    xs = [p.intensity for p in points] + [c.ridge / 30, c.ridge * 30]
    x_lo, x_hi = _decades(min(xs), max(xs))
    ys = [p.tflops for p in points] + [c.copy_gbps * x_lo / 1e3, c.matmul_tflops]
    y_lo, y_hi = _decades(min(ys) / 2, max(ys) * 2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("achieved TFLOP/s")
    ax.set_title("roofline")
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
    (copy,) = ax.plot([x_lo, c.ridge], [c.copy_gbps * x_lo / 1e3, c.matmul_tflops], color=ROOF, linewidth=1.6)
    copy.set_gid("roof:copy")
    (peak,) = ax.plot([c.ridge, x_hi], [c.matmul_tflops] * 2, color=ROOF, linewidth=1.6)
    peak.set_gid("roof:matmul")
    ax.annotate(f"copy {_tera(c.copy_gbps)}", (c.ridge / 12, c.copy_gbps * c.ridge / 12 / 1e3),
                rotation_mode="anchor", ha="left", va="bottom", fontsize=8, color=ROOF,
                xytext=(-14, 6), textcoords="offset points")
    ax.annotate(f"matmul {c.matmul_tflops:.0f} TFLOP/s", (c.ridge, c.matmul_tflops), ha="right", va="bottom",
                fontsize=8, color=ROOF, xytext=(-2, 4), textcoords="offset points")
    if c.tf32_tflops and c.tf32_tflops < c.matmul_tflops:
        ridge32 = c.tf32_tflops * 1e3 / c.copy_gbps
        (tf32,) = ax.plot([ridge32, x_hi], [c.tf32_tflops] * 2, color=ROOF, linewidth=1.0, linestyle="--")
        tf32.set_gid("roof:tf32")
        ax.annotate(f"tf32 {c.tf32_tflops:.0f} TFLOP/s", (x_hi, c.tf32_tflops), ha="right", va="top",
                    fontsize=8, color=ROOF, xytext=(-4, -3), textcoords="offset points")
    if not points:
        ax.text(0.5, 0.5, "no launch with a FLOP count\n(only tl.dot products are counted)",
                transform=ax.transAxes, ha="center", va="center", color="#666666")
    for p in points:
        _mark(ax, p, p.intensity, p.tflops, data.rewrite_of(p) if not p.rewrite else None)


def _mark(ax, p: RooflinePoint, x: float, y: float, rewrite: RooflinePoint | None, kind: str = "") -> None:
    """One launch's marker, an arrow to its rewrite's, and the label (the bandwidth panel names
    its rows on the axis instead)."""
    color = REWRITE if p.rewrite else ORIGINAL
    artist = ax.scatter([x], [y], s=42, color=color, marker="D" if p.rewrite else "o", zorder=3,
                        edgecolors="white", linewidths=0.6)
    artist.set_gid(f"{'rewrite' if p.rewrite else 'point'}{kind}:{p.label}")
    if p.rewrite:
        ax.annotate(f"rewrite {p.speedup:.3g}x", (x, y), xytext=(7, 0), textcoords="offset points", va="center",
                    fontsize=8, color=REWRITE, bbox=LABEL_BOX)
        return
    if not kind:
        ax.annotate(p.label, (x, y), xytext=(7, 0), textcoords="offset points", va="center", fontsize=8,
                    color=ORIGINAL, bbox=LABEL_BOX)
    if rewrite is not None:
        rx = rewrite.intensity if not kind else rewrite.gbps / 1e3
        ry = rewrite.tflops if not kind else y
        ax.annotate("", (rx, ry), (x, y), zorder=2,
                    arrowprops={"arrowstyle": "->", "color": REWRITE, "linewidth": 1.0, "shrinkA": 4, "shrinkB": 5})


def _bandwidth_axes(ax, data: RooflineData) -> None:
    c = data.ceilings
    originals = [p for p in data.by_bandwidth if not p.rewrite]
    top = max([c.copy_gbps] + [p.gbps for p in data.by_bandwidth]) / 1e3
    ax.set_xlim(0, top * 1.15)
    ax.set_ylim(-0.7, len(originals) - 0.3)
    ax.set_yticks(range(len(originals)), [p.label for p in originals])
    ax.invert_yaxis()
    ax.set_xlabel("achieved TB/s (no FLOP count)")
    ax.set_title("bandwidth")
    ax.grid(True, axis="x", color="#dddddd", linewidth=0.6)
    copy = ax.axvline(c.copy_gbps / 1e3, color=ROOF, linewidth=1.6)
    copy.set_gid("roof:copy-bandwidth")
    ax.annotate(f"copy {_tera(c.copy_gbps)}", (c.copy_gbps / 1e3, 0), xycoords=("data", "axes fraction"),
                ha="right", va="bottom", rotation=90, fontsize=8, color=ROOF, xytext=(-3, 4),
                textcoords="offset points")
    for row, p in enumerate(originals):
        rewrite = data.rewrite_of(p)
        (stem,) = ax.plot([0, p.gbps / 1e3], [row, row], color=ORIGINAL, linewidth=0.8, alpha=0.5)
        stem.set_gid(f"bandwidth-stem:{p.label}")
        _mark(ax, p, p.gbps / 1e3, row, rewrite, kind="-bandwidth")
        if rewrite is not None:
            _mark(ax, rewrite, rewrite.gbps / 1e3, row, None, kind="-bandwidth")
        pct = 100 * p.gbps / c.copy_gbps
        ax.annotate(f"{pct:.0f}% of copy", (p.gbps / 1e3, row), xytext=(0, -9), textcoords="offset points",
                    ha="center", va="top", fontsize=7, color="#666666")


def _footnotes(data: RooflineData) -> list[str]:
    notes = []
    if any(p.rewrite for p in data.points):
        notes.append("rewrite: the original's work in its time ÷ the verified speedup")
    if data.left_out:
        shown = "; ".join(data.left_out[:4]) + (f"; {len(data.left_out) - 4} more" if len(data.left_out) > 4 else "")
        notes.append(f"left out: {shown}")
    return notes


def render(data: RooflineData, fmt: str = "svg") -> bytes:
    """The picture of `data` as SVG (UTF-8) or PNG bytes."""
    if fmt not in ("svg", "png"):
        raise ValueError(f"picture format must be svg or png, not {fmt!r}")
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(RC):
        panels = [data.on_roofline or not data.by_bandwidth, bool(data.by_bandwidth)]
        widths = [w for w, shown in zip((5.2, 3.6), panels) if shown]
        notes = _footnotes(data)
        rows = sum(not p.rewrite for p in data.by_bandwidth)  # the bandwidth panel's, one a launch
        fig = Figure(figsize=(sum(widths) + 0.6, max(4.0, 1.6 + 0.3 * rows) + 0.18 * len(notes)), facecolor="white")
        grid = fig.add_gridspec(1, len(widths), width_ratios=widths)
        axes = iter(fig.add_subplot(grid[0, i]) for i in range(len(widths)))
        if panels[0]:
            _roofline_axes(next(axes), data)
        if panels[1]:
            _bandwidth_axes(next(axes), data)
        fig.suptitle(f"{data.title}: measured ceilings", fontsize=10)
        for i, note in enumerate(notes):
            fig.text(0.01, 0.01 + 0.045 * (len(notes) - 1 - i), note, fontsize=7.5, color="#555555")
        fig.tight_layout(rect=(0, 0.05 * len(notes), 1, 1))
        out = io.BytesIO()
        if fmt == "svg":
            fig.savefig(out, format="svg", metadata={"Date": None})
        else:
            fig.savefig(out, format="png", dpi=130, metadata={"Software": None})
    return out.getvalue()
