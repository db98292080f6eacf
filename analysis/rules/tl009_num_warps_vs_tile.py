"""TL009 — `num_warps` inconsistent with the tile

## What it finds
For every configuration the file lets us see (launch sites, autotune `triton.Config`s, Triton's
default `num_warps=4`), the kernel's largest tile (the product of the `tl.arange` extents of the
biggest `tl.arange` / `tl.zeros` / `tl.load` / `tl.store` / `tl.dot` tile) divided by
`num_warps × 32` threads:
- **fewer than 1 element per thread**: threads with no element sit idle (e.g. `BLOCK=256` with
  `num_warps=16`: 512 threads, 256 of them idle);
- **more than 64 elements per thread** (128 for the accumulator of a `tl.dot`/`tl.dot_scaled`
  kernel): the tile cannot stay in registers and spills to local memory.
Unknown tiles or num_warps (e.g. `BLOCK = triton.next_power_of_2(n)`) are not reported, nor are
`@jit` device helpers (they run on their caller's threads, with the tiles their caller passes)
and scalar kernels whose largest value is a single element (every thread runs the same scalar
code; there is no tile to spread). A launch whose block and num_warps come from the wrapper's
branches resolves to every combination of their values, some of which the wrapper never makes
(`block, warps = 32, 1` or `2048, 8`): it is reported only when every combination has the
problem. Each autotune config is judged on its own.

## Why
A Triton program runs on `num_warps × 32` threads and spreads its tile over them. Measured on
H100 (shared/gpu/h100.md, fp32 vector add, 2^26 elements): `BLOCK=256` reaches 3.02 TB/s with
4 warps (2 elements per thread) but 1.81 TB/s with 16 warps (0.5 per thread) — 40% lost to idle
threads and scheduling; `BLOCK=128` with 16 warps falls to 1.03 TB/s. At the other end a thread
holds at most 255 32-bit registers, so a tile of more than 64 fp32 elements per thread (plus the
addresses and masks that go with it) spills. A `tl.dot` accumulator is laid out in MMA
registers, and 128×256 over 8 warps (128 per thread) is the fastest fp16 matmul configuration we
measured on H100 (691 TFLOP/s, 97% of cuBLAS), hence the higher bound for dot kernels.

## Example
```python
def scale(x, alpha):
    BLOCK = 256
    scale_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, alpha, BLOCK=BLOCK, num_warps=16)
    # TL009: 256 elements over 512 threads = 0.5 element per thread
```

## Fix
Choose `num_warps` so each thread gets a few elements: the quick fix rewrites the num_warps
literal (at the launch or in the `triton.Config`) to the power of two giving about 8 elements
per thread (here `num_warps=1`), within [1, 64] per thread. Better still, autotune num_warps
together with the block size.
"""

from __future__ import annotations

import re

from .. import message_text as mt
from ..estimates import largest_tile
from ..findings import Applicability, Related, Severity
from ..values import fmt
from ._literals import literal_edit
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL009",
    name="num-warps-vs-tile",
    severity=Severity.WARNING,
    summary="num_warps inconsistent with the tile (fewer than 1 or more than 64 elements per thread)",
    fix_makes_faster=True,
    fix_title="pick num_warps for the tile",
    fix_applicability=Applicability.UNSAFE,
    fix_safety=('`num_warps` is a performance choice: the new value changes the layout, the registers per '
                'thread and the order of reductions (so the last bits of floating-point sums), and is a '
                'heuristic, not a measurement.'),
)

MAX_PER_THREAD = 64
# A tl.dot accumulator lives in MMA registers: 128x256 fp32 over 8 warps (128 per thread) is the
# fastest fp16 matmul config measured on H100 (691 TFLOP/s), so dot kernels get a higher bound.
MAX_PER_THREAD_DOT = 128
MAX_WARPS = 32  # 1,024 threads per block
_AUTOTUNE = re.compile(r"autotune config #\d+")


def check(ctx: KernelContext):
    if ctx.device_helper:
        return  # a device helper runs on its caller's threads, with its caller's tiles
    has_dot = bool(ctx.kernel.calls_named("dot", "dot_scaled"))
    limit = MAX_PER_THREAD_DOT if has_dot else MAX_PER_THREAD
    groups: dict = {}
    for config in ctx.kernel.configs:
        judged = _judge(ctx, config, limit)
        if judged is not None:
            groups.setdefault(_launch_choice(config), []).append(judged)
    for judged in groups.values():
        # One launch whose values come from the wrapper's branches (`BLOCK, nw = (32, 1) if
        # small else (256, 8)`) resolves to every combination of them, some it never makes:
        # report it only when each combination has the problem.
        if not all(problem for _, _, _, problem in judged):
            continue
        for config, nw_val, tile, problem in judged:
            yield _finding(ctx, config, nw_val, tile, problem, limit)


def _launch_choice(config) -> tuple:
    """Configurations that differ only by values a launch's wrapper picks share a key; each
    autotune config is its own choice."""
    m = _AUTOTUNE.search(config.label)
    return id(config.launch), m.group(0) if m else None


def _judge(ctx: KernelContext, config, limit: int):
    """(config, num_warps value, tile, problem or "") for a configuration with a known num_warps
    and a tile of more than one element; None otherwise."""
    nw_val = config.values.get("num_warps")
    nw = nw_val.value if nw_val is not None else None
    if not isinstance(nw, int) or isinstance(nw, bool) or nw <= 0:
        return None
    tile = largest_tile(ctx.kernel, ctx.module, config)
    if tile is None or tile.elements <= 1:
        return None  # scalar code: every thread runs it, there is no tile to spread
    threads = nw * 32
    per_thread = tile.elements / threads
    problem = ""
    if per_thread < 1 and tile.complete:
        problem = f"{threads - tile.elements} threads idle"
    elif per_thread > limit:
        problem = f"{_fmt(per_thread)} per thread, more than the {limit} registers hold"
    elif per_thread < 1:
        return None  # a larger tile may exist: neither a problem nor proof of a fit
    return config, nw_val, tile, problem


def _finding(ctx: KernelContext, config, nw_val, tile, problem: str, limit: int):
    nw = nw_val.value
    threads = nw * 32
    suggested = _suggest(tile.elements, limit)
    values = _values(ctx, tile, config)
    advice = short_advice = ""
    if suggested is not None and suggested != nw:
        advice = f"; num_warps={suggested} gives {_fmt(tile.elements / (suggested * 32))} per thread"
        short_advice = f"; use num_warps={suggested}"
    msg = mt.shortest_needed(
        f"tile of {tile.elements} elements{values} over num_warps={nw} ({threads} threads): {problem}{advice}",
        f"tile of {tile.elements} elements{values} over num_warps={nw}: {problem}{advice}",
        f"tile of {tile.elements} elements over num_warps={nw}: {problem}{advice}",
        f"tile of {tile.elements} elements over num_warps={nw}: {problem}{short_advice}")
    related = [Related(nw_val.range, f"num_warps={nw} from {nw_val.origin or config.label}")] if nw_val.range else \
        ctx.related_for(config, None, "configuration")
    edit = literal_edit(ctx.src, nw_val.range, suggested) if suggested is not None and suggested != nw else None
    return ctx.finding(ctx.src.range(tile.call.node), msg, fix=[edit] if edit else None,
                       fix_title=f"set num_warps={suggested} (was {nw})" if edit else None, related=related,
                       data={"elements": tile.elements, "num_warps": nw, "per_thread": tile.elements / threads,
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


def _values(ctx, tile, config) -> str:
    """` (BLOCK_M=64, BLOCK_N=256)`: the constexprs that size the tile in this configuration."""
    node = tile.call.node
    names = ctx.names_in(node if tile.call.name in ("arange", "zeros", "full", "dot") else tile.call.arg(0, "pointer"))
    known = [f"{n}={fmt(config.values[n].value)}" for n in names if n in config.values]
    return f" ({', '.join(known[:3])})" if known else ""


def _fmt(x: float) -> str:
    return fmt(int(x)) if float(x).is_integer() else f"{x:.2g}"
