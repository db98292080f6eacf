"""TL017 — block shapes that cannot broadcast

There is no automatic fix: which axis was intended is a design decision.

## What it finds
An operation whose block operands cannot be broadcast to one shape, in at least one resolved
configuration (a launch site, an autotune config, or both): the two sides of an elementwise
operator or comparison, the arguments of `tl.where` / `tl.maximum` / math functions, the `mask`
or `other` of a `tl.load` against its pointer block, and the value or mask of a `tl.store`
against its pointer block. Shapes come from tritonlens' shape inference (`tl.arange`, `[:, None]`
indexing, reductions, `tl.reshape`, `tl.trans`, `tl.dot`, loops, `@triton.jit` helpers…) with
each configuration's constexpr values; the message names the shapes, the dimension that
conflicts and the configuration, e.g. `in the launch at line 30 with autotune config #2
(BLOCK_M=32, BLOCK_N=128)`. Dimensions that are not known (a constexpr computed at run time, the
parameters of a @jit device helper, which are whatever its callers pass) never conflict: the rule
stays silent rather than guess. A kernel's call of a helper passes known blocks: a conflict in
the helper with those is reported there, for that kernel, naming the call.

## Why
Triton broadcasts like NumPy: shapes are aligned on the right, and each pair of dimensions must be
equal or one of them 1 (`semantic.broadcast_impl_value`). Anything else is a compile error —
`ValueError: Cannot make_shape_compatible: incompatible dimensions at index 1: 128 and 32` —
raised only when the kernel is compiled for that configuration. With autotuning, that is the
first time the autotuner benchmarks the one config whose `BLOCK_M != BLOCK_N`, often long after
the code was written; a row mask that happens to work while the block is square is the classic
case. The test suite compiles every positive fixture of this rule with the installed Triton
(`triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))`) and checks that the named
configuration is refused and the others compile.

## Example
```python
@triton.autotune(configs=[triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}),
                          triton.Config({"BLOCK_M": 32, "BLOCK_N": 128})], key=["M", "N"])
@triton.jit
def bias_add_kernel(x_ptr, bias_ptr, y_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    ...
    bias = tl.load(bias_ptr + offs_m, mask=offs_m < N, other=0.0)   # [BLOCK_M]
    y = x + bias[None, :]   # TL017: [32, 128] + [1, 32] with autotune config #2
```

## Fix
Index the operand with the offsets of the axis it runs along (`bias_ptr + offs_n`), add the
missing axis explicitly (`v[:, None]` for a per-row value, `v[None, :]` for a per-column one),
and build masks from the same offsets as the pointer block
(`(offs_m[:, None] < M) & (offs_n[None, :] < N)`).
"""

from __future__ import annotations

from ..findings import Severity
from ._shape_findings import shape_findings
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL017",
    name="shapes-do-not-broadcast",
    severity=Severity.ERROR,
    summary="block shapes that cannot broadcast: elementwise operands, a mask or a stored value against its pointer block",
)


def check(ctx: KernelContext):
    yield from shape_findings(ctx, {"broadcast", "mask", "other", "store_value"})
