"""Where a profile's launches sit on the roofline: the typed points roofline_plot.py draws.

A launch is placed by its work (bytes moved: the tensors it reads and writes, as the capture
counted them; FLOPs: 2·M·N·K of its tl.dot products, the only FLOPs the profiler counts) and its
measured time. A launch with a FLOP count is a point of the roofline itself (arithmetic intensity,
achieved FLOP/s); one with bytes only has no intensity to place it by, so it is shown by its
achieved bandwidth against the copy ceiling. A launch with neither, or with no time (Triton's
interpreter, a failure, a cached launch not timed again), is left out, and the picture names it.

After an optimize, a kernel whose rewrite was timed and proven faster gets a second point: the
same work (a verified rewrite computes the same outputs from the same inputs) in the original's
time divided by the verified speedup. The speedup is the verifier's, over the whole harness call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tritonlens.profiling.worker.messages import LaunchProfile
    from tritonlens.profiling.worker.reports import OptimizeReport, ProfileReport


class NothingToPlot(ValueError):
    """No picture can be drawn; the message says why in one short line."""


@dataclass(frozen=True)
class Ceilings:
    """The GPU's measured ceilings (ceilings.py): copy bandwidth and matmul peaks."""

    copy_gbps: float
    matmul_tflops: float
    tf32_tflops: float | None = None

    @property
    def ridge(self) -> float:
        """The arithmetic intensity (FLOP/byte) where the copy slope meets the matmul roof."""
        return self.matmul_tflops * 1e3 / self.copy_gbps

    @classmethod
    def of(cls, ceilings: dict | None) -> Ceilings | None:
        if not isinstance(ceilings, dict):
            return None
        copy, peak, tf32 = (_positive(ceilings.get(k)) for k in ("copy_gbps", "matmul_tflops", "matmul_tf32_tflops"))
        return cls(copy, peak, tf32) if copy and peak else None


@dataclass(frozen=True)
class RooflinePoint:
    label: str  # the kernel's name, numbered when the kernel has several launches
    kernel: str
    time_ms: float
    bytes: int
    flops: int | None  # None: no tl.dot, not counted
    rewrite: bool = False
    speedup: float | None = None  # the rewrite's, verified

    @property
    def intensity(self) -> float | None:
        return self.flops / self.bytes if self.flops else None

    @property
    def tflops(self) -> float | None:
        return self.flops / (self.time_ms * 1e-3) / 1e12 if self.flops else None

    @property
    def gbps(self) -> float:
        return self.bytes / (self.time_ms * 1e-3) / 1e9


@dataclass
class RooflineData:
    title: str
    ceilings: Ceilings
    points: list[RooflinePoint] = field(default_factory=list)  # originals and their rewrites
    left_out: list[str] = field(default_factory=list)  # "add_kernel: not timed (Triton's interpreter)"

    @property
    def on_roofline(self) -> list[RooflinePoint]:
        return [p for p in self.points if p.flops]

    @property
    def by_bandwidth(self) -> list[RooflinePoint]:
        return [p for p in self.points if not p.flops]

    def rewrite_of(self, original: RooflinePoint) -> RooflinePoint | None:
        return next((p for p in self.points if p.rewrite and p.label == original.label), None)


def _positive(value) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    return float(value) if ok else None


def launch_work(launch: LaunchProfile) -> tuple[int | None, int | None]:
    """(bytes read + written, FLOPs) of a launch as the bench job recorded them; None: not known."""
    moved = launch.more.get("bytes")
    total = None
    if isinstance(moved, dict):
        parts = [moved.get("read"), moved.get("written")]
        if all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in parts):
            total = sum(parts) or None
    flops = launch.more.get("flops")
    return total, flops if isinstance(flops, int) and not isinstance(flops, bool) and flops > 0 else None


def _why_left_out(launch: LaunchProfile, mode: str | None, nbytes: int | None) -> str | None:
    if launch.error:
        return "failed"
    if launch.cached:
        return "cached, not timed again"
    if _positive(launch.time_ms) is None:
        return "not timed (Triton's interpreter)" if mode == "interpreter" else "not timed"
    if nbytes is None:
        return "touches only part of its tensors" if launch.more.get("traffic") else "no byte count"
    return None


def speedups(optimizes: Iterable[OptimizeReport]) -> dict[str, float]:
    """Kernel name → the verified speedup of its proven rewrite, from optimize reports."""
    from tritonlens.rewrite.api import proven

    out: dict[str, float] = {}
    for report in optimizes:
        best = report.best
        if not proven(best) or report.mode != "gpu":
            continue
        names = [best.kernel] if best.kernel else (report.kernel or "").split(",")
        for name in filter(None, names):
            out[name] = float(best.speedup)
    return out


def roofline_data(profile: ProfileReport, optimizes: Iterable[OptimizeReport] = ()) -> RooflineData:
    """The points of `profile`'s timed launches (and the proven rewrites of `optimizes`); raises
    NothingToPlot when there are no ceilings or no launch to place."""
    import os

    name = os.path.basename(profile.file)
    ceilings = Ceilings.of(profile.ceilings)
    if ceilings is None:
        if profile.mode == "interpreter":
            raise NothingToPlot("no roofline: the kernels ran in Triton's interpreter (no GPU, no timings)")
        raise NothingToPlot("no roofline: the profile has no measured ceilings (copy bandwidth, matmul peak)")
    device = (profile.device or {}).get("name")
    data = RooflineData(title=f"{name} on {device}" if device else name, ceilings=ceilings)
    faster = speedups(optimizes)
    for kernel in profile.kernels:
        if kernel.error and not kernel.launches:
            data.left_out.append(f"{kernel.name}: failed")
        for i, launch in enumerate(kernel.launches):
            label = kernel.name if len(kernel.launches) == 1 else f"{kernel.name} ({i + 1})"
            nbytes, flops = launch_work(launch)
            why = _why_left_out(launch, profile.mode, nbytes)
            if why:
                data.left_out.append(f"{label}: {why}")
                continue
            point = RooflinePoint(label, kernel.name, float(launch.time_ms), nbytes, flops)
            data.points.append(point)
            speedup = faster.get(kernel.name)
            if speedup:
                data.points.append(RooflinePoint(label, kernel.name, point.time_ms / speedup, nbytes, flops,
                                                 rewrite=True, speedup=speedup))
    if not data.points:
        why = f" ({'; '.join(data.left_out)})" if data.left_out else ""
        raise NothingToPlot(f"no roofline: no launch was timed with a byte count{why}")
    return data
