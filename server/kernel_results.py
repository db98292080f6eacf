"""Latest profiling (and optimization) results per kernel, and how they read in lenses and hovers.

Entries follow the profile JSON contract of `tritonlens profile --format json`: one kernel entry
{"name", "line", "launches": [{"time_ms", "gbps", "tflops", "pct_of_peak", "bound", "registers",
"spills", ...}], "error"} plus the report's "mode", "device" and "backend".
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Measurement:
    kernel: str
    kernel_hash: str  # hash of the kernel's source when it was measured
    kernel_line: int  # 0-based first line of the kernel at that time
    entry: dict  # the kernel's entry in the profile report
    mode: str  # "gpu" | "interpreter"
    device: dict = field(default_factory=dict)
    backend: str = "local"
    when: float = field(default_factory=time.time)

    @property
    def first_launch(self) -> dict | None:
        launches = self.entry.get("launches") or []
        return launches[0] if launches else None


@dataclass
class OptimizeOutcome:
    kernel: str
    kernel_hash: str
    report: dict  # the optimize JSON contract
    text: str = ""  # the document text the candidates were verified against
    when: float = field(default_factory=time.time)

    def accepted(self) -> list[dict]:
        return [c for c in self.report.get("candidates") or []
                if c.get("accepted") and c.get("source") and (c.get("kernel") in (None, self.kernel))]


class KernelResultStore:
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


def fmt_time(ms: float) -> str:
    if ms < 0.01:
        return f"{ms * 1000:.1f} µs"
    if ms < 1:
        return f"{ms:.3g} ms"
    return f"{ms:.2f} ms"


def summary(m: Measurement) -> str:
    """One line for a code lens: "0.41 ms · 612 TFLOP/s · 86% of peak · compute-bound"."""
    if m.entry.get("error"):
        return f"profile failed: {str(m.entry['error']).splitlines()[0][:80]}"
    launch = m.first_launch
    if launch is None:
        return "profiled: no launch of this kernel was seen"
    t = _num(launch.get("time_ms"))
    if m.mode != "gpu" or t is None:
        n = len(m.entry.get("launches") or [])
        return f"ran in the interpreter ({n} launch{'es' if n != 1 else ''}) · no GPU timing"
    parts = [fmt_time(t)]
    tflops, gbps = _num(launch.get("tflops")), _num(launch.get("gbps"))
    bound = launch.get("bound") or ""
    if tflops and (bound == "compute" or not gbps):
        parts.append(f"{tflops:.0f} TFLOP/s" if tflops >= 10 else f"{tflops:.2f} TFLOP/s")
    elif gbps:
        parts.append(f"{gbps / 1000:.2f} TB/s" if gbps >= 1000 else f"{gbps:.0f} GB/s")
    pct = _num(launch.get("pct_of_peak"))
    if pct is not None:
        parts.append(f"{pct:.0f}% of peak")
    if bound:
        parts.append(f"{bound}-bound")
    return " · ".join(parts)


def diagnostic_message(m: Measurement) -> str | None:
    """The information diagnostic on the kernel line after a GPU measurement."""
    launch = m.first_launch
    if m.entry.get("error") or launch is None or m.mode != "gpu":
        return None
    pct = _num(launch.get("pct_of_peak"))
    bound = launch.get("bound")
    if pct is None or not bound:
        return None
    ceiling = "copy bandwidth" if bound in ("memory", "latency", "underutilized") else "matmul peak"
    return f"{pct:.0f}% of {ceiling}: {bound}-bound; see hover"


def hover_markdown(m: Measurement, stale: bool) -> str:
    lines = ["**Latest measurement**" + (" (before the last edit of this kernel)" if stale else "")]
    device = m.device.get("name") if isinstance(m.device, dict) else None
    lines.append(f"{m.mode} run on {device or m.backend}, backend `{m.backend}`")
    if m.entry.get("error"):
        lines.append(f"error: `{str(m.entry['error']).splitlines()[0]}`")
        return "\n\n".join(lines)
    rows = []
    for launch in (m.entry.get("launches") or [])[:6]:
        t = _num(launch.get("time_ms"))
        cells = [
            str(launch.get("grid", "")),
            fmt_time(t) if t is not None else "—",
            f"{_num(launch.get('gbps')):.0f}" if _num(launch.get("gbps")) is not None else "—",
            f"{_num(launch.get('tflops')):.1f}" if _num(launch.get("tflops")) is not None else "—",
            f"{_num(launch.get('pct_of_peak')):.0f}%" if _num(launch.get("pct_of_peak")) is not None else "—",
            str(launch.get("bound") or "—"),
            str(launch.get("registers") if launch.get("registers") is not None else "—"),
            str(launch.get("spills") if launch.get("spills") is not None else "—"),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    if rows:
        lines.append(
            "| grid | time | GB/s | TFLOP/s | % of roofline | bound | registers | spills |\n"
            "|---|---|---|---|---|---|---|---|\n" + "\n".join(rows)
        )
    if m.mode != "gpu":
        lines.append("No GPU: kernels ran in Triton's interpreter; timings are not measured.")
    return "\n\n".join(lines)
