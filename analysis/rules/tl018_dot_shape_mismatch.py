"""TL018 — tl.dot operands of the wrong shape

## What it finds
A `tl.dot` whose operands, in at least one resolved configuration, are not two 2-D blocks
`[M, K] × [K, N]` or two batched 3-D blocks `[B, M, K] × [B, K, N]`: the inner dimensions differ
(`[64, 32]` by `[64, 64]`), the ranks differ (a 3-D block by a 2-D one), an operand is a vector
(a dot product written as `tl.dot(x, y)`), the batch dimensions differ, or the accumulator passed
as `acc` does not have the product's shape. The message names the shapes and the configuration.
Only shapes the shape engine knows are compared: an unknown dimension, or an operand whose shape
it does not know (a @jit helper's parameter, a value it does not model), is never reported. The
parameters of a device helper (a @jit function the file does not launch, which returns a value or
is called by another @jit function) are whatever its callers pass, so they are unknown there; a
kernel's call of the helper passes known blocks, and a conflict with those is reported in the
helper, for that kernel, naming the call.

## Why
`tl.dot` lowers to tensor-core MMA instructions over tiles; Triton checks the operand shapes when
it builds the IR (`semantic.dot`: "Both inputs must be either 2D or 3D", "First input shape … and
second input shape … are not compatible for matmul") and refuses to compile otherwise. The error
only appears when the offending configuration is compiled — for autotuned kernels, when the
autotuner first benchmarks it. The tests compile each positive fixture with the installed Triton
(sm_90 target) and check that the named configuration is refused.

## Example
```python
offs_k = tl.arange(0, BLOCK_K)
a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]        # [BLOCK_M, BLOCK_K]
b_ptrs = b_ptr + offs_n[:, None] * stride_bk + offs_n[None, :]        # [BLOCK_N, BLOCK_N]: should be offs_k rows
acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))  # TL018: [64, 32] by [64, 64] (BLOCK_K=32)
```

## Fix
Build B's tile from `offs_k[:, None]` rows and `offs_n[None, :]` columns (or load `[N, K]` and
`tl.trans` it); for a vector dot product use `tl.sum(x * y)`; for batched products make both
operands 3-D with the same batch block.
"""

from __future__ import annotations

from ..findings import Severity
from ._shape_findings import shape_findings
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL018",
    name="dot-shape-mismatch",
    severity=Severity.ERROR,
    summary="tl.dot operands whose inner dimensions differ, or that are not 2-D/3-D blocks of one rank",
)


def check(ctx: KernelContext):
    yield from shape_findings(ctx, {"dot_inner", "dot_rank", "dot_batch", "dot_acc"})
