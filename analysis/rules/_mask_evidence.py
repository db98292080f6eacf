"""What a kernel's masks and the host's padding say about an access's lanes: TL002's evidence.

Not a rule (the registry only loads `tl*` modules). Beside `_tiling_evidence` (how a block tiles
a size), this answers:

- which upper bounds the kernel compares lanes with (`offs < n`), and whether one sits in the
  mask of another access to the same buffer (the author masks those lanes of it there);
- whether a mask bounds lanes only by their own extent (`tl.arange(0, E) < E`) where the launch
  rounds `E` up from the real size (`E = triton.next_power_of_2(d)`): a mask that masks nothing;
- whether an `if` around an access bounds its lanes (a fast-path flag, the size, the block) or
  only switches a feature on (`if HAS_BIAS:`) or tests other lanes or tile coordinates;
- whether the host pads a buffer's rows to a multiple (`seqlen_rounded = math.ceil(seqlen / 128)
  * 128` passed as the row pitch): the last block's overhang lands in the padding.
"""

from __future__ import annotations

import re

from ..source import walk
from . import _index_bounds as ib
from . import _offsets as off
from . import _tiling_evidence as te


def mask_node(call):
    """The `mask` argument of a tl.load / tl.store call, or None."""
    if call.name == "load":
        return call.arg(1, "mask")
    return call.arg(2, "mask")


def masks_same_buffer(ctx, call, bound):
    """`bound` sits in the mask of another access to the same pointer parameters: the author
    masks these lanes of this buffer there (`offs < SEQLEN`, a compile-time size too), so an
    unmasked reload of them reads past it."""
    kinds = off.param_kinds(ctx)
    bufs = ctx.depends_on(call.arg(0, "pointer")) & kinds.pointers
    for other in ctx.kernel.calls_named("load", "store"):
        m = mask_node(other)
        if other is call or m is None or not bufs or ctx.depends_on(other.arg(0, "pointer")) & kinds.pointers != bufs:
            continue
        if _in_mask(ctx, m, bound):
            return True
    return False


def own_extent(ctx, fa, bound):
    """`tl.arange(0, E) < E`: lanes compared with their own extent, a bound that bounds nothing."""
    return not (fa.pid or fa.loops) and ctx.src.text_of(bound) in fa.extents


def _in_mask(ctx, mask, node):
    parts = [mask] + [a.value for n in ctx.depends_on(mask) for a in ctx.kernel.assignments.get(n, ()) if a.value is not None]
    return any(p.start_byte <= node.start_byte < p.end_byte for p in parts)


def _comparisons(ctx):
    """(x, n) for every `x < n`, `x <= n` (or `n > x`) in the kernel, once."""
    cached = ctx.kernel.__dict__.get("_tl_comparisons")
    if cached is not None:
        return cached
    out = []
    for node in walk(ctx.kernel.node):
        if node.type != "comparison_operator" or len(node.named_children) != 2:
            continue
        ops = [c for c in node.children if not c.is_named]
        op = ctx.src.text_of(ops[0]) if ops else ""
        a, b = node.named_children
        if op in (">", ">="):
            a, b = b, a
        elif op not in ("<", "<="):
            continue
        out.append((a, b))
    ctx.kernel.__dict__["_tl_comparisons"] = out
    return out


def upper_bounds(ctx):
    """(facts of x, facts of n, n) for every `x < n`, `x <= n` (or `n > x`) in the kernel, once."""
    cached = ctx.kernel.__dict__.get("_tl002_upper_bounds")
    if cached is None:
        cached = [(ib.index_facts(ctx, a), ib.index_facts(ctx, b), b) for a, b in _comparisons(ctx)]
        ctx.kernel.__dict__["_tl002_upper_bounds"] = cached
    return cached


def vacuous_bound(ctx, call, ptr):
    """A mask that bounds whole-width lanes `tl.arange(0, E)` only by `E` itself, where the launch
    passes `E = next_power_of_2(d)`: it masks nothing, and the lanes past `d` reach the next row.
    (the comparison, `d`), or None."""
    pads = _padded_extents(ctx)
    if not pads:
        return None  # the common case, decided once per kernel from its aranges and launches
    mask = mask_node(call)
    if not any(ctx.src.text_of(b) in pads and _in_mask(ctx, mask, b) for _a, b in _comparisons(ctx)):
        return None
    lanes = ib.index_facts(ctx, ptr).lanes
    mine = [(fa, b) for fa, _fb, b in upper_bounds(ctx) if fa.lanes & lanes and _in_mask(ctx, mask, b)]
    for fa, b in mine:
        extent = ctx.src.text_of(b)
        if not own_extent(ctx, fa, b) or any(fo.lanes & fa.lanes and ctx.src.text_of(o) != extent for fo, o in mine) \
                or any(extent in te.idents(ctx.src.text_of(n) + " " + " ".join(k)) for n, k, _ in ib.summands(ctx, ptr)
                       if not ib.index_facts(ctx, n).lanes):
            continue  # (rows laid out `E` wide, `p + row * E + offs`: the padded lanes stay in the row)
        size = _padded_extents(ctx).get(extent)
        if size is not None:
            return b.parent, size
    return None


def _padded_extents(ctx) -> dict:
    """arange extent → the host size the launches round it up from, for the kernel's constexpr
    arange extents (`tl.arange(0, HEAD_DIM_P2)` with `HEAD_DIM_P2 = next_power_of_2(head_dim)`)."""
    cached = ctx.kernel.__dict__.get("_tl_padded_extents")
    if cached is None:
        cached = {}
        text = ctx.src.text_of(ctx.kernel.node)
        for c in ctx.kernel.calls_named("arange"):
            end = c.arg(1, "end")
            p = ctx.kernel.param(ctx.src.text_of(end)) if end is not None and end.type == "identifier" else None
            if p is not None and p.is_constexpr and p.name not in cached and \
                    re.search(rf"<=?\s*{p.name}\b|\b{p.name}\s*>", text) and (size := padded_extent(ctx, p.name)):
                cached[p.name] = size
        ctx.kernel.__dict__["_tl_padded_extents"] = cached
    return cached


# `math.ceil(n / 128) * 128`, `triton.cdiv(n, B) * B`, `(n + B - 1) // B * B`: a size rounded up to a multiple.
_PADDED = re.compile(r"(ceil|cdiv)\s*\(.*\)\s*\*\s*\w+|//\s*\w+\s*\)?\s*\*\s*\w+")


def _launch_values(ctx, name) -> list[str]:
    """For each visible launch, the host text it passes for parameter `name` with the names behind
    it; [] where a launch does not show it."""
    out = []
    for launch in ctx.kernel.launches:
        node = te.passed_node(ctx, launch, name)
        if node is None:  # past a `*splat`: an argument spelled as the parameter is still it
            node = next((a for a in launch.args if a.type == "identifier" and ctx.src.text_of(a) == name), None)
        if node is None:
            return []
        out.append(te._expand(ctx.src, node, te._wrapper_assigns(ctx.src, launch)))
    return out


def padded_pitch(ctx, ptr) -> bool:
    """The address is `buf + row * pitch + offs` where every launch passes for `pitch` a size the
    host rounds up to a multiple (`seqlen_rounded = math.ceil(seqlen / 128) * 128`): the buffer's
    rows are padded for the block's overhang, which lands in the padding."""
    for node, _key, _origin in ib.summands(ctx, ptr):
        if node.type != "binary_operator" or ctx.src.text_of(node.child_by_field_name("operator")) != "*":
            continue
        sides = [te._strip(node.child_by_field_name("left")), te._strip(node.child_by_field_name("right"))]
        for row, pitch in (sides, sides[::-1]):
            if pitch is None or pitch.type != "identifier" or ib.index_facts(ctx, row).lanes:
                continue
            p = ctx.kernel.param(ctx.src.text_of(pitch))
            values = _launch_values(ctx, p.name) if p is not None and not p.is_constexpr else []
            if values and all(_PADDED.search(v) for v in values):
                return True
    return False


def padded_extent(ctx, name) -> str | None:
    """The host size every launch rounds up to a power of two for constexpr `name`
    (`HEADDIM = triton.next_power_of_2(headdim)`): lanes of `tl.arange(0, HEADDIM)` pass it unless
    masked against it. None where a launch passes something else or none shows."""
    values = _launch_values(ctx, name)
    sizes = [re.search(r"next_power_of_2\s*\(\s*([^()]+?)\s*\)", v) for v in values]
    if any("min(" in v for v in values):
        return None  # `min(chunk, next_power_of_2(T))`: a tile, not a padded dimension
    return sizes[0].group(1) if sizes and all(sizes) else None


def guarded(ctx, call, over, sizes):
    """An `if` around the access bounds these lanes: its condition reads their bound or block
    (`if start + BLOCK <= n:`), a heuristic, or a compile-time flag of a fast path (an `if EVEN_K:`
    with an `else`, or one a launch sets by a divisibility test). A flag that only switches a
    feature on (`if ADD_MASK:`), or a test of other lanes (`if SPLIT_P2 > split_k:` around an
    access whose head-dim lanes overhang), bounds nothing."""
    guards = off.enclosing_conditions(call.node)
    if not guards:
        return False
    lane_node, bound, _ = over
    related = te.idents(bound) if bound is not None else set(sizes)
    extents = ib.index_facts(ctx, lane_node).extents if lane_node is not None else set()
    names = set().union(*(ctx.depends_on(g) for g in guards))
    if te.wrong_flag(ctx, lane_node, names):
        return False
    arange_ends = {ctx.src.text_of(c.arg(1, "end")) for c in ctx.kernel.calls_named("arange") if c.arg(1, "end") is not None}
    constexpr = off.param_kinds(ctx).constexpr
    tile_names = off.derived_names(ctx, "program_id")
    for g in guards:
        deps = _reads(ctx, g, tile_names)
        if deps & (related | set(ctx.kernel.heuristics)):
            return True
        if deps and deps <= extents:
            return True  # `if BLOCK_M == 1:`: a specialisation of the lanes' own block
        flags = (deps & constexpr) - arange_ends if _bare_flag(g) else set()
        if flags and (_has_alternative(g) or any(_set_by_divisibility(ctx, f) for f in flags)):
            return True
    return False


def _reads(ctx, node, tile_names):
    """The names a condition reads, through local assignments except the program's tile
    coordinates: `pid_m` of a grouped order reads `M` to count tiles, yet a test of `pid_m`
    against `pid_n` (a causal tile skipped) bounds no lane by `M`."""
    out, todo = set(), list(ctx.names_in(node))
    while todo:
        n = todo.pop()
        if n in out:
            continue
        out.add(n)
        if n in tile_names:
            continue
        for a in ctx.kernel.assignments.get(n, ()):
            if a.value is not None:
                todo.extend(ctx.names_in(a.value))
    return out


def _bare_flag(cond):
    """`if EVEN_K:`, `if not EVEN_K:`, `if EVEN_M and EVEN_N:`: flags, not a comparison."""
    cond = off.strip_parens(cond)
    if cond is None:
        return False
    if cond.type == "identifier":
        return True
    if cond.type in ("not_operator", "boolean_operator"):
        return all(_bare_flag(c) for c in cond.named_children)
    return False


def _has_alternative(cond):
    """The `if` (or conditional expression) whose condition this is has an `else`/`elif` path."""
    stmt = cond.parent
    if stmt is None:
        return False
    if stmt.type == "conditional_expression" or stmt.type == "elif_clause":
        return True
    return stmt.type == "if_statement" and stmt.child_by_field_name("alternative") is not None


def _set_by_divisibility(ctx, flag: str) -> bool:
    """A launch passes `flag` a divisibility test (`EVEN_K=K % BK == 0`): a fast-path flag."""
    p = ctx.kernel.param(flag)
    for launch in ctx.kernel.launches:
        node = launch.kwargs.get(flag)
        if node is None and p is not None and p.index < len(launch.args):
            node = launch.args[p.index]
        if node is not None and re.search(r"%[^=!]*[!=]=\s*0", ctx.src.text_of(node)):
            return True
    return False
