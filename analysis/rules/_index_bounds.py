"""What an address's index can reach: the lane-wise facts TL002 decides an overhang from.

Not a rule (the registry only loads `tl*` modules). For an expression it answers which
`tl.arange` lanes reach it element-wise (not through a loaded value or a reduction, which make a
gather or a scalar), whether it reads the program id or a loop variable, which runtime
parameters and which constexpr names or literals it reads, and whether its lanes pass through a
wrap or a clamp (`% n`, `tl.minimum`, `tl.maximum`, `tl.where`, `& mask`) that keeps them in
range whatever the grid.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import _offsets as off

_REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"}
_REDUCTION_METHODS = {"sum", "max", "min", "argmax", "argmin"}
_CLAMPS = {"minimum", "maximum", "clamp", "where"}
_PASS_METHODS = {"to", "cast", "reshape", "trans", "permute", "broadcast_to", "expand_dims"}
_MAX_DEPTH = 24


@dataclass
class IndexFacts:
    lanes: set = field(default_factory=set)  # ids of the tl.arange calls that reach it lane-wise
    extents: set = field(default_factory=set)  # texts of those aranges' ends (`BLOCK`, `128`)
    pid: bool = False  # reads tl.program_id (not only through a wrap by a compile-time count)
    pid_axes: set = field(default_factory=set)  # the grid axes of those program ids (-1: unknown)
    loops: set = field(default_factory=set)  # loop variables it reads
    runtime: set = field(default_factory=set)  # runtime (non-constexpr, non-pointer) parameters
    tokens: set = field(default_factory=set)  # constexpr names and literals it reads
    clamped: bool = False  # its lanes pass through a wrap or clamp
    gathered: bool = False  # it reads a loaded value
    count: bool = False  # it reads a tile count (`tl.cdiv(M, BLOCK)`)
    whole_tiles: bool = False  # it strides a program or loop index by a tile count: a buffer of whole tiles

    def merge(self, other: IndexFacts) -> IndexFacts:
        self.lanes |= other.lanes
        self.extents |= other.extents
        self.pid = self.pid or other.pid
        self.pid_axes |= other.pid_axes
        self.loops |= other.loops
        self.runtime |= other.runtime
        self.tokens |= other.tokens
        self.clamped = self.clamped or other.clamped
        self.gathered = self.gathered or other.gathered
        self.count = self.count or other.count
        self.whole_tiles = self.whole_tiles or other.whole_tiles
        return self


def index_facts(ctx, node) -> IndexFacts:
    memo = ctx.kernel.__dict__.setdefault("_tl_index_facts", {})
    return _Walker(ctx, memo).facts(node, 0)


class _Walker:
    def __init__(self, ctx, memo):
        self.ctx = ctx
        self.src = ctx.src
        self.memo = memo
        self.calls = {c.node.id: c for c in ctx.kernel.calls}
        self.kinds = off.param_kinds(ctx)
        self.loop_vars = {lp.var for lp in ctx.kernel.loops if lp.var}

    def facts(self, node, depth) -> IndexFacts:
        node = off.strip_parens(node)
        if node is None or depth > _MAX_DEPTH:
            return IndexFacts()
        if node.id in self.memo:
            return _copy(self.memo[node.id])
        self.memo[node.id] = IndexFacts()  # a cycle (a loop-carried name) adds nothing
        out = self._facts(node, depth)
        self.memo[node.id] = out
        return _copy(out)

    def _all(self, nodes, depth) -> IndexFacts:
        out = IndexFacts()
        for n in nodes:
            out.merge(self.facts(n, depth + 1))
        return out

    def _facts(self, node, depth) -> IndexFacts:
        t, src = node.type, self.src
        if t in ("integer", "float"):
            return IndexFacts(tokens={src.text_of(node)})
        if t == "identifier":
            return self._name(node, depth)
        if t == "call":
            return self._call(node, depth)
        if t == "binary_operator":
            op = src.text_of(node.child_by_field_name("operator"))
            left = self.facts(node.child_by_field_name("left"), depth + 1)
            right = self.facts(node.child_by_field_name("right"), depth + 1)
            if op in ("%", "&") and left.lanes and not right.lanes:
                left.clamped = True  # `offs % n`, `bits & 15`: in range whatever the lanes
            if op == "*" and any(a.count and not (a.pid or a.loops) and (b.pid or b.loops)
                                 for a, b in ((left, right), (right, left))):
                left.whole_tiles = True  # `(batch * SPLIT + s) * num_pid_m`: rows padded to whole tiles
            if op == "%" and left.pid and not right.runtime and not right.pid:
                left.pid, left.pid_axes = False, set()  # `pid % H`, H compile-time: a head, not a tile
            return left.merge(right)
        if t == "subscript":
            return self.facts(node.child_by_field_name("value"), depth + 1)
        if t in ("unary_operator", "not_operator"):
            return self.facts(node.child_by_field_name("argument"), depth + 1)
        if t == "attribute":
            return IndexFacts()  # `x.dtype`, `tl.int64`
        return self._all(node.named_children, depth)

    def _name(self, node, depth) -> IndexFacts:
        name = self.src.text_of(node)
        if name in self.loop_vars and any(a.value is None and a.node is not None and a.node.type == "for_statement"
                                          for a in self.ctx.kernel.assignments.get(name, ())):
            return IndexFacts(loops={name})
        defs = off.reaching_defs(self.ctx, name, node.start_byte)
        if not defs:
            if name in self.kinds.runtime:
                return IndexFacts(runtime={name})
            if name in self.kinds.constexpr:
                return IndexFacts(tokens={name})
            return IndexFacts()
        out = IndexFacts()
        if all(a.augmented for a in defs) and name in self.kinds.runtime:
            out.runtime.add(name)
        for a in defs:
            right = off.rhs_of(a)
            if right is not None:
                out.merge(self.facts(right, depth + 1))
            elif a.node is not None and a.node.type == "for_statement":
                out.loops.add(name)
        return out

    def _call(self, node, depth) -> IndexFacts:
        call = self.calls.get(node.id)
        args = node.child_by_field_name("arguments")
        arg_nodes = [a for a in (args.named_children if args is not None else []) if a.type != "comment"]
        fn = node.child_by_field_name("function")
        if fn is not None and fn.type == "attribute" and (call is None or call.name.startswith(".")):
            method = self.src.text_of(fn.child_by_field_name("attribute"))
            if method in _REDUCTION_METHODS:
                return IndexFacts()
            obj = self.facts(fn.child_by_field_name("object"), depth + 1)
            return obj if method in _PASS_METHODS else obj.merge(self._all(arg_nodes, depth))
        if call is None:
            out = self._all(arg_nodes, depth)
            if out.lanes:
                # `min(offs, n)` clamps; a helper of the kernel's module maps lanes in ways we do
                # not follow (a swizzle, a permutation), so its result counts as in range too
                out.clamped = True
            return out
        name = call.name
        if name == "program_id":
            axis = self.ctx.values(call.arg(0, "axis"), None) if call.arg(0, "axis") is not None else [0]
            return IndexFacts(pid=True, pid_axes={axis[0] if axis and isinstance(axis[0], int) else -1})
        if name == "arange":
            end = call.arg(1, "end")
            toks = {self.src.text_of(end)} if end is not None else set()
            return IndexFacts(lanes={node.id}, extents=toks)
        if name in ("load", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg"):
            return IndexFacts(gathered=True)
        if name == "cdiv":
            out = self._all(arg_nodes, depth)
            out.count = True
            return out
        if name in _REDUCTIONS:
            return IndexFacts()  # a scalar per program (or per row): no lanes of the block
        out = self._all(arg_nodes, depth)
        if name in _CLAMPS and out.lanes:
            out.clamped = True
        return out


def _copy(f: IndexFacts) -> IndexFacts:
    return IndexFacts(set(f.lanes), set(f.extents), f.pid, set(f.pid_axes), set(f.loops), set(f.runtime),
                      set(f.tokens), f.clamped, f.gathered, f.count, f.whole_tiles)


def summands(ctx, node, key: tuple = (), depth: int = 0, origin=None) -> list:
    """The summands of an address as (node, axis key): sums are split through parentheses,
    casts, `[:, None]` subscripts, local names and a common factor (`(a + b) * s` gives `a` and
    `b`, both keyed by `s`); summands with equal keys index the same axis with the same scale.
    Each comes as (node, key, origin): origin is the innermost name the sum was read through (the
    `offsets` of `offsets = start + tl.arange(0, BLOCK)`), or the summand itself."""
    src = ctx.src
    node = off.strip_parens(node)
    if node is None or depth > _MAX_DEPTH:
        return []
    if node.type == "binary_operator":
        op = src.text_of(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op in ("+", "-"):
            return summands(ctx, left, key, depth + 1, origin) + summands(ctx, right, key, depth + 1, origin)
        if op == "*":
            for a, b in ((left, right), (right, left)):
                if _is_sum(ctx, a):
                    return summands(ctx, a, key + (src.text_of(b),), depth + 1, origin)
        return [(node, key, origin or node)]
    if node.type == "subscript":
        value = node.child_by_field_name("value")
        sub = src.text_of(node)[len(src.text_of(value)):].replace(" ", "") if value is not None else ""
        return summands(ctx, value, key + (sub,), depth + 1, origin)
    mc = off.method_call(node, src, "to")
    if mc is not None:
        return summands(ctx, mc[0], key, depth + 1, origin)
    if node.type == "identifier":
        defs = off.reaching_defs(ctx, src.text_of(node), node.start_byte)
        rights = [off.rhs_of(a) for a in defs]
        ok = defs and all(r is not None for r in rights) and not defs[0].augmented \
            and all(a.augmented in ("+=", "-=") for a in defs[1:])
        if ok and (len(defs) > 1 or _is_sum(ctx, rights[0]) or off.strip_parens(rights[0]).type in ("identifier", "subscript")
                   or off.method_call(off.strip_parens(rights[0]), src, "to") is not None):
            out = []
            for r in rights:
                out.extend(summands(ctx, r, key, depth + 1, node))
            return out
    return [(node, key, origin or node)]


def _is_sum(ctx, node, depth: int = 0) -> bool:
    node = off.strip_parens(node)
    if node is None or depth > 4:
        return False
    if node.type == "binary_operator":
        return ctx.src.text_of(node.child_by_field_name("operator")) in ("+", "-")
    mc = off.method_call(node, ctx.src, "to")
    if mc is not None:
        return _is_sum(ctx, mc[0], depth + 1)
    if node.type == "identifier":
        defs = off.reaching_defs(ctx, ctx.src.text_of(node), node.start_byte)
        return len(defs) == 1 and not defs[0].augmented and _is_sum(ctx, off.rhs_of(defs[0]), depth + 1)
    return False
