"""`--plot [PATH]` of `tritonlens profile` and `tritonlens optimize`: the roofline picture
(roofline_plot.py) written beside the report, SVG or PNG by the name's extension; without a
PATH, `<file stem>.roofline.svg` in the current folder. The path is checked before any kernel
runs; where the picture went, or why there is none, is said on stderr (stdout keeps the report).

For optimize, the original's launches are profiled once the optimize is done (on a GPU only: the
interpreter times nothing), before --apply rewrites the file, and the proven rewrite's point is
drawn beside them.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tritonlens.profiling.worker.reports import OptimizeReport, ProfileReport

FORMATS = {".svg": "svg", ".png": "png"}


class PlotError(ValueError):
    """A --plot that cannot be honoured; the message is one line."""


@dataclass(frozen=True)
class PlotTarget:
    path: str
    fmt: str  # svg | png


def add_argument(parser) -> None:
    parser.add_argument("--plot", nargs="?", const="", default=None, metavar="PATH",
                        help="also draw the launches on the GPU's measured roofline, as PATH (.svg or .png; "
                             "default: FILE's name + .roofline.svg in the current folder)")


def target(file: str, plot: str | None) -> PlotTarget | None:
    """Where `--plot` writes for the kernel file `file`; None without --plot. Raises PlotError."""
    if plot is None:
        return None
    path = plot or os.path.splitext(os.path.basename(file))[0] + ".roofline.svg"
    fmt = FORMATS.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        raise PlotError(f"--plot: the picture's name must end in .svg or .png, got {path!r}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise PlotError(f"--plot: no folder {folder} to write {os.path.basename(path)} in")
    if not os.access(folder, os.W_OK) or os.path.isdir(path):
        raise PlotError(f"--plot: cannot write {path}")
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise PlotError("--plot needs matplotlib: pip install 'tritonlens[plot]'") from exc
    return PlotTarget(path, fmt)


def profile_original(report: OptimizeReport, prog: str, **profile_args) -> ProfileReport | None:
    """The optimized file's own profile (profile_file's `profile_args`), or None: no GPU timed the
    optimize, or the profile failed (said)."""
    from .api import ProfileError, profile_file

    if report.mode != "gpu":
        return None
    try:
        return profile_file(report.path, **profile_args)
    except ProfileError as exc:
        print(f"{prog}: no roofline picture: the original's profile failed: {exc}", file=sys.stderr)
        return None


def write(plot: PlotTarget, prog: str, profile: ProfileReport | None, optimizes: Iterable[OptimizeReport] = ()) -> int:
    """Draw and write the picture; 0 when written or when there is nothing to draw (said), 2 when
    the file could not be written."""
    from .roofline_plot import NothingToPlot, render
    from .roofline_points import roofline_data

    try:
        if profile is None:
            raise NothingToPlot("no roofline: no GPU timed the kernels")
        picture = render(roofline_data(profile, optimizes), plot.fmt)
    except NothingToPlot as exc:
        print(f"{prog}: {exc}; {plot.path} not written", file=sys.stderr)
        return 0
    try:
        with open(plot.path, "wb") as fh:
            fh.write(picture)
    except OSError as exc:
        print(f"{prog}: cannot write {plot.path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"{prog}: roofline picture written to {plot.path}", file=sys.stderr)
    return 0
