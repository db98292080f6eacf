"""TL012: atomics inside a loop, or an atomic that every program aims at the same address."""

from __future__ import annotations

from ..findings import Related, Severity
from ..model import ATOMICS
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL012",
    name="contended-atomic",
    severity=Severity.WARNING,
    summary="atomics inside a loop, or every program hitting the same address",
)

# Spin-lock acquire/release: an atomic_cas/xchg polled in a while loop is the point of the loop.
_LOCK_OPS = {"atomic_cas", "atomic_xchg"}


def check(ctx: KernelContext):
    k = ctx.kernel
    for call in k.calls:
        if call.name not in ATOMICS:
            continue
        ptr = call.arg(0, "pointer")
        if ptr is None:
            continue
        loops = [l for l in call.loops if l.kind != "tl.static_range"]
        if loops and not (call.name in _LOCK_OPS and any(l.kind == "while" for l in loops)):
            loop = loops[-1]
            yield ctx.finding(
                ctx.src.range(call.node),
                f"tl.{call.name} inside the loop at line {loop.range.start.line + 1}: one atomic per iteration per "
                "program; accumulate in registers across the loop and issue one atomic after it",
                related=[Related(loop.range, "the loop")],
                data={"reason": "loop", "loop_line": loop.range.start.line + 1},
            )
            continue
        feeds = ctx.definition_calls(ptr, "program_id", "arange", "load")
        if feeds:
            continue
        names = ctx.depends_on(ptr)
        if any(n.startswith("<loop:") for n in names):
            continue
        mask = call.kwargs.get("mask")
        if mask is not None and ctx.definition_calls(mask, "program_id"):
            continue  # only some programs take part (e.g. mask=pid == 0)
        yield ctx.finding(
            ctx.src.range(call.node),
            f"tl.{call.name} on `{ctx.src.text_of(ptr)}` from every program: the address does not depend on "
            "program_id or tl.arange, so all programs serialize on one word in L2; write per-program partials "
            "and reduce them in a second pass (or spread the target over several slots)",
            data={"reason": "same-address"},
        )
