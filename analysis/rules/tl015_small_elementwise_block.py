"""TL015 — 1-D element-wise kernel with fewer than 256 elements per program

## What it finds
A 1-D element-wise kernel — `tl.load`/`tl.store` over one `tl.arange` axis, no `tl.dot`, no
reduction, no atomics, no loop — whose `tl.arange` extent (the elements each program handles) is
below 256 in some configuration: a literal, a launch value, a wrapper variable, an autotune
config. The arange must be the programs' block of a flat index (`pid * BLOCK + tl.arange(0,
BLOCK)`) with a grid that divides the work by it (`cdiv(n, BLOCK)`, `(n + BLOCK - 1) // BLOCK`,
`-(-n // BLOCK)`, `math.ceil(n / BLOCK)`, a lambda returning one), with the block a launch
keyword, a wrapper local or an autotune value, inline or in a local the grid reads
(`(num_blocks,)`).

Silent for unknown extents, for a row a program handles whole (one program per token over
`tl.arange(0, HEAD_DIM)`, a grid of `(n_tokens,)`), for a sub-block beside a large block of the
same programs, for kernels that call a `@triton.jit` helper (it may reduce or loop), for blocks
computed from the sizes (`next_power_of_2(n) if n else 1`), and for
autotuned kernels that also try a block of 256 or more.

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

import re

from .. import message_text as mt
from ..findings import Applicability, Related, Severity
from ..model import ATOMICS, REDUCTIONS
from ..shapes import infer_kernel
from ..shapes.kernel import jit_functions
from . import _offsets as off
from ._host_dtypes import last_assignment
from ._literals import is_wrapper_assignment, literal_edit
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL015",
    name="small-elementwise-block",
    severity=Severity.WARNING,
    summary="1-D element-wise kernel with BLOCK < 256 elements per program",
    fix_makes_faster=True,
    fix_title="raise the block to 1024 elements",
    fix_applicability=Applicability.UNSAFE,
    fix_safety=('It changes the block each program handles and, through the grid, the number of programs; '
                'results stay the same only under the masks and grid the rule checked, and the speed-up is '
                'a heuristic.'),
)

MIN_BLOCK = 256
SUGGESTED = 1024
_NOT_ELEMENTWISE = {"dot", ".sum", ".max", ".min"} | REDUCTIONS | ATOMICS


def check(ctx: KernelContext):
    k = ctx.kernel
    if any(c.name in _NOT_ELEMENTWISE for c in k.calls):
        return
    if set(ctx.names_in(k.node)) & (set(jit_functions(ctx.module)) - {k.name}):
        return  # a @jit helper may reduce, loop or multiply tiles: not plainly element-wise
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
    blocks = [a for a in aranges if _blocks_the_grid(ctx, a)]
    for arange in blocks:
        end = arange.arg(1, "end")
        if end is None:
            continue
        sizes = [(shapes.tile_shape(arange.node, c) or (0,))[0] for c in k.configs]
        if k.autotuned and max(sizes, default=0) >= MIN_BLOCK:
            continue  # the autotuner picks a large block where the small one is slower
        for config in k.configs:
            shp = shapes.tile_shape(arange.node, config)
            if not shp or shp[0] >= MIN_BLOCK or shp[0] <= 0:
                continue
            if any((shapes.tile_shape(a.node, config) or (0,))[0] >= MIN_BLOCK for a in blocks):
                continue  # another axis of the same programs is large: this one is a sub-block
            if not _grid_follows(ctx, end, config):
                continue  # one program per row of the data (`(n_tokens,)`): the row sets the extent
            block = shp[0]
            origin, origin_range = ctx.origin_of(end, config)
            if _derived(origin):
                continue  # computed from the sizes (`next_power_of_2(n) if n else 1`): not a fixed choice
            short, _ = ctx.value_where(end, config)
            where = f" ({short})" if short else (f" in {config.label}" if config.launch else "")
            use = f"use {SUGGESTED}" + ("" if masked else " with masks")
            msg = mt.shortest_needed(
                f"{block} elements per program{where}: element-wise kernels need {MIN_BLOCK}+ for full bandwidth; {use}",
                f"{block} elements per program{where}: element-wise kernels need {MIN_BLOCK}+; {use}")
            edit = None
            if masked and origin_range is not None and _safe_to_edit(ctx, config, origin, origin_range):
                edit = literal_edit(ctx.src, origin_range, SUGGESTED)
            related = [Related(origin_range, origin)] if origin_range is not None and origin else \
                ctx.related_for(config, None, "configuration")
            yield ctx.finding(ctx.src.range(arange.node), msg, fix=[edit] if edit else None, related=related,
                              data={"block": block, "suggested": SUGGESTED, "config": config.label})


# Extents named after a dimension of the data (a head, a feature row, a rope half): a program
# handles that row whole, whatever the launch.
_ROW_OF_DATA = re.compile(r"HEAD|DIM|_D\b|ROPE|SCALE|HIDDEN|VOCAB|EMBED|FEAT|CHANNEL", re.IGNORECASE)


def _blocks_the_grid(ctx, arange) -> bool:
    """Whether `arange` is the program's block of a 1-D index: it sits beside `pid * EXTENT` in an
    address (`pid * BLOCK + tl.arange(0, BLOCK)`). An arange over a row that a program handles
    whole (`tl.arange(0, HEAD_DIM)` per token) is sized by the data, not a tunable block."""
    end = arange.arg(1, "end")
    if end is None or _ROW_OF_DATA.search(ctx.src.text_of(end)):
        return False
    extent = " ".join(ctx.src.text_of(end).split())
    for call in ctx.kernel.calls_named("load", "store"):
        ptr = call.arg(0, "pointer")
        if ptr is None or not off.is_fed(ctx, ptr, "arange"):
            continue
        for term in off.additive_terms(ctx, ptr):
            t = off.strip_parens(term)
            if t is None or t.type != "binary_operator" or ctx.src.text_of(t.child_by_field_name("operator")) != "*":
                continue
            sides = [off.strip_parens(t.child_by_field_name(n)) for n in ("left", "right")]
            texts = [" ".join(ctx.src.text_of(x).split()) if x is not None else "" for x in sides]
            for i in (0, 1):
                if texts[i] == extent and off.is_fed(ctx, sides[1 - i], "program_id"):
                    return True
    return False


def _grid_follows(ctx, end, config) -> bool:
    """Whether the launch's grid divides the work by the block: it names the value the launch
    passes for the extent (`cdiv(n, BLOCK_SIZE)`, `(n + BLOCK - 1) // BLOCK`, `-(-n // BLOCK)`,
    `n // 32`), itself or in the wrapper's locals it reads (`num_blocks = (n + BLOCK - 1) //
    BLOCK; kernel[(num_blocks,)]`), or is a `meta[...]` lambda. A grid that is a name (`grid`) or
    no visible launch cannot say otherwise."""
    launch = config.launch
    if launch is None or launch.grid is None or launch.grid.type == "identifier":
        return True
    grid = ctx.src.text_of(launch.grid)
    if "meta" in grid or launch.grid.type == "lambda":
        return True
    words = _grid_words(ctx, launch, grid)
    if end.type == "integer":
        return ctx.src.text_of(end) in words
    for name in ctx.names_in(end):
        for lch, node in off.launch_args(ctx, name):
            if lch is launch and node.type in ("integer", "identifier") and ctx.src.text_of(node) in words:
                return True
    return False


def _grid_words(ctx, launch, grid: str) -> set[str]:
    """The words of the grid and of the wrapper's locals it reads, followed two levels deep."""
    words = set(re.findall(r"\w+", grid))
    todo = list(words)
    for _ in range(2):
        found = []
        for word in todo:
            right = last_assignment(ctx.src, launch, word) if word.isidentifier() else None
            if right is not None:
                found += [w for w in re.findall(r"\w+", ctx.src.text_of(right)) if w not in words]
        words |= set(found)
        todo = found
    return words


def _derived(origin: str) -> bool:
    """Whether the assignment a configuration value came from (quoted in `origin`) computes it from
    the sizes, with a call or a conditional: the value the shapes give is then not a fixed choice."""
    quoted = origin.split("`")
    if len(quoted) < 3 or "=" not in quoted[1]:
        return False
    right = quoted[1].split("=", 1)[1]
    return "(" in right or " if " in right


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
