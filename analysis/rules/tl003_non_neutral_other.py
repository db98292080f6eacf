"""TL003 — masked load whose `other` is not neutral for the reduction it feeds

## What it finds
A masked `tl.load` whose masked-off lanes reach a reduction (`tl.max`, `tl.min`, `tl.sum`,
`tl.argmax`, `tl.argmin`, or the `.max()`/`.sum()` methods) holding a value that is not that
reduction's neutral element: `other=0` into a `max` (or `min`), `other=1` into a `sum`, or a
`max`/`min` over a load with no `other` at all. The rule follows what the padded lanes hold from
the load to the reduction through casts, element-wise arithmetic (`exp(0) = 1` into a sum is
caught, `exp(-inf - m) = 0` is recognised as neutral), `tl.where(mask, x, 0.0)` and loop
accumulators (`acc += x`). It reports only values it knows: an `other` from a runtime parameter,
one a branch may change (`v = a; if c: v = b`), or `x - shift` with an unknown `shift`, stays
silent. A pad at or beyond half precision's extreme (`-65504`, `-1e9`) counts as `-inf` for
`max`, and so does a negative value the author picks with `tl.where(mask, x, -1)`. A padded 0 into
the `max` of values that cannot be negative is fine: `tl.abs`, `tl.exp`, squares, probabilities
(`e / tl.sum(e)`), booleans and unsigned casts, `tl.maximum(acc, x)` with a non-negative `acc`,
and loads whose pointer names a length, count, size, norm or probability (`seq_lens_ptr`,
`counts`) or that sit in a max-norm or bincount kernel. A load with `mask=True` pads nothing.

## Why
`other` is what the masked lanes *are* from then on, and a reduction does not know which lanes
were masked. A row of all-negative values padded with `other=0.0` has a max of 0; a softmax whose
max and exponentials see zero padding normalizes over `n_cols + padding` terms. The results are
wrong only for ragged sizes (rows not a multiple of the block), which is why tests with
power-of-two shapes pass. Triton's fused-softmax tutorial (02-fused-softmax) loads with
`other=-float('inf')` for this reason; a masked load without `other` leaves the lanes undefined
by the language (`tl.load`: "other … if mask[idx] is false, return other[idx]"; the NVIDIA
backend zero-fills them, which is neutral for a sum but not for a max).

## Example
```python
x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)   # TL003
tl.store(out_ptr + row, tl.max(x, axis=0))
```

## Fix
Pad with the neutral element: `other=float("-inf")` for `max`/`argmax`, `float("inf")` for
`min`/`argmin`, `0.0` for `sum`. The quick fix rewrites (or adds) `other=` only when the new
value makes *every* reduction the load feeds neutral (it re-evaluates the kernel with the new
value), e.g. `-inf` in a softmax whose sum then sees `exp(-inf) = 0`, and for a max or min only
where the data is visibly floating point (a float `other`, or a float cast of the result): an
infinity does not fit an integer tensor, for which the type's extreme (`-2**31`) is the pad. Its
title names the value it sets.
"""

from __future__ import annotations

import math
import re

from .. import message_text as mt
from ..findings import Applicability, Range, Related, Severity, TextEdit
from ..values import UNKNOWN, fmt
from . import _offsets as off
from ._pad_values import (
    NONNEG_FUNCS,
    UNARY,
    UNDEF,
    Const,
    Pad,
    apply_fn,
    as_nonneg,
    nonneg_source,
    unsigned_cast,
)
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL003",
    name="non-neutral-other",
    severity=Severity.WARNING,
    summary="masked load whose `other` is not neutral for the reduction it feeds",
    fix_title="use the reduction's neutral element as other",
    fix_applicability=Applicability.UNSAFE,
    fix_safety=('It changes the values the padded lanes carry, on purpose: every reduction the load feeds '
                'becomes correct, but any other use of those lanes (a store without the same mask, an '
                '`other` the code relied on) sees the new value too.'),
)

# A pad at or beyond half precision's largest finite value (-65504, -1e9) is a deliberate
# "minus infinity" for max (plus infinity for min): no real value lies below it in practice.
_SENTINEL = 65504.0
_REDUCE = {"sum": "sum", "max": "max", "min": "min", "argmax": "max", "argmin": "min",
           ".sum": "sum", ".max": "max", ".min": "min"}
_NEUTRAL_TEXT = {"sum": "0.0", "max": 'float("-inf")', "min": 'float("inf")'}
_NEUTRAL_VALUE = {"sum": 0.0, "max": -math.inf, "min": math.inf}


class _Interp:
    def __init__(self, ctx: KernelContext, overrides: dict | None = None):
        self.ctx = ctx
        self.src = ctx.src
        self.overrides = overrides or {}
        self.calls = {c.node.id: c for c in ctx.kernel.calls}
        self.memo: dict = {}

    def value(self, node, depth: int = 0):
        node = off.strip_parens(node)
        if node is None or depth > 24:
            return Const()
        key = node.id
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = Const()  # cycles (loop-carried names) read as unknown
        r = self._value(node, depth)
        self.memo[key] = r
        return r

    def _value(self, node, depth):
        src, t = self.src, node.type
        if t in ("integer", "float"):
            v = self.ctx.values(node, None)
            f = float(v[0]) if v and isinstance(v[0], (int, float)) else UNKNOWN
            return Const(f, f is not UNKNOWN and f >= 0)
        if t == "call":
            return self._call(node, depth)
        if t == "unary_operator":
            inner = self.value(node.child_by_field_name("argument"), depth + 1)
            if src.text_of(node.child_by_field_name("operator")) != "-":
                return Const()
            return self._map(inner, lambda v: -v, keep_direct=False)
        if t == "binary_operator":
            op = src.text_of(node.child_by_field_name("operator"))
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            a, b = self.value(left, depth + 1), self.value(right, depth + 1)
            square = op == "*" and src.text_of(left) == src.text_of(right)
            return self._binop(op, a, b, square)
        if t == "identifier":
            return self._name(node, depth)
        if t == "subscript":  # `x[:, None]` holds the same values
            return self.value(node.child_by_field_name("value"), depth + 1)
        return Const()

    def _name(self, node, depth):
        name = self.src.text_of(node)
        if self.ctx.kernel.param(name) is not None and not self.ctx.kernel.assignments.get(name):
            return Const()
        defs = off.reaching_defs(self.ctx, name, node.start_byte)
        if not defs:
            return Const()
        plain = [a for a in defs if not a.augmented]
        if len(plain) > 1 or (plain and defs[0] is not plain[0]):
            return Const()
        if plain and self._conditional(plain[0], node):
            return Const()  # `v = a` then `if c: v = b`: either value reaches the use
        cur = None
        for a in defs:
            right = off.rhs_of(a)
            if right is None:
                return Const()
            v = self.value(right, depth + 1)
            if a.augmented:
                if cur is None:
                    return Const()
                op = a.augmented[:-1]
                cur = self._binop(op, cur, v, False)
                if isinstance(cur, Pad):
                    cur = Pad(cur.value, cur.loads, False, cur.nonneg)
            else:
                cur = v
        return cur if cur is not None else Const()

    def _call(self, node, depth):
        src = self.src
        call = self.calls.get(node.id)
        mc = off.method_call(node, src, "to")
        if mc is not None:
            return as_nonneg(self.value(mc[0], depth + 1), unsigned_cast(src.text_of(mc[1])))
        if call is None:
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "identifier" and src.text_of(fn) == "float":
                args = node.child_by_field_name("arguments")
                arg = args.named_children[0] if args is not None and args.named_children else None
                v = self.ctx.values(arg, None) if arg is not None else [UNKNOWN]
                try:
                    return Const(float(v[0]))
                except (TypeError, ValueError):
                    return Const()
            return Const()
        name = call.name
        if name == "load":
            mask = call.arg(1, "mask")
            if mask is None or src.text_of(mask) == "True":
                return Const()  # unmasked: no padded lanes
            nonneg = nonneg_source(self.ctx, call)
            if node.id in self.overrides:
                return Pad(self.overrides[node.id], frozenset([node.id]), True, nonneg)
            other = call.arg(2, "other")
            if other is None:
                return Pad(UNDEF, frozenset([node.id]), True, nonneg)
            ov = self.value(other, depth + 1)
            return Pad(ov.value if isinstance(ov, Const) else UNKNOWN, frozenset([node.id]), True, nonneg)
        if name in ("zeros", "zeros_like"):
            return Const(0.0, True)
        if name == "full":
            v = self.value(call.arg(1, "value"), depth + 1)
            return Const(v.value, v.nonneg) if isinstance(v, Const) else Const()
        if name in ("cast",):
            dtype = call.arg(1, "dtype")
            return as_nonneg(self.value(call.arg(0, "input"), depth + 1),
                              dtype is not None and unsigned_cast(src.text_of(dtype)))
        if name in UNARY:
            inner = self.value(call.arg(0, "x"), depth + 1)
            r = self._map(inner, UNARY[name], keep_direct=False)
            return as_nonneg(r, name in NONNEG_FUNCS)
        if name in _REDUCE:
            # a reduction's result is no padded lane, but it keeps the sign of what it reduces
            fn = node.child_by_field_name("function")
            arg = fn.child_by_field_name("object") if name.startswith(".") and fn is not None else call.arg(0, "input")
            return Const(UNKNOWN, self.value(arg, depth + 1).nonneg)
        if name in ("maximum", "minimum"):
            a, b = self.value(call.arg(0, "x"), depth + 1), self.value(call.arg(1, "y"), depth + 1)
            r = self._binop("max" if name == "maximum" else "min", a, b, False)
            return as_nonneg(r, (name == "maximum" and (a.nonneg or b.nonneg)) or (a.nonneg and b.nonneg))
        if name == "where":
            a, b = self.value(call.arg(1, "x"), depth + 1), self.value(call.arg(2, "y"), depth + 1)
            cond = off.strip_parens(call.arg(0, "condition"))
            # `tl.where(mask, x, c)`: the lanes the load masked off are the ones the condition drops
            if cond is not None and isinstance(b, Const) and isinstance(a, Pad) and self._is_mask_like(cond):
                return Pad(b.value, a.loads, False, a.nonneg and b.nonneg, chosen=True)
            return Const()
        return Const()  # reductions, dots, anything else: not a padded lane value we follow

    def _is_mask_like(self, cond):
        if cond.type == "comparison_operator" or cond.type == "boolean_operator":
            return True
        if cond.type == "binary_operator" and self.src.text_of(cond.child_by_field_name("operator")) == "&":
            return True
        if cond.type == "identifier":
            defs = self.ctx.kernel.assignments.get(self.src.text_of(cond)) or []
            return len(defs) == 1 and defs[0].value is not None and self._is_mask_like(off.strip_parens(defs[0].value))
        return False

    def _conditional(self, assignment, use) -> bool:
        """Whether `assignment` sits under an `if` (or `else`) that does not also hold `use`."""
        stmt = assignment.node
        for p in off.ancestors(stmt):
            if p.type in ("if_statement", "elif_clause", "else_clause"):
                return not (p.start_byte <= use.start_byte < p.end_byte)
            if p.type in ("for_statement", "while_statement", "function_definition"):
                return False
        return False

    @staticmethod
    def _map(v, fn, keep_direct):
        if isinstance(v, Pad):
            return Pad(apply_fn(fn, v.value), v.loads, v.direct and keep_direct)
        return Const(apply_fn(fn, v.value) if v.value is not UNKNOWN else UNKNOWN)

    @staticmethod
    def _binop(op, a, b, square):
        fns = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
               "/": lambda x, y: x / y, "max": max, "min": min}
        fn = fns.get(op)
        if fn is None:
            return Const()
        both = a.nonneg and b.nonneg and op in ("+", "*", "/", "max", "min")
        if isinstance(a, Const) and isinstance(b, Const):
            return Const(apply_fn(fn, a.value, b.value), both or square)
        pa, pb = isinstance(a, Pad), isinstance(b, Pad)
        loads = (a.loads if pa else frozenset()) | (b.loads if pb else frozenset())
        av, bv = a.value, b.value
        if pa and pb:
            v = apply_fn(fn, av, bv)
        else:
            pv, cv = (av, bv) if pa else (bv, av)
            if cv is not UNKNOWN or pv is UNDEF:
                v = apply_fn(fn, av, bv)
            elif op in ("+", "-") and isinstance(pv, float) and math.isinf(pv):
                v = pv if (pa or op == "+") else -pv  # inf ± a finite unknown stays inf
            elif op == "*" and pv == 0.0 or op == "/" and pa and pv == 0.0:
                v = 0.0
            else:
                v = UNKNOWN
        return Pad(v, loads, False, square or both)


def _non_neutral(kind: str, p: Pad) -> bool:
    v = p.value
    if v is UNKNOWN:
        return False
    if v is UNDEF:
        return kind in ("max", "min") and not (kind == "max" and p.nonneg)
    if kind == "sum":
        return v != 0.0
    if math.isnan(v):
        return True
    if kind == "max":
        # a negative value the author picked with tl.where (`-1` before the max of indices or
        # counts) is a sentinel below the data
        return v > -_SENTINEL and not (p.nonneg and v <= 0.0) and not (p.chosen and v < 0.0)
    return v < _SENTINEL


def _reductions(ctx):
    out = []
    for call in ctx.kernel.calls:
        kind = _REDUCE.get(call.name)
        if kind is None:
            continue
        if call.name.startswith("."):
            fn = call.node.child_by_field_name("function")
            inp = fn.child_by_field_name("object") if fn is not None else None
        else:
            inp = call.arg(0, "input")
        if inp is not None:
            out.append((call, kind, inp))
    return out


def check(ctx: KernelContext):
    reductions = _reductions(ctx)
    if not reductions or not ctx.kernel.calls_named("load"):
        return
    interp = _Interp(ctx)
    loads = {c.node.id: c for c in ctx.kernel.calls_named("load")}
    found = []
    for call, kind, inp in reductions:
        p = interp.value(inp)
        if isinstance(p, Pad) and _non_neutral(kind, p):
            found.append((call, kind, inp, p))
    for call, kind, inp, p in found:
        load = loads.get(next(iter(p.loads))) if len(p.loads) == 1 else None
        yield _finding(ctx, call, kind, p, load, reductions)


def _finding(ctx, red, kind, p: Pad, load, reductions):
    src = ctx.src
    value = "undefined (0 when compiled)" if p.value is UNDEF else fmt(p.value)
    red_text = f"tl.{red.name.lstrip('.')}" if not red.name.startswith(".") else f".{red.name[1:]}()"
    neutral = {"sum": "0", "max": "-inf", "min": "+inf"}[kind]
    if load is not None:
        other = load.arg(2, "other")
        where = f"other={mt.clip(src.text_of(other), 24)}" if other is not None else "no other"
        how = "" if p.direct else " after element-wise math"
        msg = (f"padded lanes ({where}) reach {red_text} at line {off.line_of(red.node)} as {value}{how}, "
               f"not {kind}'s neutral {neutral}")
        rng = src.range(other) if other is not None else src.range(load.node)
        related = [Related(src.range(red.node), f"the {kind} reduction the padded lanes reach")]
        fix = _fix(ctx, load, reductions)
    else:
        msg = f"padded lanes of the loads feeding {red_text} reach it as {value}, not {kind}'s neutral {neutral}"
        rng = src.range(red.node)
        related, fix = [], None
    edits, title = fix if fix else (None, None)
    return ctx.finding(rng, msg, fix=edits, fix_title=title, related=related, data={"reduction": kind, "padded": value})


def _float_data(ctx, load) -> bool:
    """Whether the load reads floating-point data as far as the text shows: a float `other` or a
    cast of the result to a float type (an infinity would not fit an integer tensor)."""
    other = load.arg(2, "other")
    if other is not None:
        text = ctx.src.text_of(other)
        return "inf" in text or "float" in text or bool(re.search(r"\d\.|\.\d|e-?\d", text))
    parent = load.node.parent
    if parent is not None and parent.type == "attribute" and parent.parent is not None:
        mc = off.method_call(parent.parent, ctx.src, "to")
        return mc is not None and bool(re.search(r"float|bf?16", ctx.src.text_of(mc[1])))
    return False


def _fix(ctx, load, reductions):
    """Set `other` to the neutral element when that makes EVERY reduction the load feeds
    neutral (re-checked by evaluating the kernel again with the new value)."""
    src = ctx.src
    candidates = []
    for _call, kind, inp in reductions:
        p = _Interp(ctx).value(inp)
        if isinstance(p, Pad) and load.node.id in p.loads:
            candidates.append(kind)
    for kind in dict.fromkeys(candidates):
        new = _NEUTRAL_VALUE[kind]
        interp = _Interp(ctx, {load.node.id: new})
        ok = True
        for _call, k2, inp in reductions:
            p = interp.value(inp)
            if isinstance(p, Pad) and load.node.id in p.loads and (p.value is UNKNOWN or _non_neutral(k2, p)):
                ok = False
                break
        if not ok or (kind != "sum" and not _float_data(ctx, load)):
            continue
        text = _NEUTRAL_TEXT[kind]
        other = load.arg(2, "other")
        if other is not None:
            return [TextEdit(src.range(other), text)], f"set other={text}"
        if "other" not in load.kwargs and len(load.args) <= 2:
            args = load.node.child_by_field_name("arguments")
            last = [a for a in (args.named_children if args is not None else []) if a.type != "comment"]
            if last:
                pos = src.pos(last[-1].end_point)
                return [TextEdit(Range(pos, pos), f", other={text}")], f"add other={text}"
    return None
