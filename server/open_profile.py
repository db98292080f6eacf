"""A recorded profile opened in the editor: `tritonlens profile FILE --lines --format json > prof.json`
on a GPU host, read where the code is edited (tritonlens.server.openProfile, [uri, path]).

Its kernels are matched by name to the document's. A kernel is recorded as the document's latest
measurement only when its source is the one profiled (the profiler's source hash, computed from
the document's text the way the worker computes it from the imported function); a kernel
whose source differs is reported as stale and shown nowhere. A file that is no profile report
changes nothing.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from .analyzed import analyzed, module_of
from .line_hints import placed_lines, sampled_hash


class NotAProfile(Exception):
    """The file cannot be read as a ProfileReport; its message is one line."""


def _recorded_hash(entry) -> str | None:
    launch = entry.launches[0] if entry.launches else None
    if launch is None:
        return None
    return launch.source_hash or (launch.lines.source_hash if launch.lines is not None else None)


def read_report(path: str):
    """The ProfileReport in `path`, or NotAProfile saying in one line why not."""
    from tritonlens.profiling.worker.json_message import MessageError
    from tritonlens.profiling.worker.reports import ProfileReport

    name = Path(path).name
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise NotAProfile(f"cannot read {name}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotAProfile(f"{name} is not JSON: {str(exc).splitlines()[0]}") from exc
    try:
        return ProfileReport.from_json(data)
    except MessageError as exc:
        raise NotAProfile(f"{name} is not a tritonlens profile report (tritonlens profile --format json): "
                          f"{str(exc).splitlines()[0]}") from exc


@dataclass
class Opened:
    """What a recorded profile gave the document."""

    shown: list[str] = field(default_factory=list)  # kernels recorded as the document's measurement
    stale: list[str] = field(default_factory=list)  # profiled from another source of the kernel
    missing: list[str] = field(default_factory=list)  # not defined in the document
    hot_lines: int = 0  # lines with a stall hint among the shown kernels

    def line(self, name: str) -> str:
        parts = []
        if self.shown:
            hints = f", {self.hot_lines} hot line{'s' if self.hot_lines != 1 else ''}" if self.hot_lines else \
                ", no per-line samples (profile with --lines)"
            parts.append(f"{', '.join(self.shown)}{hints}")
        else:
            parts.append("no kernel shown")
        if self.stale:
            parts.append(f"stale (source changed since it was profiled): {', '.join(self.stale)}")
        if self.missing:
            parts.append(f"not in this file: {', '.join(self.missing)}")
        return f"opened {name}: " + "; ".join(parts)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


async def open_profile(ls, uri: str, path: str) -> Opened:
    """Record the report at `path` as the measurements of the open document `uri`."""
    from .worker_jobs import record_profile

    report = read_report(path)
    snap, result = await analyzed(ls, uri)
    module = module_of(result)
    if snap is None or module is None:
        raise NotAProfile(f"{Path(path).name}: open the kernel's file in the editor first")
    opened = Opened()
    matching = []
    for entry in report.kernels:
        k = module.kernel(entry.name)
        recorded = _recorded_hash(entry)
        if k is None:
            opened.missing.append(entry.name)
        elif recorded is not None and recorded != sampled_hash(k):
            opened.stale.append(entry.name)
        else:
            matching.append(entry)
            opened.shown.append(entry.name)
    if matching:
        await record_profile(ls, uri, dataclasses.replace(report, kernels=matching))
        for name in opened.shown:
            m = ls.measurements.latest(uri, name)
            if m is not None:
                opened.hot_lines += len(placed_lines(m, module.kernel(name)))
    return opened
