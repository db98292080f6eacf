"""What proposers produce and what the verifier concludes about it."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

# What an accepted rewrite is without timings: correct, and nothing more is claimed.
NOT_TIMED = "correct, not timed: run on a GPU to prove it faster"


@dataclass
class Candidate:
    proposer: str  # "config" | "rules" | "llm" | ...
    title: str  # short, for the quick fix: "autotune 4 configs", "grouped L2 ordering (TL010)"
    source: str  # the complete rewritten file
    description: str = ""
    kernel: str | None = None
    meta: dict = field(default_factory=dict)  # proposer-specific (configs tried, LLM round, ...)


@dataclass
class Verdict:
    candidate: Candidate
    accepted: bool
    reason: str  # why refused, or what was shown ("correct on 3 seeds × 4 shapes; 2.00x faster (...)")
    mode: str = "interpreter"  # "gpu" | "interpreter" | "static" (refused before running)
    speedup: float | None = None
    max_rel_error: float | None = None
    checks: int = 0
    seeds: int = 0
    shapes: int = 0
    orig_ms: float | None = None
    cand_ms: float | None = None
    device: str | None = None
    evidence: dict = field(default_factory=dict)

    @property
    def speed_measured(self) -> bool:
        return self.speedup is not None

    def quick_fix_title(self) -> str:
        c = self.candidate
        if not self.accepted:
            return f"tritonlens: {c.title} — refused: {self.reason}"
        scope = f"{self.seeds} seeds × {self.shapes} shapes"
        if self.speedup is not None:
            return f"tritonlens: {c.title} — {self.speedup:.1f}x faster on {short_device(self.device)}, verified on {scope}"
        return f"tritonlens: {c.title} — {NOT_TIMED}"

    def to_json(self, original: str | None = None, with_source: bool = False) -> dict:
        out = {"proposer": self.candidate.proposer, "title": self.candidate.title,
               "description": self.candidate.description, "kernel": self.candidate.kernel,
               "accepted": self.accepted, "reason": self.reason, "mode": self.mode,
               "speedup": self.speedup, "max_rel_error": self.max_rel_error, "checks": self.checks,
               "seeds": self.seeds, "shapes": self.shapes, "orig_ms": self.orig_ms, "cand_ms": self.cand_ms,
               "quick_fix_title": self.quick_fix_title(), "evidence": self.evidence}
        if original is not None:
            out["diff"] = unified_diff(original, self.candidate.source)
        if with_source:
            out["source"] = self.candidate.source
        return out


def short_device(name: str | None) -> str:
    if not name:
        return "GPU"
    for token in ("H100", "H200", "A100", "B200", "L40S", "L4", "A10G", "RTX 4090", "V100", "T4"):
        if token in name:
            return token
    return name.replace("NVIDIA ", "")


def unified_diff(before: str, after: str, path: str = "kernel.py") -> str:
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 fromfile=f"a/{path}", tofile=f"b/{path}", n=3)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
