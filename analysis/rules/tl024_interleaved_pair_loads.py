"""TL024 — interleaved pairs read (or written) with two stride-2 accesses

## What it finds
Two loads (or two stores) of one kernel whose addresses differ only by `+ 1` and step by 2 along
the tile's contiguous axis: `tl.load(p + 2 * i)` and `tl.load(p + 2 * i + 1)` (or
`i * 2` / `i * 2 + 1`), with `i` a `tl.arange` block — the real and imaginary parts of complex
numbers, the even and odd halves of GPT-J-style rotary embeddings, (key, value) pairs. A lone
stride-2 access (every other element, on purpose) and loads of single elements
(`tl.load(idx + 2 * pid)`) are not reported.

## Why
Each of the two accesses touches every 32-byte sector of the pair array and uses half of it, so
the hardware issues twice the memory instructions and transactions the data needs, and relies
on L1/L2 to keep the second access from going back to DRAM. Measured on an H100
(bench/fp32_dot_and_interleave.py, Triton 3.6.0, 2^26 pairs, elementwise): two stride-2 loads
and stores ran at 2.33–2.76 TB/s for fp32 and 2.40–2.43 TB/s for bf16, against 2.96–2.98 and
2.90–2.94 TB/s for one contiguous load split with `tl.split` and one `tl.join` + store: the
pairwise version was 8–21% slower in a kernel bound by memory.

## Example
```python
re = tl.load(x_ptr + 2 * offs, mask=mask)        # TL024 (with the next line)
im = tl.load(x_ptr + 2 * offs + 1, mask=mask)
```

## Fix
Load both halves in one contiguous access and split them in registers:
```python
pair = 2 * offs[:, None] + tl.arange(0, 2)[None, :]
re, im = tl.split(tl.load(x_ptr + pair, mask=pair < 2 * n))
...
tl.store(y_ptr + pair, tl.join(out_re, out_im), mask=pair < 2 * n)
```
"""

from __future__ import annotations

from .. import message_text as mt
from ..findings import Related, Severity
from . import _offsets as off
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL024",
    name="interleaved-pair-loads",
    severity=Severity.INFO,
    summary="interleaved pairs accessed as two stride-2 loads/stores instead of one load + tl.split",
)


def _stride_two(ctx, info) -> bool:
    """A term `2 * arange-block` on the tile's contiguous axis (the last one, or a 1-D tile)."""
    if not info.aranges or len(info.multipliers) != 1:
        return False
    if info.ndim is not None and info.axis != info.ndim - 1:
        return False
    return ctx.values(info.multipliers[0], None) == [2]


def _shape(ctx, call):
    """(stride-2 term text, the other non-constant terms, the constant offset) of an access, or None."""
    ptr = call.arg(0, "pointer")
    if ptr is None:
        return None
    infos = off.pointer_terms(ctx, ptr)
    strided = [i for i in infos if _stride_two(ctx, i)]
    if len(strided) != 1:
        return None
    rest, const = [], 0
    for i in infos:
        if i is strided[0]:
            continue
        node = off.strip_parens(i.node)
        if node is not None and node.type == "integer":
            v = ctx.values(node, None)
            if v and isinstance(v[0], int):
                const += v[0]
                continue
        rest.append(ctx.src.text_of(i.node))
    return ctx.src.text_of(strided[0].node).replace(" ", ""), tuple(sorted(rest)), const


def check(ctx: KernelContext):
    groups: dict[tuple, dict[int, object]] = {}
    for call in ctx.kernel.calls_named("load", "store"):
        shape = _shape(ctx, call)
        if shape is None:
            continue
        term, rest, const = shape
        groups.setdefault((call.name, term, rest), {}).setdefault(const, call)
    for (op, term, _rest), by_offset in groups.items():
        for const, even in sorted(by_offset.items()):
            odd = by_offset.get(const + 1)
            if odd is None or const % 2:
                continue
            verb = "loads" if op == "load" else "stores"
            fix = "one load + tl.split" if op == "load" else "tl.join + one store"
            line = odd.range.start.line + 1
            pair = f"interleaved pair as two stride-2 {verb} ({mt.code(term, 24)}, '+ 1' at line {line})"
            short = f"interleaved pair as two stride-2 {verb} ({mt.code(term, 16)}, '+ 1' at line {line})"
            yield ctx.finding(even.range, mt.shortest_needed(f"{pair}; {fix} was 8-21% faster on H100",
                                                             f"{pair}; {fix} was 8-21% faster",
                                                             f"{short}; {fix} was 8-21% faster", f"{short}; use {fix}"),
                              related=[Related(odd.range, f"the odd half's {op}")],
                              data={"op": op, "term": term, "odd_line": line})
