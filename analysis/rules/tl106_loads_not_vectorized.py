"""TL106 — global loads not vectorised

Its evidence is a second, what-if compile of the same configuration, next to the cross-compile.

Off by default (`--select TL106`): judged 0 of 17 findings true on real code (a seeded random draw
of corpus files, docs/judgements/compile/TL106.md); the narrow loads came from sizes compiled as if
they were not multiples of 16 where every real call's are (a packed width, a whole number of
quantisation groups), from ragged lengths whose typical calls are already wide, or from rows of a
handful of elements.

## What it finds
A source line whose global loads compile to scalar accesses (4 B or less per instruction,
`ld.global.b32`, `ld.global.b16`) although the block is contiguous: tritonlens recompiles the
same configuration with the integer arguments rounded up to a multiple of 16 and the pointers
16-byte aligned, and reports the line only if that variant loads wider (e.g. 16 B `ld.global.v4`).
The message names the arguments that lacked the divisibility-by-16 specialisation.

It judges the performance shape only: a harness's first case (`tritonlens_cases()` yields the
workload first; later cases check correctness, ragged sizes such as 1000 among them, whose scalar
loads are expected), else the captured launches with the largest grid, else every configuration
(static and assumed values).

## Why
The JIT marks an integer argument `tt.divisibility=16` only when its value is a multiple of 16, and
a pointer only when it is 16-byte aligned. Without that, the compiler cannot prove that four
neighbouring elements sit in one aligned 16-byte chunk (or that a mask covers all four), and issues
one load per element: four to eight times the instructions for the same bytes, and lower achieved
bandwidth. A row length of 1000 or a stride of 4100 is enough.

## Example
```python
n = x.numel()                       # 1000: not a multiple of 16
scale_kernel[grid](x, y, n, BLOCK=1024)
# in the kernel: mask = offs < n  → TL106: 4 B loads; with n divisible by 16 they would be 16 B
```

## Fix
Pad the sizes and strides you control to a multiple of 16 (allocate rows of 1008 and mask the
tail), pass pointers of tensors that start on a 16-byte boundary (avoid odd `storage_offset`s),
or give the compiler the fact directly with `tl.multiple_of(n, 16)` / `tl.max_contiguous` when it
holds.
"""

# The compiler's output decides this rule (profiling/compile_findings.py reports it); this module
# holds its metadata and documentation only, so listings, SARIF and the server's rule links know
# it without importing the compile machinery.

from __future__ import annotations

from ..findings import Severity
from .base import RuleInfo

RULE = RuleInfo(
    id="TL106",
    name="loads-not-vectorized",
    severity=Severity.WARNING,
    summary="global loads not vectorised where the block is contiguous",
    kind="compile",
    default=False,
    off_because="judged 0 of 17 findings true on real code",
)
