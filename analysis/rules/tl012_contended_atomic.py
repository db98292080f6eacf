"""TL012 — contended atomics

## What it finds
- a `tl.atomic_*` inside a `for`/`while` loop whose address is the same on every iteration (it
  depends on nothing the loop assigns): the iterations' updates can be summed in registers and
  sent as one atomic after the loop. An atomic whose address moves with the loop (a row per
  iteration, a histogram bin from loaded data) cannot be hoisted and is not reported; neither is
  one whose old value the code reads (`ticket = tl.atomic_add(counter, 1)`), a spin lock
  (`while tl.atomic_cas(lock, 0, 1) == 1: pass`) or a `tl.static_range` (unrolled at compile
  time);
- a floating-point `tl.atomic_add` whose address depends on neither `tl.program_id`,
  `tl.arange` nor loaded data (`tl.atomic_add(out_ptr, partial)`): every program of the grid adds
  into the same word, and the sum changes with the order the atomics land in. An atomic whose
  mask selects programs (`mask=pid == 0`), an integer count (exact in any order) and an
  order-independent `atomic_max`/`min`/`and`/`or`/`xor` (the usual one-pass amax) are left alone.

## Why
Atomics on global memory are executed at the L2 slice that owns the address, one after the other
for the same address. Inside a loop every iteration pays that round trip where one would do. From
every program of a grid onto one word, a grid of 16,384 programs (2^24 fp32 elements,
BLOCK_SIZE=1024) performs 16,384 serialized read-modify-writes there, and a floating-point sum
comes out different from run to run because addition is not associative; a two-pass reduction
turns them into 16,384 plain stores spread over DRAM, which run at the copy bandwidth (2.97 TB/s
measured on H100, shared/gpu/h100.md), and gives the same bits every run.

## Example
```python
x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
tl.atomic_add(out_ptr, tl.sum(x, axis=0))       # TL012: every program, one address
```

## Fix
In a loop, accumulate in registers and issue one atomic after it. From every program, store one
partial per program (`tl.store(partial_ptr + pid, tl.sum(x, axis=0))`) and reduce the partials in
a second small kernel (or with torch), or spread the target over several slots
(`out_ptr + pid % 64`) and sum those. No automatic fix.
"""

from __future__ import annotations

from .. import message_text as mt
from ..findings import Related, Severity
from ..model import ATOMICS
from ..shapes.dtypes import is_float, is_int
from ..source import captures
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL012",
    name="contended-atomic",
    severity=Severity.WARNING,
    summary="an atomic a loop repeats on one address, or a float atomic_add every program sends to one address",
)

# Spin-lock acquire/release: an atomic_cas/xchg polled in a while loop is the point of the loop.
_LOCK_OPS = {"atomic_cas", "atomic_xchg"}


def check(ctx: KernelContext):
    k = ctx.kernel
    for call in k.calls:
        if call.name not in ATOMICS:
            continue
        ptr = call.arg(0, "pointer")
        if ptr is None or _old_value_read(call):
            continue  # a ticket, a flag or a lock: the returned old value is what the atomic is for
        loops = [l for l in call.loops if l.kind != "tl.static_range"]
        if loops:
            if call.name in _LOCK_OPS and any(l.kind == "while" for l in loops):
                continue
            loop = loops[-1]
            if _moves_with(ctx, ptr, loop):
                continue  # a new address every iteration: nothing to hoist
            yield ctx.finding(
                ctx.src.range(call.node),
                f"tl.{call.name} hits one address in every iteration of the loop at line {loop.range.start.line + 1}; "
                "sum in registers, issue it once after",
                related=[Related(loop.range, "the loop")],
                data={"reason": "loop", "loop_line": loop.range.start.line + 1},
            )
            continue
        if call.name != "atomic_add" or not _float_sum(ctx, ptr, call.arg(1, "val")):
            continue  # max/min/and/or/xor and integer counts come out the same in any order
        if ctx.definition_calls(ptr, "program_id", "arange", "load"):
            continue
        if any(n.startswith("<loop:") for n in ctx.depends_on(ptr)):
            continue
        mask = call.kwargs.get("mask")
        if mask is not None and ctx.definition_calls(mask, "program_id"):
            continue  # only some programs take part (e.g. mask=pid == 0)
        yield ctx.finding(
            ctx.src.range(call.node),
            mt.shortest_needed(*(f"every program adds into {mt.name(ctx.src.text_of(ptr), w)}: serialized in L2 and the "
                                 "float sum varies run to run; reduce partials" for w in (24, 16))),
            data={"reason": "same-address"},
        )


def _old_value_read(call) -> bool:
    """Whether the atomic's result (the old value) is used, not just the update."""
    parent = call.node.parent
    return parent is not None and parent.type != "expression_statement"


def _moves_with(ctx: KernelContext, ptr, loop) -> bool:
    """Whether the address `ptr` can change from one iteration of `loop` to the next: it reads a
    name the loop assigns (its variable, a pointer advanced in the body, a value loaded there)."""
    for name in ctx.depends_on(ptr):
        for a in ctx.kernel.assignments.get(name.removeprefix("<loop:").rstrip(">"), []):
            if any(l is loop for l in a.loops):
                return True
    return False


def _float_sum(ctx: KernelContext, ptr, val) -> bool:
    """Whether the atomic adds floating-point values: the value's or the target's element type
    says so or, where the code leaves both types open (a load through an untyped pointer), a
    float literal feeds the value (`other=0.0`, `acc = 0.0`). An integer count is exact in any
    order and is not reported."""
    types = []
    for node in (val, ptr):
        a = ctx.shapes.value_at(node, None) if node is not None else None
        if a is not None and a.dtype is not None:
            types.append(a.dtype.lstrip("*"))
    if any(is_int(t) for t in types):
        return False
    if any(is_float(t) for t in types):
        return True
    return val is not None and _float_literal_feeds(ctx, val)


def _float_literal_feeds(ctx: KernelContext, node) -> bool:
    sources = [node]
    for name in ctx.depends_on(node):
        sources += [a.value for a in ctx.kernel.assignments.get(name, []) if a.value is not None]
    for s in sources:
        a = ctx.shapes.value_at(s, None)
        if a is not None and is_float(a.dtype):
            return True  # e.g. `x = tl.load(p).to(tl.float32)` ahead of an untyped scale
    return any(n.type == "float" for s in sources for n in (s, *captures(s, "(float) @f", "f")))
