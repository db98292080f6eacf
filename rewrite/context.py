"""What every proposer receives: the file, the analysis, the profile and its hot lines, the device."""

from __future__ import annotations

from dataclasses import dataclass, field

from tritonlens.profiling.worker.reports import ProfileReport


@dataclass
class ProposalContext:
    path: str
    text: str
    kernel: str | None = None  # restrict to this kernel (None: all kernels of the file)
    analysis: object | None = None  # tritonlens.analysis.engine.AnalysisResult
    profile: ProfileReport | None = None  # when one was taken
    device: dict = field(default_factory=dict)  # {"name", "mode": "gpu" | "interpreter", ...}
    elem_bytes: int | None = None  # the harness's floating-point element size (the original's check)
    history: list = field(default_factory=list)  # verdicts of earlier candidates (what was tried)
    hot_lines: dict = field(default_factory=dict)  # {kernel: hot_lines.SampledLines}, numbered as in `text`
    hints: dict = field(default_factory=dict)  # {kernel: [hot_line_hints.Hint]}, the hottest line's first

    def findings(self) -> list:
        if self.analysis is None:
            return []
        out = list(getattr(self.analysis, "findings", []))
        if self.kernel:
            out = [f for f in out if f.kernel in (None, self.kernel)]
        return out

    def codes_for(self, kernel: str) -> set[str]:
        return {f.code for f in self.findings() if f.kernel in (None, kernel)}

    @property
    def gpu(self) -> bool:
        return self.device.get("mode") == "gpu"
