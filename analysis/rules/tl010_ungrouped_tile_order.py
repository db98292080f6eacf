"""TL010: a tiled tl.dot kernel that maps a 1-D program id onto tiles row-major, with no grouped
(L2-friendly) ordering."""

from __future__ import annotations

from ..findings import Severity
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL010",
    name="ungrouped-tile-order",
    severity=Severity.INFO,
    summary="tiled tl.dot kernel mapping a 1-D program_id to tiles with no grouped (L2) ordering",
)


def check(ctx: KernelContext):
    k = ctx.kernel
    if not k.calls_named("dot") or k.calls_named("swizzle2d"):
        return
    pids = k.calls_named("program_id")
    axes = {_axis(ctx, c) for c in pids}
    if axes != {0}:
        return  # a 2-D/3-D grid (or an axis we cannot read) orders tiles itself
    pid_vars = {v for c in pids if (v := _assigned(ctx, c)) is not None}
    if not pid_vars:
        return
    # Variables computed from the program id by `//` and by `%`: the row/column split.
    div, mod, grouped = [], [], False
    for name, assigns in k.assignments.items():
        for a in assigns:
            if a.value is None:
                continue
            ops = _operators(ctx, a.value)
            if "//" not in ops and "%" not in ops:
                continue
            deps = ctx.depends_on(a.value)
            if not deps & pid_vars:
                continue
            if any("group" in d.lower() for d in deps | {name}):
                grouped = True
            if "//" in ops:
                div.append(name)
            if "%" in ops:
                mod.append(name)
    if grouped or not div or not mod:
        return
    call = next(c for c in pids if _assigned(ctx, c) in pid_vars)
    yield ctx.finding(
        ctx.src.range(call.node),
        f"1-D program id split into tiles row-major ({', '.join(div[:1] + mod[:1])} by `//` and `%`) with no "
        "grouped ordering: consecutive programs sweep a whole row of output tiles and re-read the other "
        "operand from DRAM; group GROUP_SIZE_M rows of tiles (or use tl.swizzle2d) so they share it in L2",
        data={"row": div[0], "column": mod[0]},
    )


def _axis(ctx, call) -> int | None:
    node = call.arg(0, "axis")
    if node is None:
        return 0
    vals = ctx.values(node, None)
    return vals[0] if len(vals) == 1 and isinstance(vals[0], int) else None


def _assigned(ctx, call) -> str | None:
    parent = call.node.parent
    while parent is not None and parent.type in ("parenthesized_expression", "call", "attribute", "argument_list"):
        parent = parent.parent  # tl.program_id(0).to(tl.int64)
    if parent is not None and parent.type == "assignment":
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return ctx.src.text_of(left)
    return None


def _operators(ctx, node) -> set[str]:
    out = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "binary_operator":
            op = n.child_by_field_name("operator")
            if op is not None:
                out.add(ctx.src.text_of(op))
        stack.extend(n.named_children)
    return out
