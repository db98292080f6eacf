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
matmul's `offs_k[None, :] * stride_ak`), and when both axes carry runtime strides and no launch
tells which is large. The message names the axis, the stride and the launch argument.

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
Either way the kernel pays for a tile laid out against memory.

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

from ..findings import Related, Severity
from . import _offsets as off
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL007",
    name="strided-fast-axis",
    severity=Severity.INFO,
    summary="fastest-varying arange axis multiplied by a runtime stride: likely uncoalesced",
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


def _reason(ctx, strides, rows):
    """Why the stride is large: the launch passes it as `t.stride(0)`, or the other axis of the
    tile is the contiguous one (no runtime stride at all). None when we cannot tell."""
    for s in strides:
        passed = off.launch_args(ctx, s)
        outer = [(launch, node) for launch, node in passed if off.stride_dim(ctx, node) == 0]
        if outer:
            launch, node = outer[0]
            return (f"`{s}`, which the launch at line {launch.line} passes as `{ctx.src.text_of(node)}` "
                    f"(the outer dimension's stride): neighbouring lanes of a warp are a whole row apart. Triton "
                    f"re-orders the threads only when it can prove the other axis contiguous (its stride specialised "
                    f"to 1 at launch), and then pays a layout conversion and loses vectorized access; otherwise each "
                    f"warp's access splits into up to 32 memory transactions",
                    Related(ctx.src.range(node), f"{s} passed here"))
        if passed and all(off.stride_dim(ctx, node) in (-1, 1) for _, node in passed):
            return None  # the innermost stride: 1 for a contiguous tensor
    if all(not _runtime_factors(ctx, r) for r in rows):
        return (f"the runtime `{strides[0]}` while the other axis of the tile has unit stride: Triton's coalescing "
                f"pass must order this access's threads along the other axis and convert the tile's layout to match "
                f"the rest of the kernel", None)
    return None


def _finding(ctx, call, col, strides, reason):
    src = ctx.src
    text, related = reason
    what = "tl.load" if call.name == "load" else ("tl.store" if call.name == "store" else f"tl.{call.name}")
    leaf = src.text_of(col.leaf) if col.leaf is not None else src.text_of(col.node)
    msg = (f"{what}: the tile's fastest-varying axis `{leaf}` is multiplied by {text}; likely uncoalesced: make the "
           f"contiguous dimension the last tile axis (swap the axes and tl.trans the tile)")
    return ctx.finding(src.range(col.node), msg, related=[related] if related else [],
                       data={"strides": strides})
