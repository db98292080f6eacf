"""The per-line stall samples an optimize is given: a profile's `LaunchProfile.lines`, checked
against the text being optimized before anything reads them.

    sampled = from_report(read_report("profile.json"))  # `tritonlens profile FILE --lines --format json`
    sampled = measured(text, kernel, latest)              # the language server's latest measurements
    report = optimize_file(path, options, hot_lines=sampled)

A kernel's samples count only while its source is the one that was sampled: the worker hashed
the kernel's source (`inspect.getsource`, dedented) when it ran, and the same hash is taken here
from the text. Another hash: the samples are dropped with a one-line note, never shown against
lines they were not taken on. The same source lower or higher in the file (lines added above
it): its lines move with its `def`.
"""

from __future__ import annotations

import inspect
import json
import os
from dataclasses import dataclass, replace

from tritonlens.analysis.kernel_discovery import discover
from tritonlens.analysis.python_ast import parse as parse_python
from tritonlens.profiling.worker.launch_source import text_hash
from tritonlens.profiling.worker.line_profile import LineProfile
from tritonlens.profiling.worker.reports import KernelProfile, ProfileReport


@dataclass(frozen=True)
class SampledLines:
    """One kernel's samples per line, as a profile took them."""

    lines: LineProfile
    source_hash: str | None = None  # the kernel's source when sampled (the worker's hash)
    def_line: int | None = None  # 1-based line of its `def` in the file sampled; None: where it is now
    tensor_pipe_pct: float | None = None  # the launch's tensor-pipe use, when Nsight Compute measured it
    roofline_pct: float | None = None  # the launch's time against its roofline (LaunchProfile.pct_of_peak)

    @property
    def kernel(self) -> str:
        return self.lines.kernel


def from_kernel(entry: KernelProfile | None) -> SampledLines | None:
    """The samples of the kernel's first launch that has any (the profile samples only its first)."""
    for launch in entry.launches if entry is not None else ():
        lines = launch.lines
        if lines is None or lines.error is not None or not lines.lines:
            continue
        ncu = launch.ncu
        tensor = ncu.tensor_pipe_pct if ncu is not None and ncu.tensor_pipe_pct is not None else lines.tensor_pipe_pct
        return SampledLines(lines, lines.source_hash or launch.source_hash, entry.line, tensor, launch.pct_of_peak)
    return None


def from_report(report: ProfileReport, kernel: str | None = None) -> list[SampledLines]:
    """Every kernel's samples in a profile report (only `kernel`'s, when given)."""
    found = (from_kernel(k) for k in report.kernels if kernel in (None, k.name))
    return [s for s in found if s is not None]


def measured(text: str, kernel: str | None, latest) -> list[SampledLines]:
    """The samples of `kernel` (of every kernel of `text`) among the latest measurements:
    `latest(name)` is the kernel's KernelProfile, or None."""
    try:
        names = [kernel] if kernel else [k.name for k in discover(parse_python(text)) if k.launchable]
    except SyntaxError:
        return []  # the optimize says what is wrong with the text
    found = (from_kernel(latest(name)) for name in names)
    return [s for s in found if s is not None]


def read_report(path: str) -> ProfileReport:
    """A `tritonlens profile --format json` file; ValueError saying what is wrong with it."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from exc
    return ProfileReport.from_json(data, os.path.basename(path))  # MessageError is a ValueError


def kernel_source_hash(text: str, kernel: str) -> str | None:
    """The worker's hash of `kernel`'s source (profiling/worker/launch_source.py source_hash), from
    the file's text: from its first decorator to the end of its body, as inspect.getsource reads it."""
    fn = _kernel_node(text, kernel)
    if fn is None:
        return None
    first = min([fn.lineno] + [d.lineno for d in fn.decorator_list])
    block = inspect.getblock(text.splitlines(keepends=True)[first - 1:])
    return text_hash("".join(block))


def current(text: str, sampled: list[SampledLines] | tuple[SampledLines, ...]) -> tuple[dict[str, SampledLines], list[str]]:
    """{kernel: its samples, on the lines of `text`} and a note for each set dropped."""
    out: dict[str, SampledLines] = {}
    notes: list[str] = []
    for s in sampled:
        name = s.kernel
        if name in out:
            continue  # a kernel's first samples stand
        fn = _kernel_node(text, name)
        if fn is None:
            notes.append(f"line samples of {name} ignored: no kernel {name} in the file")
            continue
        if s.source_hash is None or s.source_hash != kernel_source_hash(text, name):
            notes.append(f"line samples of {name} ignored: they were taken on another version of its source "
                         "(profile it again with --lines)")
            continue
        shift = fn.lineno - s.def_line if s.def_line is not None else 0
        moved = [replace(line, line=line.line + shift, waits_on=[w + shift for w in line.waits_on])
                 for line in s.lines.lines] if shift else s.lines.lines
        out[name] = replace(s, lines=replace(s.lines, lines=moved), def_line=fn.lineno)
    return out, notes


def _kernel_node(text: str, kernel: str):
    try:
        tree = parse_python(text)
    except SyntaxError:
        return None
    return next((k.node for k in discover(tree) if k.name == kernel), None)
