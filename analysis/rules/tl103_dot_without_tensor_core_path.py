"""TL103 — `tl.dot` off the target's tensor-core path

Off by default (`--select TL103`): judged 0 of 30 findings true on real code (a seeded random draw
of corpus files, docs/judgements/compile/TL103.md); most dots were small by design (a chunked
algorithm's 16-row sub-blocks, a decode step's few query rows, a GEMV, a kernel for head dims over
256) or deliberately exact fp32, and the rest came from dtypes or sizes the wrapper never passes.

## What it finds
A `tl.dot` that the compiler lowered to something slower than the target's tensor-core path:
on sm_90 (H100/H200) `wgmma` (warpgroup MMA); on sm_80/sm_89 `mma.sync`; on sm_100 `tcgen05`.
tritonlens reads the lowering of each dot from the compiled TTGIR (`ttng.warp_group_dot`, a
`#nvidia_mma` v2 or v3 layout, or a blocked layout = FMA) and gives the reason when it can tell:
a tile with fewer than 64 rows or `num_warps` < 4 (wgmma needs a 4-warp warpgroup and 64-row
tiles), tiles under 16×16×16, fp32 operands with `input_precision="ieee"`, fp64.

## Why
On an H100 `wgmma` reaches about 990 dense fp16 TFLOP/s; the same dot through `mma.sync` gets a
fraction of that, and FMA about 67 TFLOP/s for fp32. A 32×32 tile or 2 warps silently drops an
sm_90 matmul from `wgmma` to `mma.sync`; fp32 inputs with `input_precision="ieee"` take it off the
tensor cores entirely.

## Example
```python
acc += tl.dot(a, b)          # with BLOCK_M=32 on sm_90: TL103, mma.sync instead of wgmma
acc += tl.dot(a32, b32, input_precision="ieee")   # TL103: FMA
```

## Fix
Use tiles of at least 64 rows with `num_warps` ≥ 4 for sm_90 (128×128 or 128×256 with 8 warps is
the usual start), fp16/bf16/fp8 operands or the default tf32 precision for fp32, and let an
autotune config list cover the shapes.
"""

# The compiler's output decides this rule (profiling/compile_findings.py reports it); this module
# holds its metadata and documentation only, so listings, SARIF and the server's rule links know
# it without importing the compile machinery.

from __future__ import annotations

from ..findings import Severity
from .base import RuleInfo

RULE = RuleInfo(
    id="TL103",
    name="dot-without-tensor-core-path",
    severity=Severity.WARNING,
    summary="a tl.dot that does not use the target's tensor-core path (wgmma on sm_90)",
    kind="compile",
    default=False,
    off_because="judged 0 of 30 findings true on real code",
)
