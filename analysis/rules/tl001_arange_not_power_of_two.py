"""TL001 — `tl.arange` extent that is not a power of two

## What it finds
A `tl.arange(start, end)` whose extent `end - start` is not a power of two in at least one
configuration the file lets us see: a literal, a constexpr passed at a launch site
(`BLOCK_SIZE=100`), a wrapper assignment (`BLOCK_SIZE = 100`), a constexpr default or an
autotune `triton.Config`. The message names the value and where it came from.

## Why
Triton lays a block out over a power-of-two number of lanes; its code generator rejects any
other range (`arange's range must be a power of 2`) when the kernel is compiled, i.e. at the
first launch on the GPU — often long after the code was written. Nothing is slower than a kernel
that does not build.

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
mask on every load and store so the lanes past the real size do nothing. The quick fix rewrites
the literal that gave the value; when the extent was a literal inside the kernel it also adds
`mask=offs < 100` to the unmasked loads and stores that use it.
"""

from __future__ import annotations

from ..findings import Applicability, Range, Related, Severity, TextEdit
from ..values import UNKNOWN, fmt, is_power_of_two, literal, next_power_of_2
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
                    extent = end - start
                    if is_power_of_two(extent):
                        continue
                    yield _finding(ctx, call, config, start_node, end_node, extent)


def _finding(ctx, call, config, start_node, end_node, extent):
    origin, origin_range = ctx.origin_of(end_node, config)
    where = f" ({origin})" if origin else (f" in {config.label}" if config is not None and config.launch else "")
    target = next_power_of_2(extent) if isinstance(extent, int) and extent > 0 else None
    msg = (f"tl.arange extent {fmt(extent)}{where} is not a power of two: Triton refuses to compile it"
           + (f"; use {target} and mask the tail" if target else ""))
    related = [Related(origin_range, origin)] if origin_range is not None and origin else ctx.related_for(config, None, "configuration")
    edits = _fix(ctx, call, end_node, origin_range, extent, target) if target else None
    return ctx.finding(ctx.src.range(call.node), msg, fix=edits, related=related,
                       data={"extent": extent, "suggested": target, "config": config.label if config else None})


def _fix(ctx, call, end_node, origin_range, extent, target):
    """Round the literal that gave the extent up; when the extent was a literal in the kernel,
    mask the loads and stores that use the arange's variable, since the block now overhangs."""
    src = ctx.src
    if end_node.type == "integer" and (start := call.arg(0, "start")) is not None and start.type == "integer":
        edits = [TextEdit(src.range(end_node), str(literal(start, src) + target))]
        var = _assigned_name(call)
        if var:
            for mem in ctx.kernel.calls_named("load", "store"):
                if "mask" in mem.kwargs:
                    continue
                ptr = mem.arg(0, "pointer")
                if ptr is not None and var in ctx.depends_on(ptr):
                    last = mem.node.child_by_field_name("arguments")
                    close = last.end_point  # the closing parenthesis
                    pos = src.pos((close[0], close[1] - 1))
                    edits.append(TextEdit(Range(pos, pos), f", mask={var} < {extent}"))
        return edits
    if origin_range is not None:
        text = _text_at(src, origin_range)
        if text is not None and text.strip().lstrip("-").isdigit():
            return [TextEdit(origin_range, str(target))]
        # `BLOCK = 100` style assignment: replace its right-hand side
        if text is not None and "=" in text:
            lhs, _, rhs = text.partition("=")
            if rhs.strip().isdigit():
                start = origin_range.start
                col = start.column + len(lhs) + 1 + (len(rhs) - len(rhs.lstrip()))
                return [TextEdit(Range(type(start)(start.line, col), type(start)(start.line, col + len(rhs.strip()))), str(target))]
    return None


def _assigned_name(call):
    parent = call.node.parent
    while parent is not None and parent.type in ("binary_operator", "parenthesized_expression"):
        parent = parent.parent
    if parent is not None and parent.type == "assignment":
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return left.text.decode()
    return None


def _text_at(src, r: Range):
    if r.start.line != r.end.line:
        return None
    return src.line_text(r.start.line)[r.start.column:r.end.column]
