"""TL101 — register spills

Warning is the default, and the most it reaches: spills slow a kernel, Triton still runs it. A
spill stack under 256 B per thread is info. A finding from a configuration whose values were
assumed says so first ("assuming BLOCK_SIZE=4096, num_warps=4: …") and offers the pin comment
that makes them the user's.

Off by default (`--select TL101`): judged 3 of 30 findings true on real code (a seeded random draw
of corpus files, docs/judgements/compile/TL101.md); most spills came from values assumed for a
library kernel that its wrapper never passes (a tile the tuned list never holds, a slot count or
expert count far above any call), or from one candidate of an autotune sweep, which the tuner keeps
only if it is fastest; a few were a handful of bytes.

## What it finds
A kernel configuration whose compiled code keeps part of its live values in local memory
because the registers ran out. tritonlens cross-compiles the launch exactly as the JIT would on
the GPU (same specialisation of pointers and integers), reads the allocation with `cuobjdump
-res-usage` on the cubin and counts the `LDL`/`STL` instructions per source line in the SASS
(`nvdisasm -gi`). The diagnostic sits on the line with the most spill traffic; the other spilling
lines are listed as related locations.

## Why
A thread has at most 255 registers. Beyond that, ptxas moves values to local memory: every
`STL`/`LDL` is a round trip through the L1/L2 hierarchy, tens to hundreds of cycles instead of
one. A tutorial-style fp16 matmul with 256×256×64 tiles, 8 warps and 4 stages compiles for sm_90
to 255 registers plus a spill stack of several hundred bytes per thread, while the same kernel at
128×128×64 uses 112 registers and spills nothing.

## Example
```python
matmul_kernel[grid](a, b, c, M, N, K, ...,
                    BLOCK_M=256, BLOCK_N=256, BLOCK_K=64,   # TL101: 255 registers + spills
                    num_warps=8, num_stages=4)
```

## Fix
Lower the register demand per thread: smaller tiles (`BLOCK_M`/`BLOCK_N` of 128), more warps for
the same tile (`num_warps=8` → 16 spreads the accumulator over more threads), fewer pipeline
stages, or keep fewer tensors live across the loop (recompute cheap values instead of holding them).
"""

# The compiler's output decides this rule (profiling/compile_findings.py reports it); this module
# holds its metadata and documentation only, so listings, SARIF and the server's rule links know
# it without importing the compile machinery.

from __future__ import annotations

from ..findings import Severity
from .base import RuleInfo

RULE = RuleInfo(
    id="TL101",
    name="register-spills",
    severity=Severity.WARNING,
    summary="register spills in the compiled kernel, with the lines that cause them",
    kind="compile",
    default=False,
    off_because="judged 3 of 30 findings true on real code",
)
