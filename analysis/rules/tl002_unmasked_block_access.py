"""TL002 — unmasked load/store at block offsets in a kernel that takes a size

## What it finds
A `tl.load` or `tl.store` with neither a `mask` nor a `boundary_check` whose `tl.arange` lanes
can run past the data, where the kernel itself says the data is ragged:
- the lanes are tiled by the program id or a loop (`pid * BLOCK + tl.arange(0, BLOCK)`,
  `start + tl.arange(0, BLOCK)` in `for start in range(0, n, BLOCK)`) and the kernel masks the
  same lanes against a size elsewhere (a runtime one, or a compile-time one the file tests for
  divisibility by the block: `EVEN_N = N % BLOCK_N == 0`), the launch tiles that grid axis with
  `cdiv` (also through the names its function assigned: `grid = (triton.cdiv(n, BLOCK),)`,
  `tiles = cdiv(M, BM) * cdiv(N, BN)`, or a grid saved on the autograd context, `ctx.grid =
  grid`; then also for a kernel given no size), or the loop runs to a runtime size;
- or the lanes span a whole axis (`row * stride + tl.arange(0, BLOCK)`) that other accesses of
  the kernel mask against a size (`cols < n_cols`, or `offs_k < K - k * BLOCK_K` in a K loop whose
  B tile is loaded unmasked);
- or a pointer is advanced by the block on every trip of a loop that walks a runtime size in
  blocks (`for _ in range(tl.cdiv(K, BLOCK_K)):`, `range(0, K, BLOCK_K)`; `w_ptrs += BLOCK_K * s`);
- or the same buffer is loaded elsewhere with these lanes masked, even against a compile-time
  size (`tl.load(da + offs, mask=offs < SEQLEN)`, then an unmasked reload of `da + offs`).
A masked access is reported where its mask bounds whole-width lanes `tl.arange(0, E)` only by
`E` itself and the launch passes `E = triton.next_power_of_2(d)`: `offs_d < HEAD_DIM_P2` masks
nothing, and the lanes past `d` read or write the next row.
A block pointer from `tl.make_block_ptr` is reported when an offset follows the program id or a
loop and the matching dimension of its shape is a runtime size. The message names the lanes and
the bound they can pass.

It stays silent where the address stays in range by construction: lanes wrapped or clamped
(`% M`, `tl.minimum`, `tl.maximum`, `tl.where`, a helper function of the module), indices loaded
from memory (a gather: the indices decide), a scalar per program (a reduction's result), an
arange over a whole compile-time extent the kernel never compares with a size (a head
dimension, a chunk), tiles of a launch that floors (`n // BLOCK` programs), a loop over the full
tiles before the program's own (`range(0, pid * BLOCK, BLOCK)`), a loop whose tail the kernel
peels off and masks separately, a scratch buffer laid out in whole tiles (`(s * num_pid_m +
pid_m) * BLOCK_M`), a loop to a count loaded from memory (usually padded to the block), an
early `if pid * BLOCK >= n: return`, and accesses under an `if` on a heuristic, the size, a
fast-path flag (`if EVEN_K:` with an `else`, or set by a divisibility test) or the lanes' own block
(`if start + BLOCK <= n:`, `if BLOCK_M == 1:`); an `if` on a flag that switches a feature on
(`if HAS_BIAS:`), on other lanes or on tile coordinates (a causal tile skipped) bounds nothing,
unit-stride lanes in rows whose
pitch the host pads to a multiple (`buf + row * seqlen_rounded + offs_m`, `seqlen_rounded =
math.ceil(seqlen / 128) * 128`), and a padded extent where the address lays rows out `E` wide
(`p + row * E + offs`). A kernel that compares nothing with a size, takes none and whose launch
shows no `cdiv` stays silent too (a comparison `tl.arange(0, E) < E` bounds nothing). So does an
access whose size the file guarantees a multiple of its block: a divisibility test of the size (or
what the launch passes for it) by the block (or what the launch passes for it) in an `assert` or
an `if` that raises or returns (in the launching function or one that calls it), in an `if` whose
body launches, in a helper an assert or such an `if` calls or that the file exports as a
predicate (`..._supported(M, N, K)`), or a block made a divisor of the size by a helper
(`unroll = highest_divisor(n_cols, 256)`). A test only kept as a flag (`EVEN_K = K % BK == 0`
passed on) guarantees nothing by itself: the kernel's `if EVEN_K:` is the guard, unless the launch
sets that flag by a test of another divisor than the lanes' block (`EVEN_K=(K % 2 == 0)` for a
BLOCK_K loop: its fast path reads past K).

## Why
The grid is `cdiv(n, BLOCK)` programs, so unless `n` is a multiple of `BLOCK` the last program's
block overhangs the tensor. Triton does not bounds-check: an unmasked load past the end reads
whatever lies there (or faults with an illegal address), and an unmasked store silently corrupts
the neighbouring allocation. The Triton tutorials' vector add masks for exactly this reason
("guard memory operations against out-of-bounds accesses", 01-vector-add). A mask costs
nothing measurable on a memory-bound kernel: on our H100 the masked vector add reaches
2.99 TB/s at BLOCK=1024, 100% of the 2.97 TB/s device copy ceiling (docs: shared H100 figures).

## Example
```python
@triton.jit
def quantize_rows(x_ptr, scale_ptr, M, K, stride_m, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    mask = (offs_m[:, None] < M) & (offs_k[None, :] < K)
    x = tl.load(x_ptr + offs_m[:, None] * stride_m + offs_k[None, :], mask=mask, other=0.0)
    tl.store(scale_ptr + offs_m, tl.max(tl.abs(x), axis=1))   # TL002: rows past M are written
```

## Fix
Mask with the bound: `tl.store(scale_ptr + offs_m, s, mask=offs_m < M)`. The quick fix does this
when the address is `ptr + offs` with 1-D offsets and the bound is a parameter (the one the kernel
compares these lanes with, else its only size parameter); it reuses a `mask = offs < n` variable
when the kernel has one, and its title names the mask it adds. For a
block pointer pass `boundary_check=(0, 1)` (and `padding_option="zero"` on loads). If the size is
a multiple of the block by contract, say so with a `@triton.heuristics` `EVEN_N` flag and an
`if EVEN_N:` fast path, or suppress the line with `# tritonlens: ignore[TL002]`.
"""

from __future__ import annotations

import re

from .. import message_text as mt
from ..findings import Applicability, Range, Related, Severity, TextEdit
from ..source import walk
from . import _index_bounds as ib
from . import _mask_evidence as me
from . import _offsets as off
from . import _tiling_evidence as te
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL002",
    name="unmasked-block-access",
    severity=Severity.WARNING,
    summary="unmasked tl.load/tl.store whose arange lanes can pass a size the kernel masks elsewhere",
    fix_title="mask the access with the size bound",
    fix_applicability=Applicability.UNSAFE,
    fix_safety=("The bound is the parameter the kernel compares these lanes with elsewhere, else its only "
                "size parameter; where the data is a multiple of the block by contract the mask is redundant, "
                "and where the lanes index another axis than the bound's it names the wrong one."),
)

# Names that say "how many": n, N, M, K, n_elements, numel, seq_len, n_cols, num_tokens, …
_SIZE_NAME = re.compile(r"^(n|N|M|K|L|numel|size|length)$|^(n|num)_|numel|elements|_size$|^size_|(^|_)len(gth)?$|^(n|N)[A-Z_]")
_NOT_SIZE = re.compile(r"stride|eps|scale|seed|alpha|beta|ptr|offset|^p$|prob|temp|momentum", re.IGNORECASE)


def _size_params(ctx: KernelContext) -> list[str]:
    kinds = off.param_kinds(ctx)
    compared = set()
    for node in walk(ctx.kernel.node):
        if node.type == "comparison_operator":
            compared |= off.names_in_text(node, ctx.src)
    out = []
    for p in ctx.kernel.params:
        if p.name not in kinds.runtime or _NOT_SIZE.search(p.name):
            continue
        if p.annotation and "float" in p.annotation:
            continue
        if _SIZE_NAME.search(p.name) or p.name in compared:
            out.append(p.name)
    return out


def check(ctx: KernelContext):
    k = ctx.kernel
    sizes = None
    for call in k.calls_named("load", "store"):
        ptr = call.arg(0, "pointer")
        if ptr is None or "boundary_check" in call.kwargs:
            continue
        if me.mask_node(call) is not None:
            vacuous = me.vacuous_bound(ctx, call, ptr)
            if vacuous is not None:
                yield _vacuous_finding(ctx, call, *vacuous)
            continue
        if call.name == "load" and len(call.args) > 3:
            continue  # positional boundary_check
        if not off.is_fed(ctx, ptr, "program_id"):
            continue
        block_ptrs = ctx.definition_calls(ptr, "make_block_ptr", "advance")
        pids = off.feeds(ctx, ptr, "program_id")
        if block_ptrs:
            over = _block_ptr_overhang(ctx, block_ptrs)
        else:
            over = _overhang(ctx, call, ptr)
        if not pids or over is None:
            continue
        if sizes is None:
            sizes = _size_params(ctx)
        bound = over[1]
        if not sizes and bound is None:
            bound = te.rounded_grid_size(ctx, over[0]) if over[0] is not None and over[2] else None
            if bound is None:
                continue  # no size bound: the launch may be exact by construction
            over = (over[0], bound, True)  # the grid's `cdiv(q.shape[2], BLOCK)` is the size they pass
        if me.guarded(ctx, call, over, sizes):
            continue  # an `if EVEN_K:` / `if start + BLOCK <= n:` fast path: the guard is the mask
        if over[0] is not None and over[0].type != "binary_operator" and me.padded_pitch(ctx, ptr):
            continue  # unit-stride lanes in rows the host pads to a multiple (`ceil(n / 128) * 128`)
        if te.divides_by_contract(ctx, over[0], over[1], sizes):
            continue  # an assert, a wrapper's check or a divisor helper makes the size a multiple of the block
        yield _finding(ctx, call, ptr, pids, over, block_ptrs, sizes)


def _overhang(ctx, call, ptr):
    """(the lanes that can run past the data, the bound they pass, whether a grid or loop tiles
    them), or None when every arange of the address stays in range or nothing says the data is
    ragged. In range: wrapped or clamped lanes, lanes read through a loaded index (a gather), a
    whole-width arange the kernel never compares with a size, full tiles of a loop whose tail is
    handled elsewhere. Ragged: the same lanes are masked against a size elsewhere, the launch
    tiles with cdiv, or a loop steps through a runtime size."""
    pieces = [(n, key, ib.index_facts(ctx, n), origin if n.type == "call" else n) for n, key, origin in ib.summands(ctx, ptr)]
    for node, key, f, origin in pieces:
        if not f.lanes or f.clamped or f.gathered or f.whole_tiles:
            continue  # in range by construction, or a gather whose indices decide
        tiled_by = [node] if f.pid or f.loops else []
        bare = not (node.type == "binary_operator" and ctx.src.text_of(node.child_by_field_name("operator")) == "*")
        for other, key2, g, _ in pieces:
            if not bare or other is node or g.lanes or key2 != key or g.gathered or not (g.pid or g.loops):
                continue
            if g.tokens & f.extents or (g.loops and not g.pid and not g.runtime and not g.tokens):
                tiled_by.append(other)
        if any(ib.index_facts(ctx, n).whole_tiles for n in tiled_by):
            continue  # a buffer laid out in whole tiles
        if not tiled_by:
            bound = _compared_bound(ctx, call, f, same_use=True)
            if bound is not None and not _masked_twin(ctx, call, ptr):
                return origin, bound, False  # a whole-width arange the kernel masks elsewhere
            walked = te.advanced_by_block(ctx, call, ctx.src.text_of(ptr), f.extents) if ptr.type == "identifier" else None
            if walked is not None:
                return origin, walked, True  # `p += BLOCK * stride` each trip of `range(cdiv(K, BLOCK))`
            continue
        if _causal_loop(ctx, call, tiled_by) or _early_exit(ctx, call) or _masked_twin(ctx, call, ptr):
            continue
        bound = _compared_bound(ctx, call, f, same_use=False)
        if bound is not None or _ragged_tiling(ctx, call, tiled_by, f.extents):
            return origin, bound, True
    return None


def _compared_bound(ctx, call, f, same_use):
    """The text of a size the kernel compares these lanes with (`offs < n_cols`); with
    `same_use`, only where they index the same way (not `row0 + offs < n_rows` for a column). A
    comparison inside the access itself (`tl.store(p + offs, tl.where(offs < n, x, -1))`) says
    the author writes those lanes on purpose."""
    for fa, fb, b in me.upper_bounds(ctx):
        if call.node.start_byte <= b.start_byte < call.node.end_byte and _in_where(ctx, b, call.node):
            continue
        if not (fa.lanes & f.lanes or (fa.lanes and fa.extents & f.extents)) or fb.lanes or me.own_extent(ctx, fa, b):
            continue
        # a runtime size, or what a loop leaves of a compile-time one (`K - k * BLOCK_K`); not a
        # triangular mask (`o_i <= j`), nor a compile-time bound a tiling may divide exactly unless
        # the file tests whether it does (`EVEN_N = N % BLOCK_N == 0`: then it may not)
        # (`o_i < i - BC` over `tl.arange(0, BC)`: a triangle within the lanes' own block, no size)
        if not (fb.runtime or fb.gathered or (fb.loops and any(not t[0].isdigit() and t not in f.extents for t in fb.tokens))
                or te.tested(ctx, fb.tokens, f.extents)
                or (fb.tokens and not fb.loops and me.masks_same_buffer(ctx, call, b))):
            continue
        if same_use and (fa.pid or fa.loops or fa.gathered or fa.runtime):
            continue
        return ctx.src.text_of(b)
    return None


def _vacuous_finding(ctx, call, comparison, size):
    what = "tl.load" if call.name == "load" else "tl.store"
    msg = mt.shortest_needed(*(f"{what}: mask {mt.name(ctx.src.text_of(comparison), w)} bounds the lanes by their padded "
                               f"extent, not {mt.name(size, w)}: lanes past it pass" for w in (40, 24, 16)))
    return ctx.finding(ctx.src.range(call.node), msg, data={"bound": size, "access": call.name})


def _in_where(ctx, node, stop):
    wheres = {c.node.id for c in ctx.kernel.calls_named("where")}
    return any(p.id in wheres for p in off.ancestors(node, stop))


def _ragged_tiling(ctx, call, tiled_by, extents):
    """The launch tiles the program ids with a rounded-up division (also through names its
    function assigned first), or the tiling loop runs to a runtime size."""
    facts = [ib.index_facts(ctx, n) for n in tiled_by]
    axes = set().union(*(f.pid_axes for f in facts))
    blocks = {t for t in extents if not t[0].isdigit()}
    if any(te.tiles_up(ctx, launch, a, blocks) for launch in ctx.kernel.launches for a in axes):
        return True
    loops = set().union(*(f.loops for f in facts))
    for lp in call.loops:
        if lp.var in loops and lp.args:
            stop = ib.index_facts(ctx, lp.args[1] if len(lp.args) > 1 else lp.args[0])
            if stop.runtime:
                return True  # (a count loaded from memory is often padded to the block: no evidence)
    return False


def _causal_loop(ctx, call, tiled_by):
    """A loop over the tiles before the program's own (`range(0, pid * BLOCK, BLOCK)`): full tiles."""
    loops = set()
    for n in tiled_by:
        loops |= ib.index_facts(ctx, n).loops
    if not loops:
        return False
    for lp in call.loops:
        if lp.var in loops and lp.args:
            stop = lp.args[1] if len(lp.args) > 1 else lp.args[0]
            s = ib.index_facts(ctx, stop)
            if not (s.pid and not s.runtime and not s.gathered):
                return False
    return True


def _early_exit(ctx, call):
    """`if pid * BLOCK >= n: return` before the access: the author bounds the tile by hand."""
    for stmt in ctx.kernel.node.child_by_field_name("body").named_children:
        if stmt.start_byte >= call.node.start_byte:
            break
        if stmt.type != "if_statement":
            continue
        body = stmt.child_by_field_name("consequence")
        if body is None or not any(c.type == "return_statement" for c in body.named_children):
            continue
        f = ib.index_facts(ctx, stmt.child_by_field_name("condition"))
        if f.pid and (f.runtime or f.gathered):
            return True
    return False


def _masked_twin(ctx, call, ptr):
    """A loop of full tiles with its tail peeled off: the same offsets are masked in another access
    outside this access's loop."""
    if not call.loops:
        return False
    kinds = off.param_kinds(ctx)
    key = _offsets_text(ctx, ptr, kinds)
    inner = call.loops[-1].node
    for other in ctx.kernel.calls_named("load", "store"):
        if other is call or me.mask_node(other) is None:
            continue
        if inner.start_byte <= other.node.start_byte < inner.end_byte:
            continue
        p = other.arg(0, "pointer")
        if p is not None and _offsets_text(ctx, p, kinds) == key:
            return True
    return False


def _offsets_text(ctx, ptr, kinds):
    return "".join(t for t in re.findall(r"\w+|\S", ctx.src.text_of(ptr)) if t not in kinds.pointers)


def _block_ptr_overhang(ctx, block_ptrs):
    """A block pointer overhangs where an offset follows the program id or a loop and the
    matching dimension of its shape is a runtime size; (None, bound) then."""
    for bp in block_ptrs:
        if bp.name != "make_block_ptr":
            continue
        shape, offsets = bp.arg(1, "shape"), bp.arg(3, "offsets")
        if shape is None or offsets is None or shape.type not in ("tuple", "list") or offsets.type not in ("tuple", "list"):
            return None, None, True
        advanced = any(c.name == "advance" for c in block_ptrs)
        for dim, offset in zip(shape.named_children, offsets.named_children):
            fd, fo = ib.index_facts(ctx, dim), ib.index_facts(ctx, offset)
            if (fd.runtime or fd.gathered) and (fo.pid or fo.loops or advanced):
                return None, ctx.src.text_of(dim), True
    return None


def _finding(ctx, call, ptr, pids, over, block_ptrs, sizes):
    src = ctx.src
    what = "tl.load" if call.name == "load" else "tl.store"
    lane_node, bound, tiled = over
    bound_text = bound if bound is not None else ", ".join(sizes)
    if lane_node is None:
        msg = f"{what} of a block pointer without boundary_check overhangs {mt.name(bound_text)} on the last block"
    else:
        where = "on the last block" if tiled else "(other accesses mask them)"
        msg = mt.shortest_needed(*(f"unmasked {what}: lanes of {mt.name(src.text_of(lane_node), w)} can pass "
                                   f"{mt.name(bound_text, w)} {where}" for w in (32, 24, 16)))
    related = [Related(src.range(pids[0].node), "the program id the offsets come from")]
    p = ctx.kernel.param(sizes[0]) if sizes else None
    if p is not None and bound is None:
        related.append(Related(p.range, "the size bound"))
    fix = None if block_ptrs else _fix(ctx, call, ptr, bound, sizes)
    edits, title = fix if fix else (None, None)
    return ctx.finding(src.range(call.node), msg, fix=edits, fix_title=title, related=related,
                       data={"sizes": sizes, "bound": bound, "access": call.name})


def _fix(ctx, call, ptr, bound, sizes):
    """`p + offs` with 1-D offsets and one size bound → `mask=offs < n` (reusing a `mask`
    variable of the kernel that already says exactly that). The bound is the parameter the kernel
    compares these offsets with, else its only size parameter."""
    src = ctx.src
    if bound is not None and ctx.kernel.param(bound) is not None and not ctx.kernel.assignments.get(bound):
        n = bound
    elif bound is None and len(sizes) == 1:
        n = sizes[0]
    else:
        return None
    expr = off.strip_parens(ptr)
    if expr is None or expr.type != "binary_operator" or src.text_of(expr.child_by_field_name("operator")) != "+":
        return None
    kinds = off.param_kinds(ctx)
    sides = [off.strip_parens(expr.child_by_field_name("left")), off.strip_parens(expr.child_by_field_name("right"))]
    if any(x is None or x.type != "identifier" for x in sides):
        return None
    names = [src.text_of(x) for x in sides]
    offs_nodes = [x for x, nm in zip(sides, names) if nm not in kinds.pointers]
    if len(offs_nodes) != 1:
        return None
    leaf = offs_nodes[0]
    if not ctx.definition_calls(leaf, "arange") or any(t.ndim for t in off.pointer_terms(ctx, leaf)):
        return None
    offs = src.text_of(leaf)
    cond = f"{offs} < {n}"
    mask_expr = cond
    for name, defs in ctx.kernel.assignments.items():
        if len(defs) == 1 and defs[0].value is not None and src.text_of(defs[0].value).replace(" ", "") == cond.replace(" ", "") \
                and defs[0].node.start_byte < call.node.start_byte:
            mask_expr = name
            break
    args = call.node.child_by_field_name("arguments")
    last = [a for a in (args.named_children if args is not None else []) if a.type != "comment"]
    if not last:
        return None
    pos = src.pos(last[-1].end_point)
    return [TextEdit(Range(pos, pos), f", mask={mask_expr}")], f"add mask={mask_expr}"
