"""TL014 — float64 arithmetic in a kernel

## What it finds
A `tl.float64` in a launchable kernel that makes fp64 values nobody asked for: `.to(tl.float64)`
casts, `tl.zeros(..., dtype=tl.float64)`, `tl.full(..., dtype=tl.float64)` and any other dtype
argument. Left alone, because the fp64 there is requested or costs nothing:
- dtype dispatch: fp64 in a branch chosen by a dtype (`if x.dtype == tl.float64:`,
  `if IS_FP64:`, `elif OUT_TYPE == 3:`, `tl.float64 if ... else tl.float32`), or a kernel the
  host launches only for fp64 tensors (`elif x.dtype == torch.float64: kernel_fp64[grid](...)`):
  the caller's data is double and the result must be;
- `tl.float64` in a comparison (`x.dtype == tl.float64`): no arithmetic;
- fp64 on a reduced value: a scalar, a one-element block, or a block of lower rank than the
  kernel's tiles (`tl.max(tl.abs(x), axis=1).to(tl.float64)` for a scale): a few operations per
  program, usually to match a float64 reference bit for bit;
- `@jit` device helpers: they run on whatever their caller passes, often fp64 on purpose.
(Host-side `torch.float64` or `np.float64` in the wrapper is not kernel arithmetic either.)

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

import math
import re

from .. import message_text as mt
from ..estimates.tiles import tile_node
from ..findings import Applicability, Severity, TextEdit
from ..source import dotted_name, walk
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL014",
    name="float64-arithmetic",
    severity=Severity.WARNING,
    summary="float64 arithmetic in a kernel",
    fix_makes_faster=True,
    fix_title="compute in float32",
    fix_applicability=Applicability.UNSAFE,
    fix_safety=('It lowers the precision of the arithmetic on purpose; results change.'),
)

_FP64 = {"float64", "fp64"}


# A condition that picks a branch by dtype: `x.dtype == tl.float64`, `IS_FP64`, `OUT_TYPE == 3`.
_DTYPE_CONDITION = re.compile(r"(?i)type|element_ty|float64|fp64|f64|double")
# A host condition that launches a kernel only for fp64 data.
_FP64_CONDITION = re.compile(r"(?i)float64|fp64|f64|double")
_BRANCHES = ("if_statement", "elif_clause", "else_clause", "conditional_expression")


def check(ctx: KernelContext):
    k, src, al = ctx.kernel, ctx.src, ctx.module.aliases
    body = k.node.child_by_field_name("body")
    if body is None or not any(t in src.text_of(body) for t in _FP64):
        return  # cheap pre-filter: most kernels never name float64
    if ctx.device_helper or _launched_for_fp64(ctx):
        return
    max_rank = None
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
        if _compared(n) or _dtype_dispatch(n, body, src):
            continue
        made = _made_value(n)
        if made is not None:
            if max_rank is None:
                max_rank = _max_tile_rank(ctx)
            if _reduced(ctx, made, max_rank):
                continue
        yield ctx.finding(
            src.range(n),
            f"{mt.name(src.text_of(n), 30)} in a kernel: fp64 runs at 1/2 of fp32 on H100 (1/64 on consumer GPUs) "
            "and moves twice the bytes",
            fix=fix,
            fix_title=f"change {src.text_of(n)} to {_float32_name(src.text_of(n))}" if fix else None,
            data={"dtype": "float64"},
        )


def _float32_name(text: str) -> str:
    return text.rsplit(".", 1)[0] + ".float32" if "." in text else "float32"


def _compared(n) -> bool:
    """`x.dtype == tl.float64`: the name is an operand of a comparison, not a dtype of arithmetic."""
    p = n.parent
    return p is not None and p.type == "comparison_operator"


def _dtype_dispatch(n, body, src) -> bool:
    """Whether `n` sits in a branch (statement or conditional expression) that a dtype picks."""
    child, p = n, n.parent
    while p is not None and p != body:
        if p.type in _BRANCHES:
            conditions = _conditions(p, child)
            if any(_DTYPE_CONDITION.search(src.text_of(c)) for c in conditions):
                return True
        child, p = p, p.parent
    return False


def _conditions(branch, child) -> list:
    """The conditions that decide whether `child` (inside `branch`) runs, `child` itself excluded."""
    if branch.type == "conditional_expression":
        parts = branch.named_children
        return [parts[1]] if len(parts) == 3 and child != parts[1] else []
    if branch.type == "if_statement":
        cond = branch.child_by_field_name("condition")
        if child == cond:
            return []
        return [cond] + [c.child_by_field_name("condition") for c in branch.named_children if c.type == "elif_clause"]
    if branch.type == "elif_clause":
        cond = branch.child_by_field_name("condition")
        return [cond] if child != cond else []
    return []  # else_clause: its if_statement ancestor names the conditions


def _launched_for_fp64(ctx: KernelContext) -> bool:
    """Whether every launch of the kernel in this file sits in a branch the host takes for fp64
    data (`elif weights.dtype == torch.float64: kernel_fp64[grid](...)`)."""
    launches = ctx.kernel.launches
    return bool(launches) and all(_under_fp64_branch(l.node, ctx.src) for l in launches)


def _under_fp64_branch(node, src) -> bool:
    child, p = node, node.parent
    while p is not None and p.type != "function_definition":
        if p.type in ("if_statement", "elif_clause"):
            cond = p.child_by_field_name("condition")
            if cond is not None and child != cond and _FP64_CONDITION.search(src.text_of(cond)):
                return True
        child, p = p, p.parent
    return False


def _made_value(n):
    """The expression that makes fp64 values with `n`: `x.to(tl.float64)`, `tl.cast(x, tl.float64)`,
    `tl.zeros(shape, dtype=tl.float64)`; None for a dtype held in a name (`acc_dtype = tl.float64`)."""
    p = n.parent
    if p is not None and p.type == "keyword_argument":
        p = p.parent
    if p is None or p.type != "argument_list" or p.parent is None or p.parent.type != "call":
        return None
    return p.parent


def _reduced(ctx: KernelContext, value, max_rank: int) -> bool:
    """Whether `value` is a scalar, a one-element block or of lower rank than the kernel's tiles."""
    shape = ctx.shapes.shape_of(value, None)
    if shape is None:
        return False
    if all(isinstance(d, int) for d in shape) and math.prod(shape) <= 1:
        return True
    return len(shape) < max_rank


def _max_tile_rank(ctx: KernelContext) -> int:
    ranks = [len(shape) for c in ctx.kernel.calls
             if (node := tile_node(c)) is not None and (shape := ctx.shapes.shape_of(node, None)) is not None]
    return max(ranks, default=0)
