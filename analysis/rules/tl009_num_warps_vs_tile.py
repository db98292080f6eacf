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
Unknown tiles or num_warps (e.g. `BLOCK = triton.next_power_of_2(n)`) are not reported, except
a block the launch sizes from a dimension its function asserts a bound for (`assert d <= 128`,
`assert d in {16, ..., 128}`, then `BLOCK_D = max(triton.next_power_of_2(d), 16)`): that tile is
judged at the largest value allowed, reported only past the register bound there, at the launch
(where `num_warps=` goes), naming the bound (`at d=128, the assert's largest`). Nor are
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
from dataclasses import replace

from .. import message_text as mt
from ..estimates import largest_tile
from ..findings import Applicability, Related, Severity
from ..shapes import infer_kernel
from ..values import Value, fmt, next_power_of_2
from . import _tiling_evidence as te
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
    bounded_notes: dict = {}
    for config in ctx.kernel.configs:
        judged = _judge(ctx, config, limit, operands)
        # a tile sized by an unknown block (`max(next_power_of_2(d), 16)`) is judged at its asserted bound
        if (judged is None or not (judged[3] or judged[2].complete)) and (bounded := _at_asserted_bound(ctx, config)) is not None:
            at_bound = _judge(ctx, bounded[0], limit, operands)
            if at_bound is not None and at_bound[3] and not at_bound[3].endswith("idle"):
                judged = at_bound
                bounded_notes[id(judged[0])] = bounded[1]  # past the limit at the largest size allowed
            elif at_bound is not None:
                judged = (*at_bound[:3], "")  # fits there: this combination keeps its launch silent
        if judged is not None:
            groups.setdefault(_launch_choice(config), []).append(judged)
    for judged in groups.values():
        # One launch whose values come from the wrapper's branches (`BLOCK, nw = (32, 1) if
        # small else (256, 8)`) resolves to every combination of them, some it never makes:
        # report it only when each combination has the problem.
        if not all(problem for _, _, _, problem in judged):
            continue
        for config, nw_val, tile, problem in judged:
            yield _finding(ctx, config, nw_val, tile, problem, limit, bound=bounded_notes.get(id(config)))


_NP2 = re.compile(r"^(?:max\(\s*)?(?:triton\.)?next_power_of_2\(\s*(\w+)\s*\)\s*(?:,\s*(\d+)\s*\))?$")


def _at_asserted_bound(ctx, config):
    """`config` with each unknown constexpr the launch sizes as `max(triton.next_power_of_2(d), 16)`
    (or passes `d` itself) set to its value at the largest `d` an `assert d <= 128` / `assert d in
    {16, ..., 128}` of the launching function allows, and a note naming that bound; None where
    some unknown size has no such bound."""
    launch = config.launch
    if launch is None or launch.wrapper is None:
        return None
    values, notes = dict(config.values), []
    ends = {ctx.src.text_of(e) for c in ctx.kernel.calls_named("arange") if (e := c.arg(1, "end")) is not None}
    for p in ctx.kernel.params:
        v = config.values.get(p.name)
        if not p.is_constexpr or p.name not in ends or (v is not None and v.known):
            continue
        node = launch.kwargs.get(p.name)
        if node is None and p.index < len(launch.args):
            node = launch.args[p.index]
        assigns = te._wrapper_assigns(ctx.src, launch) if node is not None else {}
        text = ctx.src.text_of(node).strip() if node is not None else ""
        if node is not None and node.type == "identifier" and len(assigns.get(text, ())) == 1 and not isinstance(assigns[text][0], str):
            text = ctx.src.text_of(assigns[text][0]).strip()
        m = _NP2.match(text)
        size = m.group(1) if m else (text if re.fullmatch(r"\w+", text) else None)
        top = _asserted_max(ctx, launch, size) if size else None
        if top is None:
            return None
        value = max(next_power_of_2(top) if m else top, int(m.group(2) or 0) if m else 0)
        values[p.name] = Value(value, f"{size} <= {top} by the assert")
        notes.append(f"{size}={top}")
    if not notes:
        return None
    return replace(config, values=values), f" (at {', '.join(notes)}, the assert's largest)"


def _asserted_max(ctx, launch, name: str) -> int | None:
    """The largest value of `name` an assert of the launching function allows: `assert d <= 128`,
    `assert d < 256`, `assert d in {16, 32, 64, 128}`."""
    text = ctx.src.text_of(launch.wrapper)
    n = re.escape(name)
    m = re.search(rf"assert\s+\(?\s*{n}\s*(<=?)\s*(\d+)\s*\)?\s*(?:,|\n|$)", text)  # (not `d <= 64 or ...`)
    if m:
        return int(m.group(2)) - (m.group(1) == "<")
    m = re.search(rf"assert\s+{n}\s+in\s*[{{(\[]([\d,\s]+)[}})\]]", text)
    nums = [int(x) for x in m.group(1).split(",") if x.strip()] if m else []
    return max(nums) if nums else None


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


def _finding(ctx: KernelContext, config, nw_val, tile, problem: str, limit: int, bound: str | None = None):
    nw = nw_val.value
    lanes = _lanes(ctx)
    threads = nw * lanes
    suggested = _suggest(tile.elements, limit, lanes)
    values = _values(ctx, tile, config)
    which = _which(ctx, config) + (bound or "")
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
    where = ctx.src.range(tile.call.node)
    if bound:  # sized by what the launch allows: it is where num_warps= goes
        related = related + [Related(where, "the tile")]
        where = config.launch.range
    return ctx.finding(where, msg, fix=[edit] if edit else None,
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
