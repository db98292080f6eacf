"""TL007 — fastest-varying tile axis multiplied by a runtime stride

## What it finds
A 2-D load, store or atomic whose address multiplies the tile's last axis — the `[None, :]`
arange, the one Triton's default layout spreads a warp's lanes along — by a runtime stride that
is large:
- the launch passes that parameter as `t.stride(0)` (the outer dimension's stride), as in a
  transpose's store `out_ptr + offs_n[None, :] * stride_om + offs_m[:, None] * stride_on`; or
- the tile's other axis has no runtime stride at all (`x_ptr + r[:, None] + c[None, :] * ld`):
  the data is contiguous along the *first* axis.

Silent when the launch passes the stride as `t.stride(-1)`/`t.stride(1)` (the innermost one,
matmul's `offs_k[None, :] * stride_ak`), when both axes carry runtime strides (directly or through
a local such as `row_off = rows * stride_t`) and no launch tells which is large, and for a load
whose tile feeds a `tl.dot` (K read as K^T) or a store of a dot's result: Triton stages dot
operands and accumulators through shared memory anyway, so the global access gets a coalesced
order at no extra cost. The message names the axis, the stride and the launch argument.

## Why
A warp's global access is served in 32-byte sectors; when its 32 lanes read consecutive
addresses that is 4 sectors (one 128-byte line) for fp32, when they read addresses a row apart
it is 32 sectors — 8× the traffic for the same data (CUDA C++ Best Practices Guide, "Coalesced
Access to Global Memory"). Triton's coalescing pass orders each access's threads by the pointer's
*provable* contiguity. Compiling examples/transpose.py for sm_90 shows both outcomes: with
`stride_on` specialised to 1 (Triton does this for an int argument equal to 1), the store gets
`order = [0, 1]` plus a `ttg.convert_layout` from the load's layout — coalesced, but with a
layout conversion through shared memory and scalar `st.global.b32` stores; without that
specialisation the store keeps `order = [1, 0]` and each warp writes 32 addresses a row apart.
Either way the kernel pays for a tile laid out against memory. Where the other axis is provably
contiguous the rewrite mostly moves that conversion rather than removing it: compiling a
column-major store of a 64×64 fp32 tile for sm_90 both ways (`out + c[None, :] * rows + r[:, None]`
against `out + c[:, None] * rows + r[None, :]` with `tl.trans`, sizes divisible by 16) gives the
same PTX, 8 `st.global.v4` and 32 `st.shared`/`ld.shared` each; the finding is informational.

## Example
```python
tile = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn, mask=mask)
tl.store(out_ptr + offs_n[None, :] * stride_om + offs_m[:, None] * stride_on, tile, mask=mask)  # TL007
```

## Fix
Make the contiguous dimension of each tensor the last axis of the tile you access it with. For a
transpose, build the output tile in the output's own order and transpose in registers:
`tl.store(out_ptr + offs_n[:, None] * stride_om + offs_m[None, :] * stride_on, tl.trans(tile), mask=tl.trans(mask))`
— Triton then does the transpose once through shared memory and both global accesses are
coalesced and vectorized.
"""

from __future__ import annotations

from .. import message_text as mt
from ..findings import Related, Severity
from . import _offsets as off
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL007",
    name="strided-fast-axis",
    severity=Severity.INFO,
    summary="fastest-varying arange axis multiplied by a runtime stride: likely uncoalesced",
    default=False,  # on seven real projects its findings were layouts Triton already coalesces
    off_because="judged 0 of 6 findings true on real code",
)


def _runtime_factors(ctx, info):
    kinds = off.param_kinds(ctx)
    out = []
    for m in info.multipliers:
        for n in off.runtime_params_in(ctx, m):
            if n in kinds.runtime and n not in out:
                out.append(n)
    return out


def check(ctx: KernelContext):
    seen = set()
    for call in ctx.kernel.calls_named(*off.MEMORY_OPS, *off.ATOMIC_OPS):
        ptr = call.arg(0, "pointer")
        if ptr is None:
            continue
        if _staged_for_dot(ctx, call):
            continue  # a tl.dot operand goes through shared memory in whatever order it arrives
        infos = off.pointer_terms(ctx, ptr)
        rows = [i for i in infos if i.ndim == 2 and i.axis == 0]
        cols = [i for i in infos if i.ndim == 2 and i.axis == 1]
        if not rows or not cols:
            continue
        for col in cols:
            strides = _runtime_factors(ctx, col)
            if not strides:
                continue
            reason = _reason(ctx, strides, rows)
            if reason is None:
                continue
            key = col.node.id  # a pointer shared by a load and a store is one access pattern
            if key in seen:
                continue
            seen.add(key)
            yield _finding(ctx, call, col, strides, reason)


def _staged_for_dot(ctx, call) -> bool:
    """A load whose tile feeds a tl.dot (K loaded as K^T, say), or a store of a dot's result:
    Triton stages dot operands and accumulators through shared memory anyway, so the global
    access gets a coalesced order at no extra cost."""
    dots = ctx.kernel.calls_named("dot", "dot_scaled")
    if not dots:
        return False
    if call.name == "store":
        value = call.arg(1, "value")
        return value is not None and off.is_fed(ctx, value, "dot")
    name = _assigned_name(ctx, call.node)
    for dot in dots:
        for arg in dot.args[:2]:
            if arg.start_byte <= call.node.start_byte < arg.end_byte:
                return True
            if name is not None and name in off.depends(ctx, arg):
                return True
    return False


def _assigned_name(ctx, node):
    p = node.parent
    while p is not None and p.type in ("attribute", "call", "argument_list", "parenthesized_expression",
                                      "binary_operator", "unary_operator"):
        p = p.parent
    if p is not None and p.type in ("assignment", "augmented_assignment"):
        left = p.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return ctx.src.text_of(left)
    return None


def _reason(ctx, strides, rows):
    """Why the stride is large: the launch passes it as `t.stride(0)`, or the other axis of the
    tile is the contiguous one (no runtime stride at all). None when we cannot tell."""
    for s in strides:
        passed = off.launch_args(ctx, s)
        outer = [(launch, node) for launch, node in passed if off.stride_dim(ctx, node) == 0]
        if outer:
            launch, node = outer[0]
            return (f"{mt.clip(s, 20)}={mt.clip(ctx.src.text_of(node), 20)} (line {launch.line})",
                    Related(ctx.src.range(node), f"{s} passed here"))
        if passed and all(off.stride_dim(ctx, node) in (-1, 1) for _, node in passed):
            return None  # the innermost stride: 1 for a contiguous tensor
    if all(not off.runtime_params_in(ctx, r.node) for r in rows):  # through locals: `row_off[:, None]`
        return f"{mt.clip(strides[0], 20)} while the other axis is contiguous", None
    return None


def _finding(ctx, call, col, strides, reason):
    src = ctx.src
    text, related = reason
    what = "tl.load" if call.name == "load" else ("tl.store" if call.name == "store" else f"tl.{call.name}")
    leaf = src.text_of(col.leaf) if col.leaf is not None else src.text_of(col.node)
    msg = mt.shortest_needed(f"{what}'s fast axis {mt.name(leaf, 24)} steps by {text}; put the contiguous dim last",
                             f"{what}'s fast axis {mt.name(leaf, 20)} steps by {text}")
    return ctx.finding(src.range(col.node), msg, related=[related] if related else [],
                       data={"strides": strides})
