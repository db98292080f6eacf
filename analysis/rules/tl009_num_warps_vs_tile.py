"""TL009: num_warps that does not fit the tile: fewer than one element per thread (idle threads)
or so many that they cannot stay in registers."""

from __future__ import annotations

from ..estimates import largest_tile
from ..findings import Related, Severity
from ..values import fmt
from ._literals import literal_edit
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL009",
    name="num-warps-vs-tile",
    severity=Severity.WARNING,
    summary="num_warps inconsistent with the tile (fewer than 1 or more than 64 elements per thread)",
    fix_title="pick num_warps for the tile",
)

MAX_PER_THREAD = 64
# A tl.dot accumulator lives in MMA registers: 128x256 fp32 over 8 warps (128 per thread) is the
# fastest fp16 matmul config measured on H100 (691 TFLOP/s), so dot kernels get a higher bound.
MAX_PER_THREAD_DOT = 128
MAX_WARPS = 32  # 1,024 threads per block


def check(ctx: KernelContext):
    has_dot = bool(ctx.kernel.calls_named("dot"))
    limit = MAX_PER_THREAD_DOT if has_dot else MAX_PER_THREAD
    for config in ctx.kernel.configs:
        nw_val = config.values.get("num_warps")
        nw = nw_val.value if nw_val is not None else None
        if not isinstance(nw, int) or isinstance(nw, bool) or nw <= 0:
            continue
        tile = largest_tile(ctx.kernel, ctx.module, config)
        if tile is None:
            continue
        threads = nw * 32
        per_thread = tile.elements / threads
        if per_thread < 1 and tile.complete:
            problem = (f"{_fmt(per_thread)} elements per thread: {threads - tile.elements} of the {threads} threads "
                       "have no element and sit idle")
        elif per_thread > limit:
            problem = (f"{_fmt(per_thread)} elements per thread (more than {limit}): the tile cannot stay in "
                       "registers and spills to local memory")
        else:
            continue
        suggested = _suggest(tile.elements, limit)
        what = _tile_text(ctx, tile, config)
        msg = (f"largest tile {what} over num_warps={nw} ({nw_val.origin or config.label}, {threads} threads) "
               f"gives {problem}")
        if suggested is not None and suggested != nw:
            msg += f"; num_warps={suggested} gives {_fmt(tile.elements / (suggested * 32))} per thread"
        related = [Related(nw_val.range, f"num_warps={nw} from {nw_val.origin or config.label}")] if nw_val.range else \
            ctx.related_for(config, None, "configuration")
        edit = literal_edit(ctx.src, nw_val.range, suggested) if suggested is not None and suggested != nw else None
        yield ctx.finding(ctx.src.range(tile.call.node), msg, fix=[edit] if edit else None, related=related,
                          data={"elements": tile.elements, "num_warps": nw, "per_thread": per_thread,
                                "suggested_num_warps": suggested, "config": config.label})


def _suggest(elements: int, limit: int) -> int | None:
    """num_warps giving about 8 elements per thread, within [1, limit] per thread; None if none does."""
    nw = 1
    while nw * 2 * 32 * 8 <= elements and nw * 2 <= 16:
        nw *= 2
    while elements / (nw * 32) > limit and nw * 2 <= MAX_WARPS:
        nw *= 2
    per = elements / (nw * 32)
    return nw if 1 <= per <= limit else None


def _tile_text(ctx, tile, config) -> str:
    node = tile.call.node
    origin, _ = ctx.origin_of(node, config)
    text = ctx.src.text_of(node)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"`{text}` = {tile.elements} elements" + (f" ({origin})" if origin else "")


def _fmt(x: float) -> str:
    return fmt(int(x)) if float(x).is_integer() else f"{x:.2g}"
