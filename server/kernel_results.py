"""Latest profile and optimize results per kernel, and how they read in lenses and hovers.

A profile is the kernel's entry of the profile report plus the report's mode, device and backend;
an optimize result is the whole optimize report with the text it was verified against (the
reports' shapes: tritonlens.profiling.worker.reports).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the reports arrive with the engines, which load on first use
    from tritonlens.profiling.worker.messages import LaunchProfile
    from tritonlens.profiling.worker.reports import (
        CandidateReport,
        KernelProfile,
        OptimizeReport,
        ProfileReport,
    )



@dataclass
class Measurement:
    kernel: str
    kernel_hash: str  # hash of the kernel's source when it was measured
    kernel_line: int  # 0-based first line of the kernel at that time
    entry: KernelProfile  # the kernel's entry in the profile report
    mode: str  # "gpu" | "interpreter"
    device: dict = field(default_factory=dict)
    backend: str = "local"
    when: float = field(default_factory=time.time)

    @property
    def first_launch(self) -> LaunchProfile | None:
        return self.entry.launches[0] if self.entry.launches else None


@dataclass
class OptimizeOutcome:
    kernel: str
    kernel_hash: str
    report: OptimizeReport
    text: str = ""  # the document text the candidates were verified against
    when: float = field(default_factory=time.time)

    def offered(self) -> CandidateReport | None:
        """The one rewrite offered as a quick fix: the best, when it was timed and proven faster.
        A rewrite that is only correct (no GPU timed it) is reported, never offered."""
        from tritonlens.rewrite.api import proven

        best = self.report.best
        return best if proven(best) and best.source and best.kernel in (None, self.kernel) else None


class KernelResultStore:
    """The latest profile and the latest optimize outcome of each (document, kernel)."""

    def __init__(self):
        self._profiles: dict[tuple[str, str], Measurement] = {}
        self._optimized: dict[tuple[str, str], OptimizeOutcome] = {}
        self.last_report: dict[str, dict] = {}  # uri -> {"markdown", "json"} of the last run

    def record(self, uri: str, m: Measurement) -> None:
        self._profiles[(uri, m.kernel)] = m

    def latest(self, uri: str, kernel: str) -> Measurement | None:
        return self._profiles.get((uri, kernel))

    def record_optimize(self, uri: str, o: OptimizeOutcome) -> None:
        self._optimized[(uri, o.kernel)] = o

    def optimized(self, uri: str, kernel: str) -> OptimizeOutcome | None:
        return self._optimized.get((uri, kernel))

    def forget_uri(self, uri: str) -> None:
        for key in [k for k in self._profiles if k[0] == uri]:
            del self._profiles[key]
        for key in [k for k in self._optimized if k[0] == uri]:
            del self._optimized[key]


def _num(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _cell(value, fmt) -> str:
    return fmt(value) if _num(value) is not None else "—"


def fmt_time(ms: float) -> str:
    if ms < 0.01:
        return f"{ms * 1000:.1f} µs"
    if ms < 1:
        return f"{ms:.3g} ms"
    return f"{ms:.2f} ms"


FAILURE_CHARS = 120


def failure_line(error: str) -> str:
    """Why a profile failed, in the one line both its lens and its notice show."""
    line = (error.strip().splitlines() or [""])[0].strip()
    return line if len(line) <= FAILURE_CHARS else line[:FAILURE_CHARS - 1].rstrip() + "…"


def summary(m: Measurement) -> str:
    """One line for a code lens: "0.41 ms · 612 TFLOP/s · 86% of peak · compute-bound"."""
    if m.entry.error:
        return f"profile failed: {failure_line(m.entry.error)}"
    launch = m.first_launch
    if launch is None:
        return "profiled: no launch of this kernel was seen"
    t = _num(launch.time_ms)
    if m.mode != "gpu" or t is None:
        n = len(m.entry.launches)
        return f"ran in the interpreter ({n} launch{'es' if n != 1 else ''}) · no GPU timing"
    parts = [fmt_time(t)]
    tflops, gbps = _num(launch.tflops), _num(launch.gbps)
    bound = launch.bound or ""
    if tflops and (bound == "compute" or not gbps):
        parts.append(f"{tflops:.0f} TFLOP/s" if tflops >= 10 else f"{tflops:.2f} TFLOP/s")
    elif gbps:
        parts.append(f"{gbps / 1000:.2f} TB/s" if gbps >= 1000 else f"{gbps:.0f} GB/s")
    pct = _num(launch.pct_of_peak)
    if pct is not None:
        parts.append(f"{pct:.0f}% of peak")
    if bound:
        parts.append(f"{bound}-bound")
    return " · ".join(parts)


def rewrite_title(c: CandidateReport) -> str:
    """The quick fix of a proven rewrite: short, its evidence is in the preview."""
    return f"Apply verified rewrite: {c.speedup:.3g}x faster"


def notice(verb: str, kernel: str | None, summary_text: str) -> str:
    """What the editor says when profile or optimize ends, whichever way it was started."""
    return f"tritonlens {verb} {kernel or 'all kernels'}: {summary_text}"


def profile_summary(store: KernelResultStore, uri: str, report: ProfileReport, kernel: str | None) -> str:
    """The profiled kernel's lens line; every kernel's, named, when the whole file ran."""
    names = [kernel] if kernel else [k.name for k in report.kernels]
    parts = []
    for name in names:
        m = store.latest(uri, name) if report.kernel(name) is not None else None
        text = summary(m) if m is not None else "no launch of this kernel was seen"
        parts.append(text if kernel else f"{name}: {text}")
    return "; ".join(parts) or "no kernel launched"


def diagnostic_message(m: Measurement) -> str | None:
    """The information diagnostic on the kernel line after a GPU measurement."""
    launch = m.first_launch
    if m.entry.error or launch is None or m.mode != "gpu":
        return None
    pct = _num(launch.pct_of_peak)
    bound = launch.bound
    if pct is None or not bound:
        return None
    ceiling = "copy bandwidth" if bound in ("memory", "latency", "underutilized") else "matmul peak"
    return f"{pct:.0f}% of {ceiling}: {bound}-bound; see hover"


COMPILED_MARK = "†"


def _resources(launch: LaunchProfile, c) -> list[str]:
    """Registers, spills, shared memory and occupancy: the run's own, else the compiled
    configuration's (a ConfigFacts, marked), else unknown."""
    if launch.registers is not None or c is None:
        return [_cell(launch.registers, str), _cell(launch.spills, str),
                _cell(launch.shared_bytes, "{:,} B".format), "—"]
    mark = COMPILED_MARK
    spills = "none" if not c.spill_bytes else f"{c.spill_bytes:,} B"
    occupancy = "—" if c.occupancy is None else f"{c.occupancy:g}%{mark}"
    shared = "—" if c.shared_bytes is None else f"{c.shared_bytes:,} B{mark}"
    return [f"{c.registers}{mark}", f"{spills}{mark}", shared, occupancy]


def hover_markdown(m: Measurement, stale: bool, compiled=None) -> str:
    """`compiled`: measurements.CompiledColumns, whose configurations fill the resource columns
    a run left empty (the interpreter measures none), marked as the compile's."""
    lines = ["**Latest measurement**" + (" (before the last edit of this kernel)" if stale else "")]
    device = m.device.get("name") if isinstance(m.device, dict) else None
    lines.append(f"{m.mode} run on {device or m.backend}, backend `{m.backend}`")
    if m.entry.error:
        lines.append(f"error: `{m.entry.error.splitlines()[0]}`")
        return "\n\n".join(lines)
    rows = []
    for i, launch in enumerate(m.entry.launches[:6]):
        c = compiled.configs[i] if compiled is not None else None
        cells = [
            str(launch.grid if launch.grid is not None else ""),
            _cell(launch.time_ms, fmt_time),
            _cell(launch.gbps, "{:.0f}".format),
            _cell(launch.tflops, "{:.1f}".format),
            _cell(launch.pct_of_peak, "{:.0f}%".format),
            str(launch.bound or "—"),
            *_resources(launch, c),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    if rows:
        lines.append(
            "| grid | time | GB/s | TFLOP/s | % of roofline | bound | registers | spills | shared memory "
            "| occupancy |\n|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows)
        )
    partial = next((launch.more["traffic"] for launch in m.entry.launches[:6] if launch.more.get("traffic")), None)
    if partial:
        lines.append(f"GB/s not known: {partial}.")
    if compiled is not None and any(compiled.configs[:6]):
        lines.append(f"{COMPILED_MARK} from the {compiled.target} compile of the same configuration: "
                     "the run measured none.")
    if m.mode != "gpu":
        lines.append("No GPU: kernels ran in Triton's interpreter; timings are not measured.")
    return "\n\n".join(lines)
