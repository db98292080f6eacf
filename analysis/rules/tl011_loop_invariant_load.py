"""TL011 — `tl.load` inside a loop whose pointer does not depend on the loop

## What it finds
A `tl.load` in a `for`/`while` loop whose pointer (and mask) depends neither on the loop variable
nor on any variable assigned inside the loop (`ptrs += BLOCK_K * stride` counts as assigned), so
every iteration loads exactly the same elements. Loads that are meant to be repeated are left
alone: `volatile=True` loads (polled flags) and loads of a buffer the same loop stores to or
updates atomically. So are loads under an `if` that the loop decides (`if i == 0:` loading an
initial state, `else:` of `if j < n:`): they run in one iteration, not in every one.

## Why
Each iteration issues the same memory transactions again. At best they hit L1/L2 and cost issue
slots and latency on the loop's critical path; for a tile that does not fit in L1 they go back to
L2 or DRAM — on H100 a memory-bound kernel is capped by the 2.97 TB/s we measured for a device
copy (shared/gpu/h100.md), and a repeated load spends that budget on bytes already in registers.
Triton does not hoist loads out of loops for you: a load may alias a store elsewhere.

## Example
```python
for row in range(0, M):
    w = tl.load(w_ptr + cols, mask=cols < N)      # TL011: same w every row
    x = tl.load(x_ptr + row * stride + cols, mask=cols < N)
    tl.store(out_ptr + row * stride + cols, x * w, mask=cols < N)
```

## Fix
Load once before the loop and keep the tile in registers:
```python
w = tl.load(w_ptr + cols, mask=cols < N)
for row in range(0, M):
    ...
```
No automatic fix: moving a statement across a loop needs the surrounding code to agree.
"""

from __future__ import annotations

from .. import message_text as mt
from ..estimates import base_pointer
from ..findings import Related, Severity
from ..model import ATOMICS
from ._tree import enclosing_conditions
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL011",
    name="loop-invariant-load",
    severity=Severity.WARNING,
    summary="tl.load inside a loop whose pointer does not depend on the loop",
)


def check(ctx: KernelContext):
    k = ctx.kernel
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
        if _guarded_per_iteration(ctx, call, loop, variant):
            continue  # `if i == 0: load(h0)`: it runs in one iteration, not in every one
        # The loop writes where it reads (a flag, a lock, a running buffer): re-reading is the point.
        base = base_pointer(k, ptr)
        if base is None or _written_in_loop(ctx, k, loop, base):
            continue
        text = mt.clip(ctx.src.text_of(ptr), 40)
        what = f"the loop at line {loop.range.start.line + 1}"
        yield ctx.finding(
            ctx.src.range(call.node),
            mt.shortest_needed(
                f"tl.load of {mt.name(text, 40)} reads the same data in every iteration of {what}; load it before the loop",
                f"tl.load of {mt.name(text, 32)} does not change in {what}; load it before the loop"),
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


def _guarded_per_iteration(ctx, call, loop, variant: set[str]) -> bool:
    """Whether an `if` (or conditional expression) inside the loop decides, from what the loop
    changes, whether `call` runs in an iteration."""
    for cond in enclosing_conditions(call.node):
        if not (loop.node.start_byte <= cond.start_byte < loop.node.end_byte):
            continue
        deps = ctx.depends_on(cond)
        if deps & variant or any(d.startswith("<loop:") for d in deps):
            return True
    return False


def _volatile(ctx, call) -> bool:
    v = call.kwargs.get("volatile")
    return v is not None and ctx.src.text_of(v) != "False"


def _written_in_loop(ctx, k, loop, base: str) -> bool:
    for c in k.calls:
        writes = (c.name == "store" or c.name in ATOMICS) and loop in c.loops
        if writes and base_pointer(k, c.arg(0, "pointer")) in (base, None):
            return True
    return False
