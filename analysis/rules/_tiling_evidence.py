"""What the host code and the loops say about how a block tiles a size: TL002's evidence.

Not a rule (the registry only loads `tl*` modules). Three questions, from the tree alone:

- does a launch's grid tile an axis with a rounded-up division (`triton.cdiv(n, BLOCK)`,
  `(n + BLOCK - 1) // BLOCK`), also through names the launching function assigned first
  (`grid = (triton.cdiv(M, BM),)`, `tiles = cdiv(M, BM) * cdiv(N, BN)`, `grid = (tiles - done,)`);
- does the file guarantee that a size is a multiple of a block: a divisibility test
  `n % BLOCK == 0` (an `assert`, an `if` that raises or returns, a helper the wrapper asserts, a
  heuristic, a `tl.static_assert`) that names the size, or what a launch passes for it, beside the
  block, or what a launch passes for it;
- is a pointer advanced by the block on every trip of a loop that walks a runtime size in blocks
  (`for _ in range(tl.cdiv(K, BLOCK_K)): ...; w_ptrs += BLOCK_K * stride`), so that the last
  trip's block overhangs unless the size divides;
- does the file test anywhere whether a compile-time size divides (`EVEN_N = N % BLOCK_N == 0`),
  and does a launch set a fast-path flag by a test of another divisor than the block
  (`EVEN_K=(K % 2 == 0)` for a BLOCK_K loop).
"""

from __future__ import annotations

import re

from ..launches import bound_arguments
from ..source import captures
from . import _index_bounds as ib

_IDENT = re.compile(r"[A-Za-z_]\w*")
_CEIL_DIV = re.compile(r"cdiv\s*\(|-\s*1\s*\)\s*//|ceil")
_MAX_DEPTH = 4


def idents(text: str) -> set[str]:
    return set(_IDENT.findall(text))


def _strip(node):
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def _wrapper_assigns(src, launch) -> dict:
    """name → value nodes the launching function assigns before the launch."""
    out: dict = {}
    body = launch.wrapper.child_by_field_name("body") if launch.wrapper is not None else None
    for n in captures(body, "(assignment) @a", "a") if body is not None else []:
        if n.start_byte >= launch.node.start_byte:
            break
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if left is not None and left.type == "identifier" and right is not None:
            out.setdefault(src.text_of(left), []).append(right)
    for name, text in _attribute_values(src).items():  # `ctx.grid = grid` saved by an autograd forward
        if name not in out:
            out[name] = [text]
    return out


def _attribute_values(src) -> dict:
    """attribute name → the text of what the file assigns to it (`ctx.grid = grid`, `self.grid
    = ...`), with the names behind it in the function that assigns it."""
    memo = src.memo_for("_tl_attribute_values")
    if "out" in memo:
        return memo["out"]
    out: dict = {}
    for a in captures(src.root, "(assignment left: (attribute) right: (_)) @a", "a"):
        fn = a.parent
        while fn is not None and fn.type != "function_definition":
            fn = fn.parent
        if fn is None:
            continue
        local: dict = {}
        for n in captures(fn, "(assignment left: (identifier) @l right: (_)) @x", "x"):
            if n.start_byte < a.start_byte:
                local.setdefault(src.text_of(n.child_by_field_name("left")), []).append(n.child_by_field_name("right"))
        name = src.text_of(a.child_by_field_name("left").child_by_field_name("attribute"))
        out.setdefault(name, _expand(src, a.child_by_field_name("right"), local))
    memo["out"] = out
    return out


def _expand(src, node, assigns, depth=0, seen=frozenset()) -> str:
    """The text of a host expression followed by what its names were assigned, a few levels deep."""
    text = src.text_of(node)
    if depth >= _MAX_DEPTH:
        return text
    parts = [text]
    for name in sorted(idents(text) - seen):
        for right in assigns.get(name, ()):
            parts.append(right if isinstance(right, str) else _expand(src, right, assigns, depth + 1, seen | {name}))
    return " ".join(parts)


def grid_axes(ctx, launch) -> list[tuple[str, str]]:
    """Per grid axis, (the text written at the launch, that text with the names behind it); []
    when unknown. A grid named in the launching function (`grid = (...)`, `grid = lambda META:
    (...)`) is looked up."""
    memo = ctx.kernel.__dict__.setdefault("_tl_grid_axes", {})
    if launch.node.id in memo:
        return memo[launch.node.id]
    src = ctx.src
    assigns = _wrapper_assigns(src, launch)
    node = _strip(launch.grid)
    named = node is not None and node.type == "identifier"
    if named and len(assigns.get(src.text_of(node), ())) == 1 and not isinstance(assigns[src.text_of(node)][0], str):
        node = _strip(assigns[src.text_of(node)][0])
    if node is not None and node.type == "lambda":
        node = _strip(node.child_by_field_name("body"))
    out = []
    if node is not None and node.type in ("tuple", "list"):
        out = [("" if named else src.text_of(c), _expand(src, c, assigns))
               for c in node.named_children if c.type != "comment"]
    memo[launch.node.id] = out
    return out


def rounded_grid_size(ctx, lane_node) -> str | None:
    """The host size a launch's grid divides with `cdiv` by the block of these lanes, on the axis
    of their program id (`grid = (triton.cdiv(q.shape[2], BLOCK), ...)`): the tiles overhang it
    even where the kernel is given no size. None where no launch shows one."""
    facts = ib.index_facts(ctx, lane_node)
    blocks = passed_for(ctx, {t for t in facts.extents if not t[0].isdigit()})
    for launch in ctx.kernel.launches:
        axes = grid_axes(ctx, launch)
        for axis in facts.pid_axes:
            if 0 <= axis < len(axes):
                for size, block in _CDIV_ARGS.findall(axes[axis][1]):
                    if idents(block) & blocks and not size.strip().isdigit():  # `cdiv(512, bd)`: a fixed size
                        return " ".join(size.split())
    return None


_CDIV_ARGS = re.compile(r"cdiv\s*\(\s*([^,()]+(?:\([^()]*\))?[^,()]*),\s*([^()]+?)\s*\)")


def rounds_up(text: str) -> bool:
    return bool(_CEIL_DIV.search(text))


def tiles_up(ctx, launch, axis: int, blocks) -> bool:
    """Whether grid axis `axis` of `launch` rounds a size up: written at the launch (`cdiv` or
    `(n + B - 1) // B` in the grid itself), or behind the names it reads, then as a `cdiv` by the
    block of these lanes (what the launch passes for it), not by another axis' block."""
    axes = grid_axes(ctx, launch)
    if not 0 <= axis < len(axes):
        return False
    raw, expanded = axes[axis]
    if rounds_up(raw):
        return True
    block_names = passed_for(ctx, blocks)
    return any(b & block_names for _, b in cdiv_operands(expanded))


def cdiv_operands(text: str) -> list[tuple[set, set]]:
    """(names of n, names of BLOCK) for each `cdiv(n, BLOCK)` in a host expression's text."""
    return [(idents(a), idents(b)) for a, b in _CDIV_ARGS.findall(text)]


def divisibility_tests(ctx) -> list[tuple[set, set, tuple | None]]:
    """(names of n, names of BLOCK, span) for every `n % BLOCK == 0` / `!= 0` / `not n % BLOCK`
    of the file that decides: in an `assert`, in an `if` that raises or returns (span: the rest of
    its function, None at module level), in an `if` whose body launches (span: the body), or returned by a
    helper that one of those calls. A test kept as a value (`EVEN_K=K % BK == 0`, a heuristic, an
    `if` that only sets a flag) is a flag, not a guarantee: the kernel's `if EVEN_K:` is its guard."""
    module = ctx.module
    cached = module.__dict__.get("_tl_divisibility_tests")
    if cached is not None:
        return cached
    src = ctx.src
    deciding = [(n, _rest_of_function(n)) for n in captures(src.root, "(assert_statement) @a", "a")]
    for kind in ("if_statement", "elif_clause"):
        for n in captures(src.root, f"({kind}) @s", "s"):
            cond, body = n.child_by_field_name("condition"), n.child_by_field_name("consequence")
            if cond is None or body is None:
                continue
            exits = any(c.type in ("raise_statement", "return_statement") for c in body.named_children)
            deciding.append((cond, _rest_of_function(n) if exits else (body.start_byte, body.end_byte)))
    callers: dict = {}
    for node, span in deciding:
        for name in idents(src.text_of(node)):
            callers.setdefault(name, []).append(span)
    called_names = {src.text_of(f) for f in captures(src.root, "(call function: (identifier) @f)", "f")}
    out = []
    for mod in captures(src.root, '(binary_operator operator: "%") @m', "m"):
        left, right = mod.child_by_field_name("left"), mod.child_by_field_name("right")
        if left is None or right is None or not _zero_test(src, mod):
            continue
        spans = [span for node, span in deciding if node.start_byte <= mod.start_byte < node.end_byte]
        if not spans:
            fname = _returned_by(src, mod)
            spans = callers.get(fname, [])
            if fname and not spans and fname not in called_names:
                spans = [None]  # a predicate the file exports for its callers (`..._supported(M, N, K)`)
        for span in spans:
            out.append((idents(src.text_of(left)), idents(src.text_of(right)), span))
    out += _divisor_helpers(src)
    module.__dict__["_tl_divisibility_tests"] = out
    return out


def _rest_of_function(node):
    """Where an assert (or an `if` that raises) holds: from it to the end of its function; None at
    module level."""
    fn = node.parent
    while fn is not None and fn.type != "function_definition":
        fn = fn.parent
    return (node.start_byte, fn.end_byte, "after") if fn is not None else None


def _launch_sites(ctx) -> list[int]:
    """Where the kernel's launches happen: each launch, and each call of the function it sits in
    (a wrapper that asserts, then calls the launching helper)."""
    cached = ctx.kernel.__dict__.get("_tl_launch_sites")
    if cached is not None:
        return cached
    sites = ctx.kernel.__dict__["_tl_launch_sites"] = [lc.node.start_byte for lc in ctx.kernel.launches]
    names = {ctx.src.text_of(lc.wrapper.child_by_field_name("name")) for lc in ctx.kernel.launches if lc.wrapper is not None}
    for f in captures(ctx.src.root, "(call function: (_) @f)", "f") if names else []:
        if ctx.src.text_of(f).split(".")[-1] in names:
            sites.append(f.start_byte)
    return sites


def _divisor_helpers(src) -> list:
    """`unroll = highest_divisor(n_cols, 256)` where the helper returns `d` only under `if n % d ==
    0:`: `unroll` divides `n_cols` by construction (a test of n_cols by unroll, holding everywhere)."""
    helpers: dict = {}
    for fn in captures(src.root, "(function_definition) @f", "f"):
        params = fn.child_by_field_name("parameters")
        names = [_IDENT.match(src.text_of(p)).group(0) for p in (params.named_children if params is not None else [])
                 if _IDENT.match(src.text_of(p))]
        for n in captures(fn, "(if_statement) @s", "s"):
            cond, body = n.child_by_field_name("condition"), n.child_by_field_name("consequence")
            rets = [c for c in (body.named_children if body is not None else []) if c.type == "return_statement"]
            m = re.match(r"^\(?\s*(\w+)\s*%\s*(\w+)\s*\)?\s*==\s*0\b", src.text_of(cond)) if cond is not None else None
            if m and rets and m.group(1) in names and src.text_of(rets[0]).split()[-1] == m.group(2):
                helpers[src.text_of(fn.child_by_field_name("name"))] = names.index(m.group(1))
    out = []
    if not helpers:
        return out
    for a in captures(src.root, "(assignment left: (identifier) @x right: (call)) @a", "a"):
        call = a.child_by_field_name("right")
        fname, args = src.text_of(call.child_by_field_name("function")), call.child_by_field_name("arguments")
        idx = helpers.get(fname)
        pos = [c for c in args.named_children if c.type != "keyword_argument"] if args is not None else []
        if idx is not None and idx < len(pos):
            out.append((idents(src.text_of(pos[idx])), {src.text_of(a.child_by_field_name("left"))}, None))
    return out


def _zero_test(src, mod) -> bool:
    parent = mod.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None:
        return False
    if parent.type == "not_operator":
        return True
    return parent.type == "comparison_operator" and any(
        c.id != mod.id and src.text_of(c).strip() == "0" for c in parent.named_children)


def _returned_by(src, mod) -> str | None:
    """The name of the function whose `return` holds `mod`."""
    node = mod.parent
    while node is not None and node.type != "return_statement":
        node = node.parent
    while node is not None and node.type != "function_definition":
        node = node.parent
    name = node.child_by_field_name("name") if node is not None else None
    return src.text_of(name) if name is not None else None


def tested(ctx, sizes, blocks) -> bool:
    """Whether the file tests anywhere (a flag, a heuristic, a pruner) if one of these compile-time
    sizes is a multiple of one of these blocks: the author expects it may not be."""
    sizes, blocks = _loose(t for t in sizes if not t[0].isdigit()), _loose(t for t in blocks if not t[0].isdigit())
    if not sizes or not blocks:
        return False
    cached = ctx.module.__dict__.get("_tl_all_mod_tests")
    if cached is None:
        src = ctx.src
        cached = [(_loose(idents(src.text_of(m.child_by_field_name("left")))), _loose(idents(src.text_of(m.child_by_field_name("right")))))
                  for m in captures(src.root, '(binary_operator operator: "%") @m', "m")
                  if _zero_test(src, m) and m.child_by_field_name("left") is not None and m.child_by_field_name("right") is not None]
        ctx.module.__dict__["_tl_all_mod_tests"] = cached
    return any(a & sizes and b & blocks for a, b in cached)


def passed_node(ctx, launch, name):
    """What `launch` passes for the kernel parameter `name`, by keyword or position; None if unseen."""
    return bound_arguments(ctx.kernel, launch).get(name)


def passed_for(ctx, names) -> set[str]:
    """The names themselves and the names in what every visible launch passes for them."""
    out = set(names)
    for name in names:
        for launch in ctx.kernel.launches:
            if (node := passed_node(ctx, launch, name)) is not None:
                out |= idents(ctx.src.text_of(node))
    return out


def guaranteed(ctx, sizes, blocks) -> bool:
    """Whether the file tests that one of `sizes` is a multiple of one of `blocks` (by their names
    in the kernel or by what the launches pass for them)."""
    if not sizes or not blocks:
        return False
    size_names, block_names = passed_for(ctx, sizes), passed_for(ctx, blocks)
    for launch in ctx.kernel.launches:  # `cdiv(n, BLOCK)` in the grid names the host's size and block
        for _, axis in grid_axes(ctx, launch):
            for a, b in cdiv_operands(axis):
                if b & block_names:
                    size_names |= a
    launches = _launch_sites(ctx)
    size_names, block_names = _loose(size_names), _loose(block_names)
    # a kernel launched nowhere in sight: an assert's scope cannot be checked, take it at its word
    return any(_loose(a) & size_names and _loose(b) & block_names
               and (span is None or (not launches and len(span) == 3) or any(span[0] <= at < span[1] for at in launches))
               for a, b, span in divisibility_tests(ctx))


def _loose(names) -> set[str]:
    """Names compared as a module constant and a parameter spell them: `_BLOCK_K` is `BLOCK_K`."""
    return {n.lstrip("_").lower() for n in names}


def advanced_by_block(ctx, call, ptr_name: str, extents) -> str | None:
    """`ptr += BLOCK * stride` in a loop around `call` whose trips walk a runtime size in steps of
    the block (`range(tl.cdiv(K, BLOCK))`, `range(0, K, BLOCK)`): the last trip overhangs. The
    size's name, or None."""
    kinds_runtime = {p.name for p in ctx.kernel.params if not p.is_constexpr}
    src = ctx.src
    for lp in call.loops:
        if not lp.args:
            continue
        texts = [src.text_of(a) for a in lp.args]
        if len(texts) == 3:  # `range(0, K, BLOCK_K)`, `range(K, 0, -BLOCK_K)`: steps of the block over a size
            # (also through the names the kernel assigned the bounds: `hi = N_CTX + P_SEQ`)
            walked = idents(texts[0] + " " + texts[1]) & kinds_runtime
            if not walked and not any(ib.index_facts(ctx, a).gathered for a in lp.args[:2]):
                walked = (ctx.depends_on(lp.args[0]) | ctx.depends_on(lp.args[1])) & kinds_runtime
            sizes = walked if idents(texts[2]) & set(extents) else set()
        else:
            stop = texts[-1]
            sizes = idents(stop) & kinds_runtime if rounds_up(stop) and idents(stop) & set(extents) else set()
        if not sizes:
            continue
        for a in ctx.kernel.assignments.get(ptr_name, ()):
            if a.augmented and a.node is not None and lp.node.start_byte <= a.node.start_byte < lp.node.end_byte \
                    and a.value is not None and idents(src.text_of(a.value)) & set(extents):
                return ", ".join(sorted(sizes))
    return None


def flag_misses_block(ctx, flag: str, blocks) -> bool:
    """A launch passes `flag` a divisibility test by something other than the block of these lanes
    (`EVEN_K=(K % 2 == 0)` for a BLOCK_K loop): its `if EVEN_K:` fast path reads past the size."""
    block_names = _loose(passed_for(ctx, blocks))
    p = ctx.kernel.param(flag)
    for launch in ctx.kernel.launches:
        node = launch.kwargs.get(flag)
        if node is None and p is not None and p.index < len(launch.args):
            node = launch.args[p.index]
        divisors = re.findall(r"%\s*([^=!)]+?)\s*[!=]=\s*0", ctx.src.text_of(node)) if node is not None else []
        if divisors and not any(_loose(idents(d)) & block_names for d in divisors):
            return True
    return False


def _blocks(ctx, lane_node) -> set[str]:
    return {t for t in ib.index_facts(ctx, lane_node).extents if not t[0].isdigit()} if lane_node is not None else set()


def wrong_flag(ctx, lane_node, guard_names) -> bool:
    """The guard's flag is a divisibility test by another number than the lanes' block."""
    blocks = _blocks(ctx, lane_node)
    return bool(blocks) and any(flag_misses_block(ctx, g, blocks) for g in guard_names)


def divides_by_contract(ctx, lane_node, bound, sizes) -> bool:
    """The file guarantees that the size these lanes pass (the bound, else the kernel's sizes) is a
    multiple of their block: the unmasked access is then exact by contract."""
    blocks = _blocks(ctx, lane_node)
    named = idents(bound) & {p.name for p in ctx.kernel.params} if bound is not None else set()
    return guaranteed(ctx, named or set(sizes), blocks)
