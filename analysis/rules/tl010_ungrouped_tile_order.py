"""TL010 — tiled `tl.dot` kernel with no grouped (L2) tile ordering

## What it finds
A kernel with `tl.dot` that splits its axis-0 program id (`tl.program_id(0)`, through a variable
or inline) into a tile row and column with `//` and `%` (`pid_m = pid // num_pid_n; pid_n = pid %
num_pid_n`), with no grouping: no `tl.swizzle2d` and no `GROUP_SIZE_M`-style group (`group_id =
pid // num_pid_in_group`) in the computation of the tile indices. Both halves of the split must be tile indices, each multiplied by
its own block-size constexpr (`pid_m * BLOCK_M`, `pid_n * BLOCK_N`): a split into batch, head,
expert, frame or chunk indices (`b = pid // H; h = pid % H`) is not a grid of output tiles and is
left alone. Reported at the `tl.program_id` call. Other axes may hold a batch or a split of K
(`grid = (cdiv(M, BM) * cdiv(N, BN), batch)`): axis 0 varies fastest in launch order, so its
tile order still decides which tiles are resident together. Also a 2-D grid used as the tile
grid (`pid_m = tl.program_id(0)`, `pid_n = tl.program_id(1)`, each placing a block of the lanes a
`tl.store` writes: `pid_n * BLOCK_N + tl.arange(0, BLOCK_N)`, also through a name computed from it,
`local * BLOCK_M`): its order is column-major, just as ungrouped. Left alone: tiles whose rows and
columns both span model dimensions (a chunk, a head or state dimension: `offs_m < chunk_size`,
`num_pid_n = tl.cdiv(hdim, BLOCK_N)`), a few tiles of small operands per (batch, chunk, head)
program with nothing for L2 to share; a 2-D grid whose axis 1 is a (batch, head) whose offset
(`head * BLOCK_D`) sits beside lanes of their own or reaches the tile only through a load's
address (an attention grid, with no column of tiles), a 2-D grid whose axis 1 splits K (its lanes run
along the dot's reduction and reach the store only as a partial's index, `pid_k * stride_ps`),
an axis every launch tiles with one block (the size itself passed as its block: `m_size` for
`m_block_size`), a tile split on a slower axis behind a batch on axis 0 (consecutive programs
are other batch entries), and kernels without `tl.dot`.

## Why
Row-major order makes consecutive programs — the ones resident on the GPU at the same time —
cover a whole row of output tiles: they share one row block of A but each needs a different
column block of B, so B is streamed from DRAM again for every row. Grouping `GROUP_SIZE_M` rows
of tiles makes the resident programs reuse both A and B blocks from L2. The Triton matrix
multiplication tutorial ("L2 Cache Optimizations") reports that the grouped ordering alone takes
its kernel from 220 to 245 TFLOP/s on A100 (+11%); on H100 our measurements of the same kernel
(shared/gpu/h100.md) reach 691 TFLOP/s, 97% of cuBLAS, only with GROUP_M=8.

## Example
```python
pid = tl.program_id(axis=0)            # TL010
num_pid_n = tl.cdiv(N, BLOCK_N)
pid_m = pid // num_pid_n
pid_n = pid % num_pid_n
```

## Fix
Use the tutorial's grouped ordering (add `GROUP_SIZE_M: tl.constexpr`, e.g. 8):
```python
num_pid_m = tl.cdiv(M, BLOCK_M)
num_pid_n = tl.cdiv(N, BLOCK_N)
num_pid_in_group = GROUP_SIZE_M * num_pid_n
group_id = pid // num_pid_in_group
first_pid_m = group_id * GROUP_SIZE_M
group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
pid_n = (pid % num_pid_in_group) // group_size_m
```
or `pid_m, pid_n = tl.swizzle2d(pid_m, pid_n, num_pid_m, num_pid_n, GROUP_SIZE_M)`. No automatic
fix: the rewrite touches several lines and adds a parameter.
"""

from __future__ import annotations

import re

from .. import message_text as mt
from ..findings import Severity
from ..source import walk
from . import _offsets as off
from . import _tiling_evidence as te
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL010",
    name="ungrouped-tile-order",
    severity=Severity.INFO,
    summary="tiled tl.dot kernel mapping its axis-0 program_id to tiles with no grouped (L2) ordering",
)


def check(ctx: KernelContext):
    k = ctx.kernel
    if not k.calls_named("dot") or k.calls_named("swizzle2d"):
        return
    axes = {id(c): _axis(ctx, c) for c in k.calls_named("program_id")}
    if None in axes.values():
        return  # an axis we cannot read
    # Axis 0 varies fastest in launch order: programs resident together are consecutive ones of
    # it, whatever the other axes hold (a batch, a split of K). A tile split on a slower axis is
    # interleaved with the faster axes' programs, which decide what is resident together.
    pids = [c for c in k.calls_named("program_id") if axes[id(c)] == 0]
    pid_vars = {v for c in pids if (v := _assigned(ctx, c)) is not None}
    inline = [c for c in pids if _assigned(ctx, c) is None]  # `pid_m = tl.program_id(0) // num_pid_n`
    if not pid_vars and not inline:
        return
    # Variables computed from the program id by `//` and by `%`: the row/column split.
    div, mod, grouped = [], [], False
    divisors: dict = {}  # (name, '//' or '%') → the texts it is divided by
    sources = [c for c in pids if _assigned(ctx, c) in pid_vars]  # the program ids the split reads
    for name, assigns in k.assignments.items():
        for a in assigns:
            if a.value is None:
                continue
            ops = _operators(ctx, a.value)
            if "//" not in ops and "%" not in ops:
                continue
            deps = ctx.depends_on(a.value)
            within = [c for c in inline if a.value.start_byte <= c.node.start_byte < a.value.end_byte]
            if not deps & pid_vars and not within:
                continue
            sources += within
            # a group in the scalar split itself (`group_id = pid // num_pid_in_group`), not in a
            # tile of offsets (`offs_k // group_size` of a quantization group)
            if any("group" in d.lower() for d in deps | {name}) and not ctx.shapes.shape_of(a.value):
                grouped = True
            if "//" in ops:
                div.append(name)
            if "%" in ops:
                mod.append(name)
            for op, right in ops.items():
                divisors.setdefault((name, op), set()).update(right)
    if grouped:
        return
    if not div or not mod:
        yield from _two_axis_grid(ctx, pid_vars, axes)
        return
    tiles = _tile_blocks(ctx, set(div) | set(mod))
    pairs = [(d, m) for d in div for m in mod if tiles.get(d) and tiles.get(m) and tiles[d] != tiles[m]]
    # The row and column of one split share its divisor (`pid // num_pid_n`, `pid % num_pid_n`):
    # name that pair rather than one beside a split-K or batch index.
    pair = next((p for p in pairs if divisors.get((p[0], "//"), set()) & divisors.get((p[1], "%"), set())),
                pairs[0] if pairs else None)
    if pair is None:
        return  # a batch/head/chunk split, not the rows and columns of a tile grid
    row, col = pair
    row_sizes = _bounds(ctx, row, tiles[row], divisors.get((row, "//"), set()))
    col_sizes = _bounds(ctx, col, tiles[col], divisors.get((col, "%"), set()))
    if _model_dims(row_sizes) and _model_dims(col_sizes):
        return  # chunk x head-dim tiles of one (batch, chunk, head): a few tiles, nothing to share in L2
    if _one_tile(ctx, tiles[row], row_sizes) or _one_tile(ctx, tiles[col], col_sizes):
        return
    call = sources[0]
    yield ctx.finding(
        ctx.src.range(call.node),
        mt.shortest_needed(
            f"tiles in linear order ({row} by //, {col} by %): group GROUP_SIZE_M rows (or tl.swizzle2d) to share "
            "operands in L2",
            f"tiles in linear order ({mt.clip(row, 16)} by //, {mt.clip(col, 16)} by %): group GROUP_SIZE_M rows to "
            "share operands in L2"),
        data={"row": row, "column": col},
    )


def _two_axis_grid(ctx, rows, axes):
    """`pid_m = tl.program_id(0)`, `pid_n = tl.program_id(1)`: the grid itself is the tile grid,
    column-major (axis 0 varies fastest), so resident programs share one B column block and each
    needs its own A row block. Reported where both axes index the output tile a `tl.store` writes,
    each through its own block (`row0 = ... pid_m ... * BLOCK_M`), not a split of K or a batch."""
    cols = {v for c in ctx.kernel.calls_named("program_id") if axes[id(c)] == 1 and (v := _assigned(ctx, c))}
    if len(rows) != 1 or len(cols) != 1:
        return
    row, col = next(iter(rows)), next(iter(cols))
    tiles = _tile_blocks(ctx, {row, col}, through=True)
    tiles = {v: tiles.get(v, frozenset()) & _lane_blocks(ctx, v) for v in (row, col)}
    if not tiles[row] or not tiles[col] or tiles[row] & tiles[col]:
        return
    # Both axes place lanes of the stored output. An axis whose lanes run only along K (a split of
    # the dot's reduction) reaches the store as a partial's index (`pid_k * stride_ps`), if at all.
    stored = [ctx.depends_on(c.arg(0, "pointer")) for c in ctx.kernel.calls_named("store") if c.arg(0, "pointer") is not None]
    if not any(_lane_names(ctx, row) & d and _lane_names(ctx, col) & d for d in stored):
        return
    row_sizes, col_sizes = _bounds(ctx, row, tiles[row], set()), _bounds(ctx, col, tiles[col], set())
    if _model_dims(row_sizes) and _model_dims(col_sizes):
        return
    if _one_tile(ctx, tiles[row], row_sizes) or _one_tile(ctx, tiles[col], col_sizes):
        return
    call = next(c for c in ctx.kernel.calls_named("program_id") if axes[id(c)] == 0 and _assigned(ctx, c) == row)
    yield ctx.finding(
        ctx.src.range(call.node),
        mt.shortest_needed(
            f"tiles straight from a 2-D grid ({row} on axis 0, {col} on axis 1): fold them into one axis and group "
            "GROUP_SIZE_M rows (or tl.swizzle2d) to share operands in L2",
            f"tiles straight from a 2-D grid ({mt.clip(row, 16)}, {mt.clip(col, 16)}): group GROUP_SIZE_M rows to "
            "share operands in L2"),
        data={"row": row, "column": col},
    )


def _lane_blocks(ctx, var) -> set[str]:
    """The blocks B of `... var ... + tl.arange(0, B)` offsets: `var` places a tile of lanes (an
    output row or column block), not a head or batch offset beside lanes of their own."""
    return {b for a in _lane_assigns(ctx, var) for b in _ARANGE_END.findall(ctx.src.text_of(a.value))}


def _lane_names(ctx, var) -> set[str]:
    """The names assigned lanes that `var` places (`offs_n = pid_n * BLOCK_N + tl.arange(...)`)."""
    return {ctx.src.text_of(a.node.child_by_field_name("left")) for a in _lane_assigns(ctx, var)
            if a.node is not None and a.node.child_by_field_name("left") is not None}


def _lane_assigns(ctx, var) -> list:
    return [a for assigns in ctx.kernel.assignments.values() for a in assigns
            if a.value is not None and "arange" in ctx.src.text_of(a.value) and var in _value_deps(ctx, a.value)]


def _value_deps(ctx, node) -> set[str]:
    """The names `node` computes its value from, through local assignments, not through the
    address of a load: a head offset reaching a tile through `tl.load(seq_start + off_z)` is an
    index into memory, not a tile coordinate."""
    out, todo = set(), [node]
    while todo:
        n = todo.pop()
        stack = [n]
        while stack:
            x = stack.pop()
            if x.type == "call" and ctx.src.text_of(x.child_by_field_name("function")).endswith("load"):
                continue
            if x.type == "identifier":
                name = ctx.src.text_of(x)
                if name not in out:
                    out.add(name)
                    todo.extend(a.value for a in ctx.kernel.assignments.get(name, ()) if a.value is not None)
            stack.extend(x.named_children)
    return out


_ARANGE_END = re.compile(r"arange\(\s*0\s*,\s*(\w+)\s*\)")


# Extents fixed by the model, not by the problem size: a chunk, a head dimension, a state dimension.
_MODEL_DIM = re.compile(r"chunk|head_?dim|^h_?dim$|^d_?head$|d_?state|state_?(dim|size)", re.IGNORECASE)


def _model_dims(sizes) -> bool:
    """Whether every size a tile index is bounded by is a model dimension (a chunk, a head or
    state dimension): a few tiles of small operands per program group."""
    return bool(sizes) and all(_MODEL_DIM.search(s) for s in sizes)


def _one_tile(ctx, blocks, sizes) -> bool:
    """Whether every launch passes as the block of this tile index the very size it tiles
    (`m_size` for both `m_size` and `m_block_size`): one tile on that axis, no order to group."""
    if not ctx.kernel.launches or not blocks or not sizes:
        return False
    for launch in ctx.kernel.launches:
        passed = {b: _passed(ctx, launch, b) for b in blocks}
        size_texts = {_passed(ctx, launch, s) or s for s in sizes}
        if not any(t is not None and t in size_texts for t in passed.values()):
            return False
    return True


def _passed(ctx, launch, name) -> str | None:
    node = te.passed_node(ctx, launch, name)
    return ctx.src.text_of(node).strip() if node is not None else None


def _bounds(ctx, var, blocks, divisors) -> set[str]:
    """The sizes the tile index `var` is bounded by: the sizes its lanes are compared with
    (`offs_m < chunk_size`), the size its tile count divides (`num_pid_n = tl.cdiv(hdim,
    BLOCK_N)`), and what the launch grid's `cdiv` divides by its block (host names)."""
    sizes = set()
    for d in divisors:  # the column's own divisor: `pid % num_pid_n`
        sizes |= _cdiv_sizes(ctx, d, blocks)
    for name, assigns in ctx.kernel.assignments.items():
        for a in assigns:
            if a.value is not None and re.search(r"cdiv|//", ctx.src.text_of(a.value)) and \
                    set(ctx.names_in(a.value)) & blocks and name not in blocks:
                sizes |= _cdiv_sizes(ctx, name, blocks)
    for node in walk(ctx.kernel.node):
        if node.type != "comparison_operator" or len(node.named_children) != 2:
            continue
        ops = [ctx.src.text_of(c) for c in node.children if not c.is_named]
        a, b = node.named_children
        if ops and ops[0] in (">", ">="):
            a, b = b, a
        elif not ops or ops[0] not in ("<", "<="):
            continue
        if var in ctx.depends_on(a) and not off.is_fed(ctx, b, "program_id"):
            sizes |= _params(ctx, ctx.depends_on(b))
    for launch in ctx.kernel.launches:
        for _, axis in te.grid_axes(ctx, launch)[:1]:
            sizes |= {n for a, b in te.cdiv_operands(axis) if b & te.passed_for(ctx, blocks) for n in a}
    return sizes


def _cdiv_sizes(ctx, name, blocks) -> set[str]:
    """The parameters a tile count divides by one of `blocks` (`tl.cdiv(hdim, BLOCK_N)`)."""
    out = set()
    for a in ctx.kernel.assignments.get(name, ()):
        if a.value is not None and set(ctx.names_in(a.value)) & blocks:
            out |= _params(ctx, ctx.depends_on(a.value))
    return out


def _params(ctx, names) -> set[str]:
    return {n for n in names if (p := ctx.kernel.param(n)) is not None and "stride" not in n
            and not (p.is_constexpr and _BLOCK_NAME.search(n))}


_BLOCK_NAME = re.compile(r"BLOCK|TILE|BLK|^B[MNK]$", re.IGNORECASE)


def _tile_blocks(ctx, names, through=False) -> dict:
    """For each of `names` multiplied by a block-size constexpr (`pid_m * BLOCK_M`; with
    `through`, also a name computed from it: `local_tile * BLOCK_M`), the set of those
    constexprs: a tile index of the grid, as opposed to a batch or head index."""
    constexprs = {p.name for p in ctx.kernel.params if p.is_constexpr and _BLOCK_NAME.search(p.name)}
    out: dict = {}
    for node in walk(ctx.kernel.node):
        if node.type != "binary_operator" or ctx.src.text_of(node.child_by_field_name("operator")) != "*":
            continue
        sides = [node.child_by_field_name("left"), node.child_by_field_name("right")]
        for a, b in (sides, sides[::-1]):
            a = _strip_cast(ctx, a)
            if a is None or a.type != "identifier":
                continue
            hits = {ctx.src.text_of(a)} & names
            if through and not hits:
                hits = _value_deps(ctx, a) & names
            blocks = set(ctx.names_in(b)) & constexprs
            for h in hits if blocks else ():
                out.setdefault(h, set()).update(blocks)
    return {k: frozenset(v) for k, v in out.items()}


def _strip_cast(ctx, node):
    while node is not None:
        node = off.strip_parens(node)
        mc = off.method_call(node, ctx.src, "to")
        if mc is None:
            return node
        node = mc[0]
    return None


def _axis(ctx, call) -> int | None:
    node = call.arg(0, "axis")
    if node is None:
        return 0
    vals = ctx.values(node, None)
    return vals[0] if len(vals) == 1 and isinstance(vals[0], int) else None


def _assigned(ctx, call) -> str | None:
    parent = call.node.parent
    while parent is not None and parent.type in ("parenthesized_expression", "call", "attribute", "argument_list"):
        parent = parent.parent  # tl.program_id(0).to(tl.int64)
    if parent is not None and parent.type == "assignment":
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return ctx.src.text_of(left)
    return None


def _operators(ctx, node) -> dict[str, set[str]]:
    """The binary operators in `node`, each with the texts of its right operands."""
    out: dict[str, set[str]] = {}
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "binary_operator":
            op = n.child_by_field_name("operator")
            right = n.child_by_field_name("right")
            if op is not None:
                out.setdefault(ctx.src.text_of(op), set()).add(ctx.src.text_of(right) if right is not None else "")
        stack.extend(n.named_children)
    return out
