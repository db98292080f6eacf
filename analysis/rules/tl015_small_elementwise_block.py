"""TL015 — 1-D element-wise kernel with fewer than 256 elements per program

## What it finds
A 1-D element-wise kernel — `tl.load`/`tl.store` over one `tl.arange` axis, no `tl.dot`, no
reduction, no atomics, no loop — whose `tl.arange` extent (the elements each program handles) is
below 256 in some configuration: a literal, a launch value, a wrapper variable, an autotune
config. Unknown extents are not reported.

## Why
An element-wise kernel is memory-bound and its programs are short; below a few hundred elements
per program the launch is dominated by per-program overhead (scheduling, index math, tail
latency). Measured on H100 (fp32 vector add, 2^26 elements, num_warps=4, shared/gpu/h100.md):
BLOCK=64 reaches 1.27 TB/s (43% of the 2.97 TB/s copy bandwidth), 128 reaches 2.49 TB/s (84%),
256 reaches 3.02 TB/s (100%) and 1024 2.99 TB/s.

## Example
```python
BLOCK_SIZE = 64                                   # TL015 at the kernel's tl.arange
add_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE)
```

## Fix
Use 1024 elements per program (or autotune over 256–4096). The quick fix rewrites the literal
that gave the block to 1024 when the kernel masks every load and store (the last program then
overhangs safely) and when the grid follows the block: a wrapper variable used by the grid, an
autotune config, or a launch literal with a `meta[...]` grid. An unmasked kernel gets no fix: add
the mask first.
"""

from __future__ import annotations

from ..findings import Applicability, Related, Severity
from ..model import ATOMICS, REDUCTIONS
from ..shapes import infer_kernel
from ._literals import is_wrapper_assignment, literal_edit
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL015",
    name="small-elementwise-block",
    severity=Severity.WARNING,
    summary="1-D element-wise kernel with BLOCK < 256 elements per program",
    fix_title="raise the block to 1024 elements",
    fix_applicability=Applicability.UNSAFE,
    fix_safety=('It changes the block each program handles and, through the grid, the number of programs; '
                'results stay the same only under the masks and grid the rule checked, and the speed-up is '
                'a heuristic.'),
)

MIN_BLOCK = 256
SUGGESTED = 1024
# fp32 vector add, 2^26 elements, num_warps=4, H100 (shared/gpu/h100.md); copy ceiling 2.97 TB/s.
MEASURED_TBPS = {64: 1.27, 128: 2.49, 256: 3.02, 1024: 2.99}
COPY_TBPS = 2.97
_NOT_ELEMENTWISE = {"dot", ".sum", ".max", ".min"} | REDUCTIONS | ATOMICS


def check(ctx: KernelContext):
    k = ctx.kernel
    if any(c.name in _NOT_ELEMENTWISE for c in k.calls):
        return
    aranges = k.calls_named("arange")
    mem = k.calls_named("load", "store")
    if not aranges or not mem or any(c.loops for c in aranges) or any(c.loops for c in mem):
        return
    shapes = infer_kernel(ctx.module, k)
    for c in mem:
        s = shapes.shape_of(c.arg(0, "pointer"))
        if s is None or len(s) > 1:
            return  # 2-D tiles or shapes we cannot read: not a 1-D element-wise kernel
    if any(len(s) != 1 for s in (shapes.shape_of(a.node) for a in aranges) if s is not None):
        return
    masked = all("mask" in c.kwargs for c in mem)
    for arange in aranges:
        end = arange.arg(1, "end")
        if end is None:
            continue
        for config in k.configs:
            shp = shapes.tile_shape(arange.node, config)
            if not shp or shp[0] >= MIN_BLOCK or shp[0] <= 0:
                continue
            block = shp[0]
            origin, origin_range = ctx.origin_of(end, config)
            where = f" ({origin})" if origin else (f" in {config.label}" if config.launch else "")
            measured = MEASURED_TBPS.get(block)
            why = (f"on H100 an fp32 vector add with BLOCK={block} reaches {measured} TB/s, "
                   f"{round(100 * measured / COPY_TBPS)}% of the {COPY_TBPS} TB/s copy bandwidth"
                   if measured else
                   f"on H100 an fp32 vector add with BLOCK=64 reaches 43% of the {COPY_TBPS} TB/s copy bandwidth")
            msg = (f"{block} elements per program{where} in a 1-D element-wise kernel: {why}, while "
                   f"BLOCK=256 reaches 100% (3.02 TB/s); use {SUGGESTED}"
                   + ("" if masked else " (and mask the loads and stores so the last block can overhang)"))
            edit = None
            if masked and origin_range is not None and _safe_to_edit(ctx, config, origin, origin_range):
                edit = literal_edit(ctx.src, origin_range, SUGGESTED)
            related = [Related(origin_range, origin)] if origin_range is not None and origin else \
                ctx.related_for(config, None, "configuration")
            yield ctx.finding(ctx.src.range(arange.node), msg, fix=[edit] if edit else None, related=related,
                              data={"block": block, "suggested": SUGGESTED, "config": config.label})


def _safe_to_edit(ctx, config, origin: str, rng) -> bool:
    """The grid must follow the new block: it does when the block is a wrapper variable (the grid
    reads the same name), an autotune value or a launch literal with a `meta[...]` grid."""
    if is_wrapper_assignment(ctx.src, rng):
        return True
    if origin.startswith("autotune config"):
        return True
    launch = config.launch
    if launch is None or launch.grid is None:
        return False
    grid_text = ctx.src.text_of(launch.grid)
    if launch.grid.type == "identifier" and launch.wrapper is not None:
        body = ctx.src.text_of(launch.wrapper)
        return f"{grid_text} = lambda" in body
    return launch.grid.type == "lambda"
