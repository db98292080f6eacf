"""TL014: float64 arithmetic in a kernel."""

from __future__ import annotations

from ..findings import Severity, TextEdit
from ..source import dotted_name, walk
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL014",
    name="float64-arithmetic",
    severity=Severity.WARNING,
    summary="float64 arithmetic in a kernel",
    fix_title="compute in float32",
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
