"""Shared reading of pointer and offset expressions for rules TL002–TL008.

Not a rule (the registry only loads `tl*` modules). It answers, from the tree alone:
which parameters are pointers and which are runtime integers, which additive terms make up a
pointer expression (through local assignments and `ptr += ...`), and, for each term, which
`tl.arange` it carries, on which axis of a 2-D tile (`offs[:, None]` → 0, `offs[None, :]` → 1),
and what it is multiplied by.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The rules that read offsets reach the shared tree helpers through this module.
from ._tree import (  # noqa: F401
    ancestors,
    enclosing_conditions,
    line_of,
    method_call,
    names_in_text,
    strip_parens,
)

MEMORY_OPS = ("load", "store")
ATOMIC_OPS = ("atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
              "atomic_xchg", "atomic_cas")
_PTR_NAME = re.compile(r"(^|_)ptrs?$|ptr$|^ptr|Ptr", re.IGNORECASE)
_MAX_DEPTH = 12


def _memo(ctx, key, compute):
    """Per-kernel cache shared by the rules (a kernel's model is rebuilt when its text changes)."""
    memo = ctx.kernel.__dict__.setdefault("_tl_offsets_memo", {})
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def feeds(ctx, node, *names):
    """The tl calls named `names` that feed `node`, directly or through local assignments (like
    `ctx.definition_calls`, over the cached token closure of `depends`)."""
    def compute():
        spans = [(node.start_byte, node.end_byte)]
        for n in depends(ctx, node):
            for a in ctx.kernel.assignments.get(n, ()):
                r = rhs_of(a)
                if r is not None:
                    spans.append((r.start_byte, r.end_byte))
        return [c for c in ctx.kernel.calls
                if c.name in names and any(s <= c.node.start_byte < e for s, e in spans)]
    return _memo(ctx, ("feeds", node.id, names), compute)


_IDENT = re.compile(r"[A-Za-z_]\w*")


def derived_names(ctx, call_name: str) -> frozenset:
    """Local names whose value (transitively) comes from a `tl.<call_name>` call; one pass over
    the kernel's assignments instead of a tree walk per question."""
    def compute():
        starts = [c.node.start_byte for c in ctx.kernel.calls if c.name == call_name]
        out = {name for name, defs in ctx.kernel.assignments.items()
               if any((r := rhs_of(a)) is not None and any(r.start_byte <= b < r.end_byte for b in starts) for a in defs)}
        rhs = _rhs_tokens(ctx)
        changed = True
        while changed:
            changed = False
            for name, toks in rhs.items():
                if name not in out and toks & out:
                    out.add(name)
                    changed = True
        return frozenset(out)
    return _memo(ctx, ("derived", call_name), compute)


def is_fed(ctx, node, call_name: str) -> bool:
    """Whether `node` reads a `tl.<call_name>` result, directly or through local names."""
    if node is None:
        return False
    for c in ctx.kernel.calls:
        if c.name == call_name and node.start_byte <= c.node.start_byte < node.end_byte:
            return True
    return bool(set(_IDENT.findall(ctx.src.text_of(node))) & derived_names(ctx, call_name))


def _rhs_tokens(ctx) -> dict:
    def compute():
        out = {}
        for name, defs in ctx.kernel.assignments.items():
            toks = set()
            for a in defs:
                r = rhs_of(a)
                if r is not None:
                    toks.update(_IDENT.findall(ctx.src.text_of(r)))
            out[name] = toks
        return out
    return _memo(ctx, ("rhs_tokens",), compute)


def depends(ctx, node) -> set:
    """Names `node` reads, directly or through local assignments (a token closure: attribute
    names such as `tl` or `int64` are included, which the callers filter or look for)."""
    def compute():
        rhs = _rhs_tokens(ctx)
        out = set(_IDENT.findall(ctx.src.text_of(node)))
        todo = [n for n in out if n in rhs]
        while todo:
            n = todo.pop()
            for t in rhs[n]:
                if t not in out:
                    out.add(t)
                    if t in rhs:
                        todo.append(t)
        return out
    return _memo(ctx, ("deps", node.id), compute)


def reaching_defs(ctx, name: str, at_byte: int):
    """The assignments of `name` that can reach a use at byte `at_byte`: the last plain
    assignment before it and the augmented ones after that; every assignment when none precedes
    the use (a loop-carried value)."""
    defs = ctx.kernel.assignments.get(name) or []
    before = [a for a in defs if a.node is not None and a.node.start_byte < at_byte]
    if not before:
        return list(defs)
    plain = [i for i, a in enumerate(before) if not a.augmented]
    if not plain:
        return before
    return before[plain[-1]:]


def rhs_of(assignment):
    """The right-hand side of an assignment (augmented included); None for loop targets."""
    if assignment.value is not None:
        return assignment.value
    node = assignment.node
    if node is not None and node.type in ("assignment", "augmented_assignment"):
        return node.child_by_field_name("right")
    return None


# ---------------------------------------------------------------------------------------------
# parameters


@dataclass
class ParamKinds:
    pointers: set[str] = field(default_factory=set)
    runtime: set[str] = field(default_factory=set)  # non-constexpr, non-pointer (ints, mostly)
    constexpr: set[str] = field(default_factory=set)


def param_kinds(ctx) -> ParamKinds:
    cached = getattr(ctx.kernel, "_tl_param_kinds", None)
    if cached is not None:
        return cached
    k = ctx.kernel
    kinds = ParamKinds()
    names = {p.name for p in k.params}
    for p in k.params:
        if p.is_constexpr:
            kinds.constexpr.add(p.name)
        elif _PTR_NAME.search(p.name):
            kinds.pointers.add(p.name)
    # A parameter added unscaled to the offsets of a memory access is that access's base pointer.
    for call in k.calls:
        if call.name in MEMORY_OPS + ATOMIC_OPS or call.name == "make_block_ptr":
            ptr = call.arg(0, "base" if call.name == "make_block_ptr" else "pointer")
            if ptr is None:
                continue
            for term in additive_terms(ctx, ptr):
                t = strip_parens(term)
                if t is not None and t.type == "identifier" and ctx.src.text_of(t) in names:
                    kinds.pointers.add(ctx.src.text_of(t))
    for p in k.params:
        if not p.is_constexpr and p.name not in kinds.pointers:
            kinds.runtime.add(p.name)
    k._tl_param_kinds = kinds
    return kinds


# ---------------------------------------------------------------------------------------------
# additive terms and their factors


def additive_terms(ctx, node, depth: int = 0, seen: frozenset = frozenset()) -> list:
    """The summands of a pointer/offset expression, expanding `+`/`-`, parentheses and local
    names whose reaching definition is itself a sum (or a plain alias); `p += d` on a name adds
    `d` as a term beside `p`."""
    node = strip_parens(node)
    if node is None or depth > _MAX_DEPTH:
        return []
    if depth == 0 and not seen:
        return _memo(ctx, ("sum", node.id), lambda: _additive_terms(ctx, node, 0, seen))
    return _additive_terms(ctx, node, depth, seen)


def _additive_terms(ctx, node, depth, seen) -> list:
    if node.type == "binary_operator":
        op = ctx.src.text_of(node.child_by_field_name("operator"))
        if op in ("+", "-"):
            return (additive_terms(ctx, node.child_by_field_name("left"), depth + 1, seen)
                    + additive_terms(ctx, node.child_by_field_name("right"), depth + 1, seen))
        return [node]
    if node.type == "identifier":
        name = ctx.src.text_of(node)
        if name in seen:
            return [node]
        defs = reaching_defs(ctx, name, node.start_byte)
        if not defs:
            return [node]  # a parameter never reassigned (or a global)
        out = []
        plain = [a for a in defs if not a.augmented]
        if not plain:
            out.append(node)  # a parameter advanced in place: `X += row * stride`
        for a in defs:
            right = rhs_of(a)
            if right is None:
                out.append(node)
                continue
            if a.augmented and a.augmented not in ("+=", "-="):
                out.append(node)
                continue
            r = strip_parens(right)
            if a.augmented or (r is not None and (r.type == "identifier" or (
                    r.type == "binary_operator" and ctx.src.text_of(r.child_by_field_name("operator")) in ("+", "-")))):
                out.extend(additive_terms(ctx, right, depth + 1, seen | {name}))
            else:
                out.append(right)
        return out
    return [node]


@dataclass
class TermInfo:
    """One summand of an address: the aranges it carries, the 2-D axis they index (None for a
    1-D term), its other factors and the leaf node holding the arange."""

    node: object
    aranges: list = field(default_factory=list)
    axis: int | None = None
    ndim: int | None = None
    multipliers: list = field(default_factory=list)  # factor nodes that carry no arange
    leaf: object = None  # the factor that carries the arange (for messages)


def _subscript_axis(node, src):
    """`x[:, None]` → (0, 2), `x[None, :]` → (1, 2); None for other subscripts."""
    value = node.child_by_field_name("value")
    subs = [c for c in node.named_children if value is None or c.id != value.id]
    subs = [c for c in subs if c.type != "comment"]
    if len(subs) != 2:
        return None
    kinds = ["slice" if s.type == "slice" else ("none" if s.type == "none" or src.text_of(s) == "None" else "?") for s in subs]
    if kinds == ["slice", "none"]:
        return 0, 2
    if kinds == ["none", "slice"]:
        return 1, 2
    return None


def term_info(ctx, term, depth: int = 0) -> TermInfo:
    if depth == 0 and term is not None:
        return _memo(ctx, ("term", term.id), lambda: _term_info(ctx, term, 0))
    return _term_info(ctx, term, depth)


def _term_info(ctx, term, depth: int) -> TermInfo:
    src = ctx.src
    node = strip_parens(term)
    info = TermInfo(node=term)
    if node is None or depth > _MAX_DEPTH:
        return info
    if node.type == "subscript":
        inner = term_info(ctx, node.child_by_field_name("value"), depth + 1)
        ax = _subscript_axis(node, src)
        if ax is not None and inner.aranges:
            inner.axis, inner.ndim = ax
        inner.node = term
        if inner.leaf is not None:
            inner.leaf = node
        return inner
    if node.type == "binary_operator" and src.text_of(node.child_by_field_name("operator")) == "*":
        left = term_info(ctx, node.child_by_field_name("left"), depth + 1)
        right = term_info(ctx, node.child_by_field_name("right"), depth + 1)
        info.aranges = left.aranges + right.aranges
        info.multipliers = left.multipliers + right.multipliers
        carrier = left if left.aranges else right
        info.axis, info.ndim, info.leaf = carrier.axis, carrier.ndim, carrier.leaf
        return info
    mc = method_call(node, src, "to")
    if mc is not None:
        inner = term_info(ctx, mc[0], depth + 1)
        inner.node = term
        return inner
    if node.type == "identifier":
        name = src.text_of(node)
        defs = reaching_defs(ctx, name, node.start_byte)
        if len(defs) == 1 and not defs[0].augmented and rhs_of(defs[0]) is not None:
            right = strip_parens(rhs_of(defs[0]))
            if right is not None and (right.type in ("subscript", "identifier") or method_call(right, src, "to") is not None
                                      or (right.type == "binary_operator" and src.text_of(right.child_by_field_name("operator")) == "*")):
                inner = term_info(ctx, right, depth + 1)
                inner.node = term
                if inner.leaf is not None and inner.axis is None:
                    inner.leaf = node
                return inner
    aranges = feeds(ctx, node, "arange")
    if aranges:
        info.aranges = aranges
        info.leaf = node
    else:
        info.multipliers = [node]
    return info


def pointer_terms(ctx, ptr) -> list[TermInfo]:
    return _memo(ctx, ("terms", ptr.id), lambda: [term_info(ctx, t) for t in additive_terms(ctx, ptr)])


def tile_aranges(ctx, ptr):
    """(axis-0 aranges, axis-1 aranges) of a 2-D pointer: which `tl.arange` calls index its rows
    and its columns (for messages that name where a dimension comes from), or None when it is not
    one. Its shape is the shape engine's (KernelShapes.tile_shape in analysis.shapes)."""
    rows, cols = [], []
    for info in pointer_terms(ctx, ptr):
        if info.ndim == 2 and info.axis == 0:
            rows.extend(info.aranges)
        elif info.ndim == 2 and info.axis == 1:
            cols.extend(info.aranges)
    if not rows or not cols:
        return None
    return rows, cols


def runtime_params_in(ctx, node) -> list[str]:
    """Runtime (non-constexpr, non-pointer) parameters an expression reads, through locals."""
    kinds = param_kinds(ctx)
    return sorted(n for n in depends(ctx, node) if n in kinds.runtime)


def chain_text(ctx, node) -> str:
    """The text of `node` and of every local assignment it depends on (for cast searches)."""
    return _memo(ctx, ("chain", node.id), lambda: _chain_text(ctx, node))


def _chain_text(ctx, node) -> str:
    parts = [ctx.src.text_of(node)]
    for name in sorted(depends(ctx, node)):
        for a in ctx.kernel.assignments.get(name, []):
            right = rhs_of(a)
            if right is not None:
                parts.append(ctx.src.text_of(right))
    return "\n".join(parts)


def launch_args(ctx, name: str):
    """(launch, argument node) for every visible launch that passes parameter `name`."""
    p = ctx.kernel.param(name)
    out = []
    if p is None:
        return out
    for launch in ctx.kernel.launches:
        node = launch.kwargs.get(name)
        positional = launch.args[:p.index + 1]
        if node is None and len(positional) > p.index and not any(
                a.type in ("list_splat", "dictionary_splat") for a in positional):
            node = launch.args[p.index]
        if node is not None:
            out.append((launch, node))
    return out


_STRIDE_CALL = re.compile(r"\.stride\(\s*(-?\d+)\s*\)$")


def stride_dim(ctx, node, launch=None):
    """`x.stride(0)` → 0, `x.stride(-1)` → -1, also through the wrapper's local names before
    `launch` (`stride_n = x.stride(1)`; every assignment of the name must agree); None otherwise."""
    if node is None:
        return None
    m = _STRIDE_CALL.search(ctx.src.text_of(node).strip())
    if m:
        return int(m.group(1))
    if launch is None or launch.wrapper is None or node.type != "identifier":
        return None
    from ._tiling_evidence import (
        _wrapper_assigns,  # (it reads offsets through this module)
    )

    found = {stride_dim(ctx, right) if not isinstance(right, str) else None
             for right in _wrapper_assigns(ctx.src, launch).get(ctx.src.text_of(node), ())}
    return found.pop() if len(found) == 1 else None
