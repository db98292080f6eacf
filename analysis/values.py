"""The value layer: Python constants of tree-sitter expressions and the arithmetic on them.

Two evaluators share it. `evaluate` folds host Python, the code around a kernel: launch
arguments, wrapper assignments, grids, module constants, decorator and autotune literals. An
expression there may take several values (a wrapper name assigned in both branches of an `if`, a
conditional expression): it returns every value it can take. Expressions inside a kernel are the
shape engine's (analysis/shapes), which interprets the kernel per configuration and folds its
constants with `literal`, `binary`, `unary` and `call` from here. `UNKNOWN` stands for a value we
cannot know statically; rules must not guess it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .findings import Range


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "?"


UNKNOWN: Any = _Unknown()
MAX_VALUES = 8  # a value with more alternatives than this is treated as unknown


@dataclass(frozen=True)
class Value:
    """One value a name can take, with where it came from (for messages and related info)."""

    value: Any
    origin: str = ""  # e.g. "the launch at line 31"
    range: Range | None = None  # where the value is written

    @property
    def known(self) -> bool:
        return self.value is not UNKNOWN


def next_power_of_2(n: int) -> int:
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def cdiv(a, b):
    return -(-a // b)


_BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
    "/": operator.truediv, "%": operator.mod, "<<": operator.lshift, ">>": operator.rshift,
    "**": operator.pow, "&": operator.and_, "|": operator.or_, "^": operator.xor,
}
_UNOPS: dict[str, Callable[[Any], Any]] = {"-": operator.neg, "+": operator.pos, "~": operator.invert}
_CMPOPS: dict[str, Callable[[Any, Any], Any]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}
# Calls we can evaluate; the key is the dotted name's last part(s).
_CALLS: dict[str, Callable[..., Any]] = {
    "next_power_of_2": next_power_of_2,
    "cdiv": cdiv,
    "max": max,
    "min": min,
    "int": int,
    "abs": abs,
}


@dataclass
class Scope:
    """Names visible to an expression, each mapped to the nodes that may define it.

    `lookup(name)` returns candidate Values or None when the name is not defined here.
    """

    lookup: Callable[[str], list[Value] | None]
    depth: int = 0
    seen: set = field(default_factory=set)


def _combine(values_a, values_b, fn):
    out = []
    for a in values_a:
        for b in values_b:
            out.append(UNKNOWN if a is UNKNOWN or b is UNKNOWN else fn(a, b))
    return _dedupe(out)


def _dedupe(values):
    out = []
    for v in values:
        if not any(v is o or (type(v) is type(o) and v == o) for o in out):
            out.append(v)
    if len(out) > MAX_VALUES:
        return [UNKNOWN]
    return out


LITERAL_TYPES = frozenset(("integer", "float", "true", "false", "none", "string"))


def literal(node, src) -> Any:
    """The Python value of a literal node (`0x10`, `1_024`, `1e-6`, `True`, `None`, `"fp16"`);
    UNKNOWN for anything else, f-strings included."""
    t = node.type
    if t == "integer":
        try:
            return int(src.text_of(node).replace("_", "").rstrip("lL"), 0)
        except ValueError:
            return UNKNOWN
    if t == "float":
        try:
            return float(src.text_of(node).replace("_", ""))
        except ValueError:
            return UNKNOWN
    if t in ("true", "false", "none"):
        return {"true": True, "false": False, "none": None}[t]
    if t == "string":
        text = src.text_of(node)
        if len(text) >= 2 and text[0] in "'\"" and text[-1] == text[0] and "{" not in text:
            return text.strip("'\"")
    return UNKNOWN


def binary(op: str, a, b) -> Any:
    """`a op b` on two known Python values, comparisons included: the one place constant
    arithmetic is defined (UNKNOWN when undefined, failing or too large, e.g. `2 ** 100000`)."""
    fn = _CMPOPS.get(op) or (_bounded_pow if op == "**" else _BINOPS.get(op))
    return UNKNOWN if fn is None else _safe(fn, a, b)


def call(name: str, args: list) -> Any:
    """A call of a builtin or Triton helper we can fold (`cdiv`, `next_power_of_2`, `min`, `max`,
    `int`, `abs`; `name` is the dotted name's last part) on known values; UNKNOWN otherwise."""
    impl = _CALLS.get(name)
    if impl is None or not args or any(v is UNKNOWN for v in args):
        return UNKNOWN
    return _safe(impl, *args)


def unary(op: str, v) -> Any:
    """`op v` on a known Python value (`-`, `+`, `~`); UNKNOWN when undefined (`~1.5`)."""
    fn = _UNOPS.get(op)
    return UNKNOWN if fn is None or v is UNKNOWN else _safe(fn, v)


def constants_scope(constants: dict, src) -> Scope:
    """The module's constants (name → the right-hand sides assigned to it, in order) as a scope:
    the last assignment counts, and a constant may be built from others (`BLOCK = 2 * BASE`),
    never from a function's locals."""
    scope = Scope(lookup=lambda name: None)

    def lookup(name: str) -> list[Value] | None:
        if name not in constants:
            return None
        right = constants[name][-1]
        where = f"the module constant at line {right.start_point[0] + 1}"
        scope.seen.add(name)
        scope.depth += 1
        try:
            return [Value(v, where, src.range(right.parent)) for v in evaluate(right, src, scope)]
        finally:
            scope.seen.discard(name)
            scope.depth -= 1

    scope.lookup = lookup
    return scope


def evaluate(node, src, scope: Scope) -> list[Any]:
    """Every value `node` can take (raw Python values, UNKNOWN where unknowable)."""
    if node is None or scope.depth > 24:
        return [UNKNOWN]
    t = node.type
    if t in LITERAL_TYPES:
        return [literal(node, src)]
    if t == "parenthesized_expression":
        inner = node.named_children
        return evaluate(inner[0], src, scope) if inner else [UNKNOWN]
    if t == "identifier":
        name = src.text_of(node)
        if name in ("True", "False", "None"):
            return [{"True": True, "False": False, "None": None}[name]]
        if name in scope.seen:
            return [UNKNOWN]
        found = scope.lookup(name)
        if not found:
            return [UNKNOWN]
        return _dedupe([v.value for v in found])
    if t == "unary_operator":
        op = src.text_of(node.child_by_field_name("operator"))
        if op not in _UNOPS:
            return [UNKNOWN]
        return _dedupe([unary(op, v) for v in evaluate(node.child_by_field_name("argument"), src, scope)])
    if t == "binary_operator":
        op = src.text_of(node.child_by_field_name("operator"))
        if op not in _BINOPS:
            return [UNKNOWN]
        left = evaluate(node.child_by_field_name("left"), src, scope)
        right = evaluate(node.child_by_field_name("right"), src, scope)
        return _combine(left, right, lambda a, b: binary(op, a, b))
    if t == "comparison_operator":
        kids = node.named_children
        ops = [c for c in node.children if not c.is_named]
        if len(kids) == 2 and len(ops) == 1 and src.text_of(ops[0]) in _CMPOPS:
            op = src.text_of(ops[0])
            return _combine(evaluate(kids[0], src, scope), evaluate(kids[1], src, scope), lambda a, b: binary(op, a, b))
        return [UNKNOWN]
    if t == "conditional_expression":
        kids = node.named_children
        if len(kids) == 3:
            cond = evaluate(kids[1], src, scope)
            if len(cond) == 1 and cond[0] is not UNKNOWN:
                return evaluate(kids[0] if cond[0] else kids[2], src, scope)
            return _dedupe(evaluate(kids[0], src, scope) + evaluate(kids[2], src, scope))
        return [UNKNOWN]
    if t == "call":
        fn_node = node.child_by_field_name("function")
        from .source import dotted_name

        name = dotted_name(fn_node, src) or ""
        short = name.rsplit(".", 1)[-1]
        impl = _CALLS.get(short)
        args_node = node.child_by_field_name("arguments")
        if impl is None or args_node is None:
            return [UNKNOWN]
        args = [a for a in args_node.named_children if a.type not in ("keyword_argument", "comment")]
        if any(a.type in ("list_splat", "dictionary_splat") for a in args):
            return [UNKNOWN]
        results = [[]]
        for a in args:
            vals = evaluate(a, src, scope)
            results = [r + [v] for r in results for v in vals]
            if len(results) > MAX_VALUES:
                return [UNKNOWN]
        return _dedupe([call(short, r) for r in results])
    return [UNKNOWN]


def _safe(fn, *args):
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 - folding the user's arithmetic: whatever it raises, the value is unknown
        return UNKNOWN


def _bounded_pow(a, b):
    if isinstance(b, (int, float)) and abs(b) > 64:
        return UNKNOWN
    return a ** b


def is_power_of_two(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0 and (v & (v - 1)) == 0


def fmt(v) -> str:
    if v is UNKNOWN:
        return "?"
    if isinstance(v, float) and math.isinf(v):
        return "-inf" if v < 0 else "inf"
    return repr(v) if isinstance(v, str) else str(v)
