"""TL003 — masked load whose `other` is not neutral for the reduction it feeds

## What it finds
A masked `tl.load` whose masked-off lanes reach a reduction (`tl.max`, `tl.min`, `tl.sum`,
`tl.argmax`, `tl.argmin`, or the `.max()`/`.sum()` methods) holding a value that is not that
reduction's neutral element: `other=0` into a `max` (or `min`), `other=1` into a `sum`, or a
`max`/`min` over a load with no `other` at all. The rule follows what the padded lanes hold from
the load to the reduction through casts, element-wise arithmetic (`exp(0) = 1` into a sum is
caught, `exp(-inf - m) = 0` is recognised as neutral), `tl.where(mask, x, 0.0)` and loop
accumulators (`acc += x`). It reports only values it knows: an `other` from a runtime parameter,
or `x - shift` with an unknown `shift`, stays silent. `-1e9`-style sentinels count as `-inf` for
`max`, and a padded 0 into the `max` of a non-negative expression (`tl.abs(x)`, `tl.exp(x)`,
`x * x`) is fine.

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
value), e.g. `-inf` in a softmax whose sum then sees `exp(-inf) = 0`. For integer tensors use the
type's extreme (`-2**31`) instead of an infinity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..findings import Applicability, Range, Related, Severity, TextEdit
from ..values import UNKNOWN, fmt
from . import _offsets as off
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL003",
    name="non-neutral-other",
    severity=Severity.WARNING,
    summary="masked load whose `other` is not neutral for the reduction it feeds",
    fix_title="use the reduction's neutral element as `other`",
    fix_applicability=Applicability.UNSAFE,
    fix_safety=('It changes the values the padded lanes carry, on purpose: every reduction the load feeds '
                'becomes correct, but any other use of those lanes (a store without the same mask, an '
                '`other` the code relied on) sees the new value too.'),
)

UNDEF = "undefined"  # a masked load with no `other`
_SENTINEL = 1e9  # -1e9 for max (and 1e9 for min) is a deliberate "minus infinity" in practice
_REDUCE = {"sum": "sum", "max": "max", "min": "min", "argmax": "max", "argmin": "min",
           ".sum": "sum", ".max": "max", ".min": "min"}
_NEUTRAL_TEXT = {"sum": "0.0", "max": 'float("-inf")', "min": 'float("inf")'}
_NEUTRAL_VALUE = {"sum": 0.0, "max": -math.inf, "min": math.inf}


@dataclass(frozen=True)
class Const:
    """A lane-independent value (a literal, `tl.zeros`), known or not."""

    value: object = UNKNOWN
    nonneg: bool = False


@dataclass(frozen=True)
class Pad:
    """Values of lanes masked off by `loads`: `value` is what they hold (UNKNOWN, UNDEF, a float)."""

    value: object
    loads: frozenset
    direct: bool  # reached only through casts and names (a fix of `other` is then exact)
    nonneg: bool = False  # every lane (not only the padded ones) is ≥ 0


_UNARY = {
    "exp": math.exp, "math.exp": math.exp, "exp2": lambda v: 2.0 ** v, "math.exp2": lambda v: 2.0 ** v,
    "log": math.log, "math.log": math.log, "log2": math.log2, "math.log2": math.log2,
    "sqrt": math.sqrt, "math.sqrt": math.sqrt, "abs": abs, "math.abs": abs, "sigmoid": lambda v: 1 / (1 + math.exp(-v)),
}
_NONNEG = {"exp", "math.exp", "exp2", "math.exp2", "sqrt", "math.sqrt", "abs", "math.abs", "sigmoid"}


def _apply(fn, *vals):
    if any(v is UNKNOWN for v in vals):
        return UNKNOWN
    if any(v is UNDEF for v in vals):
        return UNDEF
    try:
        return float(fn(*vals))
    except (ValueError, OverflowError, ZeroDivisionError, TypeError):
        if fn is math.log and vals and vals[0] == 0:
            return -math.inf
        return UNKNOWN


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
            return Const(float(v[0]) if v and isinstance(v[0], (int, float)) else UNKNOWN)
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
            return self.value(mc[0], depth + 1)
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
            if self.ctx.kernel and call.arg(1, "mask") is None:
                return Const()  # unmasked: no padded lanes
            if node.id in self.overrides:
                return Pad(self.overrides[node.id], frozenset([node.id]), True)
            other = call.arg(2, "other")
            if other is None:
                return Pad(UNDEF, frozenset([node.id]), True)
            ov = self.value(other, depth + 1)
            return Pad(ov.value if isinstance(ov, Const) else UNKNOWN, frozenset([node.id]), True)
        if name in ("zeros", "zeros_like"):
            return Const(0.0)
        if name == "full":
            v = self.value(call.arg(1, "value"), depth + 1)
            return Const(v.value if isinstance(v, Const) else UNKNOWN)
        if name in ("cast",):
            return self.value(call.arg(0, "input"), depth + 1)
        if name in _UNARY:
            inner = self.value(call.arg(0, "x"), depth + 1)
            r = self._map(inner, _UNARY[name], keep_direct=False)
            if name in _NONNEG and isinstance(r, Pad):
                r = Pad(r.value, r.loads, False, True)
            return r
        if name in ("maximum", "minimum"):
            a, b = self.value(call.arg(0, "x"), depth + 1), self.value(call.arg(1, "y"), depth + 1)
            r = self._binop("max" if name == "maximum" else "min", a, b, False)
            if name == "maximum" and isinstance(r, Pad) and any(isinstance(x, Const) and isinstance(x.value, float) and x.value >= 0 for x in (a, b)):
                r = Pad(r.value, r.loads, False, True)
            return r
        if name == "where":
            a, b = self.value(call.arg(1, "x"), depth + 1), self.value(call.arg(2, "y"), depth + 1)
            cond = off.strip_parens(call.arg(0, "condition"))
            # `tl.where(mask, x, c)`: the lanes the load masked off are the ones the condition drops
            if cond is not None and isinstance(b, Const) and isinstance(a, Pad) and self._is_mask_like(cond):
                return Pad(b.value, a.loads, False, a.nonneg and isinstance(b.value, float) and b.value >= 0)
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

    @staticmethod
    def _map(v, fn, keep_direct):
        if isinstance(v, Pad):
            return Pad(_apply(fn, v.value), v.loads, v.direct and keep_direct)
        return Const(_apply(fn, v.value) if v.value is not UNKNOWN else UNKNOWN)

    @staticmethod
    def _binop(op, a, b, square):
        fns = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
               "/": lambda x, y: x / y, "max": max, "min": min}
        fn = fns.get(op)
        if fn is None:
            return Const()
        if isinstance(a, Const) and isinstance(b, Const):
            return Const(_apply(fn, a.value, b.value))
        pa, pb = isinstance(a, Pad), isinstance(b, Pad)
        loads = (a.loads if pa else frozenset()) | (b.loads if pb else frozenset())
        av, bv = a.value, b.value
        if pa and pb:
            v = _apply(fn, av, bv)
        else:
            pv, cv = (av, bv) if pa else (bv, av)
            if cv is not UNKNOWN or pv is UNDEF:
                v = _apply(fn, av, bv)
            elif op in ("+", "-") and isinstance(pv, float) and math.isinf(pv):
                v = pv if (pa or op == "+") else -pv  # inf ± a finite unknown stays inf
            elif op == "*" and pv == 0.0:
                v = 0.0
            elif op == "/" and pa and pv == 0.0:
                v = 0.0
            else:
                v = UNKNOWN
        nonneg = square or (op in ("*", "+") and pa and pb and a.nonneg and b.nonneg)
        return Pad(v, loads, False, nonneg)


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
        return v > -_SENTINEL and not (p.nonneg and v <= 0.0)
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
    value = "undefined values (0 in the compiled code)" if p.value is UNDEF else fmt(p.value)
    red_text = f"tl.{red.name.lstrip('.')}" if not red.name.startswith(".") else f"`.{red.name[1:]}()`"
    neutral = {"sum": "0", "max": "-inf", "min": "+inf"}[kind]
    if load is not None:
        other = load.arg(2, "other")
        where = f"`other={src.text_of(other)}`" if other is not None else "no `other`"
        how = "" if p.direct else " after the element-wise math between them"
        msg = (f"masked lanes of this tl.load ({where}) reach {red_text} at line {off.line_of(red.node)} as {value}{how}; "
               f"the neutral element of {kind} is {neutral}, so the padded lanes change the result")
        rng = src.range(other) if other is not None else src.range(load.node)
        related = [Related(src.range(red.node), f"the {kind} reduction the padded lanes reach")]
        fix = _fix(ctx, load, reductions)
    else:
        msg = (f"masked lanes of the loads feeding {red_text} reach it as {value}, not the neutral element of {kind} "
               f"({neutral}), so the padded lanes change the result")
        rng = src.range(red.node)
        related, fix = [], None
    return ctx.finding(rng, msg, fix=fix, related=related, data={"reduction": kind, "padded": value})


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
        if not ok:
            continue
        other = load.arg(2, "other")
        if other is not None:
            return [TextEdit(src.range(other), _NEUTRAL_TEXT[kind])]
        if "other" not in load.kwargs and len(load.args) <= 2:
            args = load.node.child_by_field_name("arguments")
            last = [a for a in (args.named_children if args is not None else []) if a.type != "comment"]
            if last:
                pos = src.pos(last[-1].end_point)
                return [TextEdit(Range(pos, pos), f", other={_NEUTRAL_TEXT[kind]}")]
    return None
