"""TL105 — Triton compile error

Off by default (`--select TL105`): judged 8 of 30 findings true on real code (a seeded random draw
of corpus files, docs/judgements/compile/TL105.md); most were errors of the compile's own guesses (a
dtype or string constexpr given a number, packed integer weights taken for fp32, a helper compiled
alone, a size of 0); the real ones were APIs the current Triton removed and a square tile that
outgrows Triton's element limit.

## What it finds
A configuration of the kernel that Triton refuses to compile, reported at the source line and
column the compiler names, with the first line of its message (the whole error is in the hover's
compiled-for section and in `tritonlens compile`). Triton's own "at L:C" counts lines from the
kernel's `def` (line 1) in its dedented source; tritonlens maps it to the file's line and column.
Errors from later stages (MLIR passes, ptxas) carry no position and sit on the `def` line.

## Why
Triton compiles a kernel at its first launch, on the GPU. Without this rule a non-power-of-two
`tl.arange`, a shape mismatch in `tl.dot` or a constexpr used as a tensor shows up only there; here
it shows on save, on a machine with no GPU.

## Example
```python
@triton.jit
def bad_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, 48)   # TL105: arange's range must be a power of 2
```

## Fix
Whatever the message says; the static rules (TL001 for `tl.arange`) often offer a quick fix for the
common cases.
"""

# The compiler's output decides this rule (profiling/compile_findings.py reports it); this module
# holds its metadata and documentation only, so listings, SARIF and the server's rule links know
# it without importing the compile machinery.

from __future__ import annotations

from ..findings import Severity
from .base import RuleInfo

RULE = RuleInfo(
    id="TL105",
    name="compile-error",
    severity=Severity.ERROR,
    summary="a Triton compile error, at the line and column the compiler names",
    kind="compile",
    default=False,
    off_because="judged 8 of 30 findings true on real code",
)
