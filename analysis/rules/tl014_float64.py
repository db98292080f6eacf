"""TL014 — float64 arithmetic in a kernel

## What it finds
Every `tl.float64` in a kernel: `.to(tl.float64)` casts, `tl.zeros(..., dtype=tl.float64)`,
`tl.full(..., dtype=tl.float64)` and any other dtype argument. (Host-side `torch.float64` or
`np.float64` in the wrapper is not kernel arithmetic and is not reported.)

## Why
GPUs built for deep learning have little fp64 throughput: H100 SXM does 34 TFLOP/s of fp64
against 67 TFLOP/s fp32 and 989 TFLOP/s fp16 on tensor cores (NVIDIA H100 datasheet); consumer
and workstation GPUs run fp64 at 1/64 of the fp32 rate. fp64 values also take twice the registers
and, when stored, twice the bytes of fp32 — on a memory-bound kernel that halves the elements per
second at the 2.97 TB/s we measured on H100 (shared/gpu/h100.md). fp32 accumulation (as for every
Triton tutorial reduction) is the usual precision for deep-learning kernels.

## Example
```python
x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float64)   # TL014
```

## Fix
The quick fix replaces `tl.float64` with `tl.float32` (the cast, the `tl.zeros`/`tl.full` dtype).
If the result truly needs more than fp32, consider compensated (Kahan) summation in fp32 before
fp64.
"""

from __future__ import annotations

from ..findings import Applicability, Severity, TextEdit
from ..source import dotted_name, walk
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL014",
    name="float64-arithmetic",
    severity=Severity.WARNING,
    summary="float64 arithmetic in a kernel",
    fix_title="compute in float32",
    fix_applicability=Applicability.UNSAFE,
    fix_safety=('It lowers the precision of the arithmetic on purpose; results change.'),
)

_FP64 = {"float64", "fp64"}


def check(ctx: KernelContext):
    k, src, al = ctx.kernel, ctx.src, ctx.module.aliases
    body = k.node.child_by_field_name("body")
    if body is None or not any(t in src.text_of(body) for t in _FP64):
        return  # cheap pre-filter: most kernels never name float64
    for n in walk(body, stop_at=("function_definition", "class_definition")):
        if n.type == "attribute":
            parent = n.parent
            if parent is not None and parent.type == "attribute" and parent.child_by_field_name("object") == n:
                continue  # the outer attribute is the full name
            name = al.tl_function(dotted_name(n, src))
            if name not in _FP64:
                continue
            attr = n.child_by_field_name("attribute")
            fix = [TextEdit(src.range(attr), "float32")]
        elif n.type == "identifier" and al.tl_names.get(src.text_of(n)) in _FP64:
            parent = n.parent
            if parent is not None and parent.type == "attribute":
                continue
            fix = None  # `from triton.language import float64`: the import decides what float32 is called
        else:
            continue
        yield ctx.finding(
            src.range(n),
            f"`{src.text_of(n)}` in a kernel: fp64 runs at 34 TFLOP/s on H100 against 67 TFLOP/s fp32 and "
            "989 TFLOP/s fp16 tensor cores (1/64 of fp32 on consumer GPUs), and moves twice the bytes of fp32; "
            "compute in float32",
            fix=fix,
            data={"dtype": "float64"},
        )
