"""TL011: a tl.load inside a loop whose pointer does not change from one iteration to the next."""

from __future__ import annotations

from ..estimates import base_pointer, shapes_of
from ..findings import Related, Severity
from ..model import ATOMICS
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL011",
    name="loop-invariant-load",
    severity=Severity.WARNING,
    summary="tl.load inside a loop whose pointer does not depend on the loop",
)


def check(ctx: KernelContext):
    k = ctx.kernel
    shapes = None
    variants: dict[int, set[str]] = {}
    for call in k.calls_named("load"):
        if not call.loops:
            continue
        loop = call.loops[-1]
        ptr = call.arg(0, "pointer")
        if ptr is None or _volatile(ctx, call):
            continue
        variant = variants.get(id(loop))
        if variant is None:
            variant = variants[id(loop)] = _assigned_in(k, loop)
        if set(ctx.names_in(ptr)) & variant:
            continue  # the common case, settled without the transitive closure
        deps = ctx.depends_on(ptr)
        mask = call.kwargs.get("mask")
        if mask is not None:
            deps |= ctx.depends_on(mask)
        if any(d.startswith("<loop:") for d in deps) or deps & variant:
            continue
        # The loop writes where it reads (a flag, a lock, a running buffer): re-reading is the point.
        shapes = shapes or shapes_of(k)
        base = base_pointer(k, shapes, ptr)
        if base is None or _written_in_loop(ctx, k, shapes, loop, base):
            continue
        text = ctx.src.text_of(ptr)
        if len(text) > 40:
            text = text[:37] + "..."
        what = f"the loop at line {loop.range.start.line + 1}"
        yield ctx.finding(
            ctx.src.range(call.node),
            f"tl.load of `{text}` does not depend on {what}: every iteration reloads the same data; load it once "
            "before the loop",
            related=[Related(loop.range, f"{what} (variables changed there: {', '.join(sorted(variant)) or 'none'})")],
            data={"loop_line": loop.range.start.line + 1, "pointer": text},
        )


def _assigned_in(k, loop) -> set[str]:
    out = set()
    if loop.var:
        out.add(loop.var)
    for name, assigns in k.assignments.items():
        if any(loop in a.loops for a in assigns):
            out.add(name)
    return out


def _volatile(ctx, call) -> bool:
    v = call.kwargs.get("volatile")
    return v is not None and ctx.src.text_of(v) != "False"


def _written_in_loop(ctx, k, shapes, loop, base: str) -> bool:
    for c in k.calls:
        writes = (c.name == "store" or c.name in ATOMICS) and loop in c.loops
        if writes and base_pointer(k, shapes, c.arg(0, "pointer")) in (base, None):
            return True
    return False
