"""TL009 — `num_warps` inconsistent with the tile

## What it finds
For every configuration the file lets us see (launch sites, autotune `triton.Config`s, Triton's
default `num_warps=4`), the kernel's largest tile (the product of the `tl.arange` extents of the
biggest `tl.arange` / `tl.zeros` / `tl.load` / `tl.store` / `tl.dot` tile) divided by
`num_warps × 32` threads:
- **fewer than 1 element per thread**: threads with no element sit idle (e.g. `BLOCK=256` with
  `num_warps=16`: 512 threads, 256 of them idle);
- **more than 64 elements per thread** (128 for the accumulator of a `tl.dot`/`tl.dot_scaled`
  kernel): the tile cannot stay in registers and spills to local memory. A tile loaded to be a
  `tl.dot` operand (directly, or through casts and element-wise unpacking) does not count here:
  Triton pipelines it through shared memory, where TL013 weighs it.
The finding names the configuration its numbers come from: the sizes of the tile, `num_warps`,
and which autotune config (`autotune config 3 of 15`) or, among several, which launch.
Unknown tiles or num_warps (e.g. `BLOCK = triton.next_power_of_2(n)`) are not reported, nor are
`@jit` device helpers (they run on their caller's threads, with the tiles their caller passes)
and scalar kernels whose largest value is a single element (every thread runs the same scalar
code; there is no tile to spread). A launch whose block and num_warps come from the wrapper's
branches resolves to every combination of their values, some of which the wrapper never makes
(`block, warps = 32, 1` or `2048, 8`): it is reported only when every combination has the
problem. Each autotune config is judged on its own. A file written for AMD GPUs (it imports
`aiter`, AMD's ROCm kernel library) runs 64-lane wavefronts: a warp there is 64 threads.

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
    # TL009: tile of 256 elements with BLOCK=256, num_warps=16 (512 threads): 256 threads idle
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
from ..shapes import infer_kernel
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
_AUTOTUNE = re.compile(r"autotune config #(\d+)")
# aiter is AMD's ROCm kernel library: a file that imports it runs on 64-lane wavefronts.
_AMD_ONLY = re.compile(r"^\s*(?:import aiter\b|from aiter[\s.])", re.MULTILINE)


def check(ctx: KernelContext):
    if ctx.device_helper:
        return  # a device helper runs on its caller's threads, with its caller's tiles
    has_dot = bool(ctx.kernel.calls_named("dot", "dot_scaled"))
    limit = MAX_PER_THREAD_DOT if has_dot else MAX_PER_THREAD
    operands = _dot_operand_loads(ctx) if has_dot else set()
    groups: dict = {}
    for config in ctx.kernel.configs:
        judged = _judge(ctx, config, limit, operands)
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


def _judge(ctx: KernelContext, config, limit: int, operands: set):
    """(config, num_warps value, tile, problem or "") for a configuration with a known num_warps
    and a tile of more than one element; None otherwise."""
    nw_val = config.values.get("num_warps")
    nw = nw_val.value if nw_val is not None else None
    if not isinstance(nw, int) or isinstance(nw, bool) or nw <= 0:
        return None
    tile = largest_tile(ctx.kernel, ctx.module, config)
    if tile is None or tile.elements <= 1:
        return None  # scalar code: every thread runs it, there is no tile to spread
    threads = nw * _lanes(ctx)
    if tile.elements < threads:
        # Threads that load a dot operand into shared memory have work: idle counts every tile.
        if not tile.complete:
            return None  # a larger tile may exist: neither a problem nor proof of a fit
        return config, nw_val, tile, f"{threads - tile.elements} threads idle"
    # A pipelined tl.dot operand is staged in shared memory, not held in registers: the register
    # bound applies to the other tiles (the accumulator, the epilogue, element-wise work).
    if operands:
        tile = largest_tile(ctx.kernel, ctx.module, config, skip=lambda c: _key(c.node) in operands)
        if tile is None:
            return None
    per_thread = tile.elements / threads
    problem = f"{_fmt(per_thread)} per thread, more than the {limit} registers hold" if per_thread > limit else ""
    return config, nw_val, tile, problem


def _finding(ctx: KernelContext, config, nw_val, tile, problem: str, limit: int):
    nw = nw_val.value
    lanes = _lanes(ctx)
    threads = nw * lanes
    suggested = _suggest(tile.elements, limit, lanes)
    values = _values(ctx, tile, config)
    which = _which(ctx, config)
    advice = short_advice = ""
    if suggested is not None and suggested != nw:
        advice = f"; num_warps={suggested} gives {_fmt(tile.elements / (suggested * lanes))} per thread"
        short_advice = f"; use num_warps={suggested}"
    # The configuration is named in every form: an autotuned kernel has many, and the numbers
    # are one's. The thread count, the advice's arithmetic and then the sizes give way first.
    over = not problem.endswith("idle")
    brief = f"{_fmt(tile.elements / threads)} per thread (max {limit})" if over else problem
    e = tile.elements
    msg = mt.shortest_needed(
        f"tile of {e} elements with {values}num_warps={nw}{which} ({threads} threads): {problem}{advice}",
        f"tile of {e} elements with {values}num_warps={nw}{which}: {problem}{short_advice}",
        f"tile of {e} with {values}num_warps={nw}{which}: {brief}{short_advice}",
        f"tile of {e} with {_values(ctx, tile, config, 1)}num_warps={nw}{which}: {brief}{short_advice}",
        f"tile of {e} with num_warps={nw}{which}: {brief}{short_advice}",
        f"tile of {e} with num_warps={nw}{which}: {brief}")
    related = [Related(nw_val.range, f"num_warps={nw} from {nw_val.origin or config.label}")] if nw_val.range else \
        ctx.related_for(config, None, "configuration")
    edit = literal_edit(ctx.src, nw_val.range, suggested) if suggested is not None and suggested != nw else None
    return ctx.finding(ctx.src.range(tile.call.node), msg, fix=[edit] if edit else None,
                       fix_title=f"set num_warps={suggested} (was {nw})" if edit else None, related=related,
                       data={"elements": tile.elements, "num_warps": nw, "per_thread": tile.elements / threads,
                             "suggested_num_warps": suggested, "config": config.label})


def _suggest(elements: int, limit: int, lanes: int = 32) -> int | None:
    """num_warps giving about 8 elements per thread, within [1, limit] per thread; None if none does."""
    nw = 1
    while nw * 2 * lanes * 8 <= elements and nw * 2 <= 16:
        nw *= 2
    while elements / (nw * lanes) > limit and nw * 2 <= MAX_WARPS:
        nw *= 2
    per = elements / (nw * lanes)
    return nw if 1 <= per <= limit else None


def _values(ctx, tile, config, most: int = 3) -> str:
    """`BLOCK_M=64, BLOCK_N=256, `: the constexprs that size the tile in this configuration, read
    from the tile's symbolic shape (a loaded pointer block names no block size itself), else from
    the call's own text."""
    node = tile.call.node if tile.call.name in ("arange", "zeros", "full", "dot") else tile.call.arg(0, "pointer")
    shape = infer_kernel(ctx.module, ctx.kernel).shape_of(node, None) if node is not None else None
    names = [w for d in shape or () if not isinstance(d, int) for w in re.findall(r"[A-Za-z_]\w*", str(d))]
    if not any(n in config.values for n in names) and node is not None:
        names = ctx.names_in(node)
    known = list(dict.fromkeys(f"{n}={fmt(config.values[n].value)}" for n in names if n in config.values))
    return "".join(f"{k}, " for k in known[:most])


def _which(ctx, config) -> str:
    """` (autotune config 3 of 15)` or ` (launch at line 40)`: which of the kernel's
    configurations gives the numbers, when it has more than one."""
    m = _AUTOTUNE.search(config.label)
    total = max((int(n.group(1)) for c in ctx.kernel.configs if (n := _AUTOTUNE.search(c.label))), default=0)
    if m and total > 1:
        return f" (autotune config {m.group(1)} of {total})"
    launches = {id(c.launch) for c in ctx.kernel.configs if c.launch is not None}
    return f" (launch at line {config.launch.line})" if not m and config.launch is not None and len(launches) > 1 else ""


def _lanes(ctx) -> int:
    """Threads a warp: 64 in a file written for AMD GPUs (it imports aiter), else 32."""
    memo = ctx.module.memo
    if "tl009_lanes" not in memo:
        memo["tl009_lanes"] = 64 if _AMD_ONLY.search(ctx.src.text) else 32
    return memo["tl009_lanes"]


def _key(node) -> tuple:
    return node.start_byte, node.end_byte


def _dot_operand_loads(ctx) -> set:
    """The loads whose tiles become a `tl.dot` operand, directly or through element-wise work
    and casts (`b = (packed >> s) & 3; tl.dot(a, b.to(tl.int8))`): followed back through the
    kernel's assignments from the dot's first two arguments, stopping at a load (its pointer is
    not the operand) and at another dot (its result is an accumulator)."""
    k = ctx.kernel
    loads = {_key(c.node) for c in k.calls_named("load")}
    dots = {_key(c.node) for c in k.calls_named("dot", "dot_scaled")}
    found: set = set()
    seen: set = set()
    todo = [a for c in k.calls_named("dot", "dot_scaled") for a in _operands(c) if a is not None]
    while todo:
        node = todo.pop()
        key = _key(node)
        if key in seen:
            continue
        seen.add(key)
        if key in loads:
            found.add(key)
        elif node.type == "identifier":
            todo += [a.value for a in k.assignments.get(ctx.src.text_of(node), ()) if a.value is not None]
        elif key not in dots:
            todo += node.named_children
    return found


def _operands(dot) -> tuple:
    if dot.name == "dot_scaled":
        return dot.arg(0, "lhs"), dot.arg(3, "rhs")
    return dot.arg(0, "input"), dot.arg(1, "other")


def _fmt(x: float) -> str:
    return fmt(int(x)) if float(x).is_integer() else f"{x:.2g}"
