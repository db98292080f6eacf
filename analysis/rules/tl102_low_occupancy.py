"""TL102 — low theoretical occupancy

Off by default (`--select TL102`): judged 1 of 30 findings true on real code (a seeded random draw
of corpus files, docs/judgements/compile/TL102.md); most were one candidate of an autotune sweep
whose other candidates fill the SM better (the tuner decides), or a configuration the wrapper never
launches (an assumed size far above any call, 2 warps paired with a width that gets 4).

## What it finds
A configuration whose programs (thread blocks) leave at most 25% of the SM's warp slots filled,
computed from the compiled kernel's registers per thread, shared memory per program and
`num_warps` against the target's limits (sm_90: 64 warps, 32 blocks, 65,536 registers and 228 KB
of shared memory per SM, registers allocated per warp in units of 256), naming the resource that
runs out first: registers, shared memory or warps.

## Why
A GPU hides memory latency by switching between resident warps. With 8 warps of 255-register
threads (65,280 registers) a single program fills the register file of an H100 SM: 8 of 64 warps,
12.5% occupancy, nothing to switch to while those 8 wait for memory. Large-tile matmuls live
with this on purpose (each warp has many independent MMAs in flight); a memory-bound kernel
does not.

## Example
```python
@triton.autotune(configs=[triton.Config({"BLOCK": 8192}, num_warps=4)], key=["n"])
@triton.jit
def big_rows(x_ptr, n, BLOCK: tl.constexpr):   # TL102: registers limit it to 12.5%
    ...
```

## Fix
Follow the limiter: registers → smaller blocks per thread or more warps; shared memory → fewer
`num_stages` or smaller tiles; warps → fewer `num_warps` per program so more programs fit.
Check the result with the profiler: occupancy is a means, not the goal.
"""

# The compiler's output decides this rule (profiling/compile_findings.py reports it); this module
# holds its metadata and documentation only, so listings, SARIF and the server's rule links know
# it without importing the compile machinery.

from __future__ import annotations

from ..findings import Severity
from .base import RuleInfo

RULE = RuleInfo(
    id="TL102",
    name="low-occupancy",
    severity=Severity.INFO,
    summary="theoretical occupancy at or below 25%, naming the limiter",
    kind="compile",
    default=False,
    off_because="judged 1 of 30 findings true on real code",
)
