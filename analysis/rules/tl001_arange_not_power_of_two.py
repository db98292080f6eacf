"""TL001 — `tl.arange` extent that is not a power of two

## What it finds
A `tl.arange(start, end)` whose extent `end - start` is not a power of two in at least one
configuration the file lets us see: a literal, a constexpr passed at a launch site
(`BLOCK_SIZE=100`), a wrapper assignment (`BLOCK_SIZE = 100`), a constexpr default or an
autotune `triton.Config`. The message names the value and where it came from.

It also finds a bool where the extent's block parameter goes: a launch that passes one positional
argument too many, so that a flag (`False`) lands in `BLOCK_M`. The message says which argument
lands where, and whether `@triton.heuristics` sets that parameter too. An extent of 0 from a
number (`X=0 if flash else x`) is a sentinel for a branch the launch does not take and stays silent.

A tensor's size that reaches an extent unrounded (it fails only for some inputs) is TL025's.

## Why
Triton lays a block out over a power-of-two number of lanes; its code generator rejects any
other range (`arange's range must be a power of 2`) when the kernel is compiled, i.e. at the
first launch on the GPU — often long after the code was written. Nothing is slower than a kernel
that does not build. A bool in the block parameter is an empty range (`tl.arange(0, False)`), and
where `@triton.heuristics` sets the parameter as well, the launch stops before that: the heuristic's
value and the positional one are two values for one argument (`TypeError: got multiple values for
argument 'BLOCK_M'`).

## Example
```python
@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

def run(x):
    BLOCK = 100                      # TL001: 100 is not a power of two
    scale[(triton.cdiv(x.numel(), BLOCK),)](x, x.numel(), BLOCK=BLOCK)
```

## Fix
Use the next power of two (`triton.next_power_of_2(n)` or the literal: here 128) and keep a
mask on every load and store so the lanes past the real size do nothing. The quick fix is offered
only where it keeps what the kernel computes:

- the literal the value came from (the launch argument, `BLOCK = 100`, the autotune config) is
  rounded up when every load and store through the arange is already masked, so the padding
  lanes of the last block are masked off as the tail was before;
- a literal in the kernel (`offs = tl.arange(0, 96)`) becomes `tl.arange(0, 128)` and each load
  and store of `offs` gets `mask=offs < 96` (or its mask `& (offs < 96)`), when `offs` is the bare
  arange, every access is 1-D and nothing combines lanes (a reduction, `tl.dot`, a reshape or an
  atomic would see the padding lanes).
"""

from __future__ import annotations

from ..findings import Applicability, Range, Related, Severity, TextEdit
from ..model import ATOMICS
from ..values import UNKNOWN, fmt, is_power_of_two, literal, next_power_of_2
from . import _offsets as off
from ._literals import literal_edit
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL001",
    name="arange-not-power-of-two",
    severity=Severity.ERROR,
    summary="tl.arange extent that is not a power of two",
    fix_title="round the block up to a power of two and mask the tail",
    fix_applicability=Applicability.UNSAFE,
    fix_safety=('The new extent changes what each program covers: the result stays right only if every load '
                'and store is masked by the real size and the grid follows the block, which the fix checks '
                "for the kernel's own literal but not for a block passed at a launch."),
)


def check(ctx: KernelContext):
    for call in ctx.kernel.calls_named("arange"):
        start_node, end_node = call.arg(0, "start"), call.arg(1, "end")
        if end_node is None:
            continue
        for config in ctx.kernel.configs or [None]:
            starts = ctx.values(start_node, config) if start_node is not None else [0]
            for end in ctx.values(end_node, config):
                for start in starts:
                    if end is UNKNOWN or start is UNKNOWN or not isinstance(end, int) or not isinstance(start, int):
                        continue
                    if isinstance(end, bool):
                        landed = _bool_block(ctx, end_node, config, end)
                        if landed is not None:
                            yield landed
                            continue
                    extent = end - start
                    # an empty range is a sentinel for a branch the launch does not take (`X=0 if
                    # flash else x`, a dead `flag = 0`): Triton would name another error anyway
                    if extent <= 0 or is_power_of_two(extent):
                        continue
                    yield _finding(ctx, call, config, start_node, end_node, extent)


def _finding(ctx, call, config, start_node, end_node, extent):
    origin, origin_range = ctx.origin_of(end_node, config)
    short, _ = ctx.value_where(end_node, config)
    where = f" ({short})" if short else (f" in {config.label}" if config is not None and config.launch else "")
    target = next_power_of_2(extent) if isinstance(extent, int) and extent > 0 else None
    msg = (f"tl.arange extent {fmt(extent)}{where} is not a power of two, which Triton refuses"
           + (f"; use {target}" if target else ""))
    related = [Related(origin_range, origin)] if origin_range is not None and origin else ctx.related_for(config, None, "configuration")
    edits, title = _fix(ctx, call, end_node, config, origin_range, extent, target) if target else (None, None)
    return ctx.finding(ctx.src.range(call.node), msg, fix=edits, fix_title=title, related=related,
                       data={"extent": extent, "suggested": target, "config": config.label if config else None})


def _bool_block(ctx, end_node, config, value):
    """A bool where the block size goes: a launch passed one positional argument too many, so a
    flag landed on the block parameter (which Triton then refuses: a bound of False is an empty
    range, and a @triton.heuristics that sets the parameter too makes the launch a TypeError)."""
    k = ctx.kernel
    if config is None or config.launch is None or end_node.type != "identifier":
        return None
    p = k.param(ctx.src.text_of(end_node))
    args = config.launch.args
    if p is None or p.index >= len(args) or any(a.type in ("list_splat", "dictionary_splat") for a in args[:p.index + 1]):
        return None
    arg = args[p.index]
    nth = p.index + 1
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(nth if nth < 20 else nth % 10, "th")
    sets = ", which @triton.heuristics sets" if p.name in k.heuristics else ""
    msg = f"the {nth}{suffix} positional argument, {value!r}, lands in {p.name}{sets}"
    return ctx.finding(ctx.src.range(end_node), msg, related=[Related(ctx.src.range(arg), "the argument that lands there")],
                       data={"extent": int(value), "config": config.label, "landed": p.name})


# Operations that combine lanes: a rounded-up block would feed them the padding lanes.
_CROSS_LANE = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum", "cumsum", "cumprod",
               "associative_scan", "dot", "dot_scaled", "reshape", "view", "permute", "trans", "sort", "flip",
               "histogram", "gather", "join", "split", "interleave", "cat"} | ATOMICS


def _fix(ctx, call, end_node, config, origin_range, extent, target):
    """(edits, title), or (None, None) where no rounding keeps the kernel's results.

    A literal in the kernel is rounded up and every load and store of the arange's variable is
    masked to the old extent, when the variable is the bare arange (so `var < end` bounds the
    padding lanes) and nothing combines lanes. A literal the value came from (a launch argument,
    `BLOCK = 100`, an autotune config) is rounded up when every memory access through the arange is
    already masked: the whole block then moves with it and the mask bounds the tail as before."""
    src = ctx.src
    start = call.arg(0, "start")
    if end_node.type == "integer" and start is not None and start.type == "integer":
        end = literal(end_node, src)
        var = _bare_arange_name(call, src)
        if var is None or any(c.name.lstrip(".") in _CROSS_LANE for c in ctx.kernel.calls):
            return None, None
        edits = [TextEdit(src.range(end_node), str(literal(start, src) + target))]
        for mem, mask in _accesses(ctx, call, var):
            if "[" in off.chain_text(ctx, mem.arg(0, "pointer")):
                return None, None  # a 2-D access: a 1-D lane mask does not fit it
            if mask is None:
                close = mem.node.child_by_field_name("arguments").end_point  # the closing parenthesis
                pos = src.pos((close[0], close[1] - 1))
                edits.append(TextEdit(Range(pos, pos), f", mask={var} < {end}"))
            else:
                edits.append(TextEdit(src.range(mask), f"({src.text_of(mask)}) & ({var} < {end})"))
        masked = " and mask the tail" if len(edits) > 1 else ""
        return edits, f"round tl.arange(0, {fmt(extent)}) up to {target}{masked}"
    edit = literal_edit(src, origin_range, target)
    if edit is None or any(mask is None for _, mask in _accesses(ctx, call, _assigned_name(call, src))):
        return None, None
    name = next((n for n in ctx.names_in(end_node) if config is not None and n in config.values), None)
    what = name or "the block"
    return [edit], f"round {what} up from {fmt(extent)} to {target} (line {origin_range.start.line + 1})"


def _accesses(ctx, call, var):
    """(load or store, its mask node or None) for each access whose pointer reads the arange."""
    out = []
    for mem in ctx.kernel.calls_named("load", "store"):
        ptr = mem.arg(0, "pointer")
        if ptr is None:
            continue
        uses = (var is not None and var in ctx.depends_on(ptr)) or \
            (ptr.start_byte <= call.node.start_byte and call.node.end_byte <= ptr.end_byte)
        if uses:
            out.append((mem, mem.arg(1 if mem.name == "load" else 2, "mask")))
    return out


def _bare_arange_name(call, src):
    """`offs` in `offs = tl.arange(0, 96)`: a name whose value is the lane index itself."""
    parent = call.node.parent
    if parent is not None and parent.type == "assignment" and parent.child_by_field_name("right") == call.node:
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return src.text_of(left)
    return None


def _assigned_name(call, src):
    parent = call.node.parent
    while parent is not None and parent.type in ("binary_operator", "parenthesized_expression"):
        parent = parent.parent
    if parent is not None and parent.type == "assignment":
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return src.text_of(left)
    return None
