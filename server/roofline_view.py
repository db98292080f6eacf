"""The roofline picture in the report command's answer: the file's last profile, with the rewrites
an optimize proved faster for the same kernel text, drawn by tritonlens.profiling.roofline_plot
and embedded in the markdown as an SVG `data:` image (the VS Code report view admits `data:`
images and nothing else). Without matplotlib in the server's environment, or with nothing to draw
(the interpreter timed nothing), the section is one line saying so.

The file's last report is the last run's, a profile or an optimize; an optimize's report replaces
the profile's, so the profile is kept here as an optimize starts.
"""

from __future__ import annotations

import asyncio
import base64
import os
import weakref
from typing import TYPE_CHECKING

from .markup import escape

if TYPE_CHECKING:
    from tritonlens.profiling.worker.reports import OptimizeReport, ProfileReport

HEADING = "## Roofline"
NO_MATPLOTLIB = (f"{HEADING}\n\n_The roofline picture needs matplotlib where the server runs: "
                 "pip install 'tritonlens[plot]'._")

# server → {uri: the profile an optimize's report replaced as the file's last report}
_kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _report_profile(ls, uri: str) -> ProfileReport | None:
    """The file's last report when it is a profile (only a profile's has per-kernel sections)."""
    from tritonlens.profiling.worker.reports import ProfileReport

    last = ls.measurements.last_report.get(uri)
    if last is None or "sections" not in last:
        return None
    return ProfileReport.from_json(last["json"])


def keep_profile(ls, uri: str) -> None:
    """Before an optimize replaces the file's last report: keep the profile it held."""
    profile = _report_profile(ls, uri)
    if profile is not None:
        _kept.setdefault(ls, {})[uri] = profile


def last_profile(ls, uri: str) -> ProfileReport | None:
    return _report_profile(ls, uri) or _kept.get(ls, {}).get(uri)


def proven_rewrites(ls, uri: str, profile: ProfileReport) -> list[OptimizeReport]:
    """The optimize reports of the profiled kernels, each only while it was verified against the
    kernel text that was profiled."""
    reports: list[OptimizeReport] = []
    for kernel in profile.kernels:
        measured = ls.measurements.latest(uri, kernel.name)
        outcome = ls.measurements.optimized(uri, kernel.name)
        if measured is None or outcome is None or outcome.kernel_hash != measured.kernel_hash:
            continue
        if all(r is not outcome.report for r in reports):
            reports.append(outcome.report)
    return reports


async def section(ls, uri: str) -> str | None:
    """The report's roofline section; None when the file has no profile."""
    profile = last_profile(ls, uri)
    if profile is None:
        return None
    from tritonlens.profiling.roofline_plot import NothingToPlot, roofline_svg

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return NO_MATPLOTLIB
    try:
        svg = await asyncio.to_thread(roofline_svg, profile, proven_rewrites(ls, uri, profile))
    except NothingToPlot as exc:
        return f"{HEADING}\n\n_{escape(str(exc))}._"
    name = escape(os.path.basename(profile.file))
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f"{HEADING}\n\n![roofline of {name}](data:image/svg+xml;base64,{data})"


async def with_picture(ls, uri: str, answer: dict) -> dict:
    """The report command's answer with the roofline section after its markdown."""
    picture = await section(ls, uri)
    if picture is None:
        return answer
    return {**answer, "markdown": f"{answer['markdown']}\n\n---\n\n{picture}"}
