"""TL101–TL106: rules the compiler's output decides (profiling/compile_findings.py reports them).

Only their metadata lives here, so that `tritonlens rules`, `tritonlens rule TL101`, SARIF and the
server's rule links know them without importing the compile machinery.
"""

from __future__ import annotations

from ..findings import Severity
from .base import RuleInfo

COMPILE_RULES: dict[str, RuleInfo] = {r.id: r for r in (
    RuleInfo("TL101", "register-spills", Severity.WARNING,
             "register spills in the compiled kernel, with the lines that cause them"),
    RuleInfo("TL102", "low-occupancy", Severity.INFO,
             "theoretical occupancy at or below 25%, naming the limiter"),
    RuleInfo("TL103", "dot-without-tensor-core-path", Severity.WARNING,
             "a tl.dot that does not use the target's tensor-core path (wgmma on sm_90)"),
    RuleInfo("TL104", "shared-memory-over-limit", Severity.ERROR,
             "shared memory over the target's per-block limit: the launch fails with OutOfResources"),
    RuleInfo("TL105", "compile-error", Severity.ERROR,
             "a Triton compile error, at the line and column the compiler names"),
    RuleInfo("TL106", "loads-not-vectorized", Severity.WARNING,
             "global loads not vectorised where the block is contiguous"),
)}
