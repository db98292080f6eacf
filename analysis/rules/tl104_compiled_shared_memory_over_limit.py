"""TL104 — shared memory over the per-block limit

Off by default (`--select TL104`): judged 0 of 12 findings true on real code (a seeded random draw
of corpus files, docs/judgements/compile/TL104.md); the shared memory came from operands assumed
fp32 where the model runs half precision, from tile pairings the wrapper never makes, or from the
largest candidates of an autotune list, which Triton's tuner skips instead of failing the launch.

## What it finds
A configuration whose compiled kernel needs more shared memory per program than the target
allows a block (sm_90: 232,448 B = 227 KB; sm_80: 166,912 B; sm_89: 101,376 B). The compile itself
succeeds; the launch does not: Triton raises `OutOfResources: out of resource: shared memory`
before the kernel runs.

## Why
Software pipelining keeps `num_stages` copies of each input tile in shared memory. A 256×256×64
fp16 matmul with 4 stages needs 4 × (256×64 + 64×256) × 2 B = 262,144 B, more than an H100 block
may have: the first launch on the GPU fails, typically inside an autotune sweep or in
production, not on the laptop where the code was written.

## Example
```python
matmul_kernel[grid](..., BLOCK_M=256, BLOCK_N=256, BLOCK_K=64,
                    num_warps=8, num_stages=4)   # TL104: 262,144 B > 232,448 B on sm_90
```

## Fix
Fewer stages (`num_stages=3` → 196,608 B fits), a smaller `BLOCK_K`, or smaller tiles. In an
autotune list, drop the configs that cannot launch on the target.
"""

# The compiler's output decides this rule (profiling/compile_findings.py reports it); this module
# holds its metadata and documentation only, so listings, SARIF and the server's rule links know
# it without importing the compile machinery.

from __future__ import annotations

from ..findings import Severity
from .base import RuleInfo

RULE = RuleInfo(
    id="TL104",
    name="shared-memory-over-limit",
    severity=Severity.ERROR,
    summary="shared memory over the target's per-block limit: the launch fails with OutOfResources",
    kind="compile",
    default=False,
    off_because="judged 0 of 12 findings true on real code",
)
