"""TL023 — fp32 `tl.dot` kept off the tensor cores by `input_precision="ieee"` / `allow_tf32=False`

## What it finds
A `tl.dot` whose two operands are fp32 as far as the analysis can tell (a `.to(tl.float32)`, a
`tl.zeros(..., dtype=tl.float32)`, the result of another dot, fp32 arithmetic on those) and whose
`input_precision` is `"ieee"` or whose (deprecated) `allow_tf32` is `False`, written in the call
or passed through a constexpr. Operands of unknown dtype (a plain `tl.load` of a pointer whose
dtype no launch shows) are not reported, nor are fp16/bf16/fp8 operands, for which Triton
ignores the option.

## Why
"ieee" makes Triton compute the fp32 product with FMA instructions instead of the tensor cores.
Measured on an H100 (bench/fp32_dot_and_interleave.py, Triton 3.6.0): two chained 64×64×64
dots per program, the shape chunked linear-attention kernels use, ran in 1.07 ms with "ieee",
0.27 ms with "tf32" (4.0× faster, max relative error 1.5e-3 instead of 3.9e-7) and 0.35 ms with
"tf32x3" (3.1× faster, error 4.6e-7: three tensor-core passes, fp32 accuracy); a 4096³ matmul
ran 2× faster with "tf32" than with "ieee", while "tf32x3" gained nothing there. The H100's fp32
FMA ceiling is 67 TFLOP/s against about 495 TFLOP/s dense tf32. Asking for ieee is often
deliberate (triangular solves, recurrences whose error compounds): the finding names the cost
and the accurate alternative, it does not say the precision is wrong, hence its info severity —
and it is off by default (`--select TL023`): on seven published projects (flag_gems, fla, sglang…)
all 42 dots it found were such deliberate choices or sat in Ascend/vendor backends.

## Example
```python
b_A = tl.dot(b_k.to(tl.float32), b_w.to(tl.float32), input_precision="ieee")   # TL023
```

## Fix
Try `input_precision="tf32x3"` where fp32 accuracy is needed (check the kernel's tolerance
tests), or the default tf32 where it is not; `allow_tf32=False` is deprecated in favour of
`input_precision`.
"""

from __future__ import annotations

from ..findings import Severity
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL023",
    name="fp32-dot-off-tensor-cores",
    severity=Severity.INFO,
    summary='fp32 tl.dot with input_precision="ieee" or allow_tf32=False: FMA instead of tensor cores',
    # Off by default: on seven real projects every dot it found asked for ieee on purpose (triangular
    # solves, exact chunked sums) or sat in a non-NVIDIA backend; it is for a kernel being tuned.
    default=False,
    off_because="judged 0 of 20 findings true on real code",
)


def _ieee_in(ctx, call, config) -> str | None:
    """How `call` asks for ieee in `config`: the keyword as written, or None."""
    prec = call.kwargs.get("input_precision")
    if prec is None and len(call.args) > 3:
        prec = call.args[3]
    if prec is not None:
        vals = ctx.values(prec, config)
        return "input_precision=\"ieee\"" if vals and all(v == "ieee" for v in vals) else None
    tf32 = call.kwargs.get("allow_tf32")
    if tf32 is not None:
        vals = ctx.values(tf32, config)
        return "allow_tf32=False" if vals and all(v is False for v in vals) else None
    return None


def _dtype(ctx, node, config) -> str | None:
    a = ctx.shapes.value_at(node, config) if node is not None else None
    return a.dtype if a is not None else None


def check(ctx: KernelContext):
    for call in ctx.kernel.calls_named("dot"):
        a, b = call.arg(0, "input"), call.arg(1, "other")
        configs = ctx.kernel.configs or [None]
        # Every configuration must ask for ieee: a precision chosen per platform
        # (`"ieee" if is_hip else "tf32x3"`) is resolved to one configuration per alternative.
        asks = [_ieee_in(ctx, call, c) for c in configs]
        if not asks or any(how is None for how in asks):
            continue
        if not any(_dtype(ctx, a, c) == "fp32" and _dtype(ctx, b, c) == "fp32" for c in configs):
            continue
        how = asks[0]
        kw = "input_precision" if how.startswith("input") else "allow_tf32"
        node = call.kwargs.get(kw)
        rng = ctx.src.range(node.parent if node is not None and node.parent is not None else call.node)
        yield ctx.finding(rng, f"fp32 tl.dot with {how} runs on FMA, 2-4x slower than tf32 on H100; "
                          "'tf32x3' keeps fp32 accuracy", data={"precision": how})
