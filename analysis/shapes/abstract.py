"""Abstract values of the shape engine: what is known of one Triton expression.

A value is a scalar or a block of a fixed shape whose dimensions are numbers, symbols standing for
constexpr expressions (`BLOCK_M`, `2*BLOCK`) or unknown (None), with one element dtype. Python
constants (literals and constexprs) are "weak" scalars that carry their value. Constant arithmetic
is values.binary's; this module only adds the symbolic side.
"""

from __future__ import annotations

from typing import Any

from ..values import UNKNOWN, binary
from .dtypes import DTYPE_NAMES, literal_dtype, normalize_dtype


class Sym:
    """A dimension or constant known only by its expression in constexpr names, e.g. `BLOCK_M`."""

    __slots__ = ("expr",)

    def __init__(self, expr: str):
        self.expr = expr

    def __eq__(self, other):
        return isinstance(other, Sym) and other.expr == self.expr

    def __hash__(self):
        return hash(("sym", self.expr))

    def __repr__(self):
        return self.expr


class Abs:
    """The abstract value of an expression.

    shape: None = unknown; () = scalar; else one entry per dimension (int, Sym, or None = unknown).
    dtype: "fp16", "int32", "*fp16" (pointer), None = unknown.
    kind: "tensor", "block_ptr", "descriptor", "dtype" (a tl dtype object, name in `value`),
          "tuple" (entries in `items`), "none", "unknown".
    value: the Python constant when it is one (constexprs, literals), a Sym, or UNKNOWN.
    weak: a Python scalar (literal or constexpr): it does not take part in dtype promotion
          against a tensor of the same or a higher kind, as in Triton's semantic.py.

    Immutable by convention. Not a frozen dataclass: one is built per expression per
    configuration, and a frozen dataclass's __init__ (object.__setattr__ per field) cost three
    times this one's.
    """

    __slots__ = ("dtype", "items", "kind", "shape", "value", "weak")

    def __init__(self, shape: tuple | None = None, dtype: str | None = None, kind: str = "tensor",
                 value: Any = UNKNOWN, weak: bool = False, items: tuple = ()):
        self.shape = shape
        self.dtype = dtype
        self.kind = kind
        self.value = value
        self.weak = weak
        self.items = items

    def _key(self):
        return (self.shape, self.dtype, self.kind, self.value, self.weak, self.items)

    def __eq__(self, other):
        if other.__class__ is not Abs:
            return NotImplemented
        # As tuples, like the dataclass it replaced: element identity first, so a NaN equals itself.
        return self is other or self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"Abs(shape={self.shape!r}, dtype={self.dtype!r}, kind={self.kind!r}, value={self.value!r}, "
                f"weak={self.weak!r}, items={self.items!r})")

    @property
    def is_block(self) -> bool:
        return self.shape is not None and len(self.shape) > 0

    @property
    def shape_known(self) -> bool:
        if self.kind == "tuple":
            return all(i.shape_known for i in self.items)
        if self.kind in ("dtype", "none"):
            return True
        return self.shape is not None and all(d is not None for d in self.shape)

    @property
    def constant(self) -> bool:
        """A weak scalar whose Python value is known (not a symbol): conditions on it are decided."""
        return self.weak and self.value is not UNKNOWN and not isinstance(self.value, Sym)

    def describe(self) -> str:
        return describe(self)


UNKNOWN_ABS = Abs(kind="unknown")
NONE_ABS = Abs(shape=(), kind="none", value=None, weak=True)


class _NotRun:
    __slots__ = ()

    def __repr__(self) -> str:
        return "not run"


NOT_RUN: Any = _NotRun()  # the value of an expression a configuration does not execute


def known_scalar(a: Abs) -> bool:
    """A scalar whose Python value is known: a constexpr or literal (weak), or a runtime argument
    whose number the configuration gives (not weak: it only feeds values, never shapes or branches)."""
    return (a.shape == () and a.kind in ("tensor", "none") and a.value is not UNKNOWN
            and not isinstance(a.value, Sym))


def shape_dim(a: Abs):
    """A value as a block dimension: only a constexpr or literal can be one (an int or a Sym)."""
    return dim_of(a.value) if a.weak else None


def _fmt_dim(d) -> str:
    return "?" if d is None else str(d)


def describe(a: Abs) -> str:
    """`[128, 256] fp32`, `int32` (a scalar), `block_ptr [64, 64] fp16`, `(…, …)`."""
    if a.kind == "tuple":
        return "(" + ", ".join(describe(i) for i in a.items) + ")"
    if a.kind == "dtype":
        return f"dtype {a.value if a.value is not UNKNOWN else '?'}"
    if a.kind == "none":
        return "None"
    if a.kind == "unknown" or a.shape is None:
        return "?" if a.dtype is None else f"? {a.dtype}"
    dt = a.dtype or "?"
    if a.kind in ("block_ptr", "descriptor"):
        return f"{a.kind} [{', '.join(_fmt_dim(d) for d in a.shape)}] {dt}"
    if not a.shape:
        if a.weak and a.value is not UNKNOWN and not isinstance(a.value, Sym):
            return f"constexpr {a.value!r}"
        return a.dtype or "scalar ?"
    return f"[{', '.join(_fmt_dim(d) for d in a.shape)}] {dt}"


def shape_text(shape) -> str:
    return "[" + ", ".join(_fmt_dim(d) for d in shape) + "]" if shape is not None else "?"


_CONSTS: dict = {}


def const(v) -> Abs:
    """A Python constant as Triton sees it: a weak scalar (shared: Abs values are immutable)."""
    key = (v.__class__, v)
    try:
        return _CONSTS[key]
    except KeyError:
        pass
    except TypeError:  # unhashable: never cached
        return _const(v)
    a = _const(v)
    if len(_CONSTS) < 4096:  # literals and constexpr values of the files seen: a small set
        _CONSTS[key] = a
    return a


def _const(v) -> Abs:
    if isinstance(v, Sym):
        return Abs((), "int32", value=v, weak=True)
    if v is None:
        return NONE_ABS
    if isinstance(v, str) and normalize_dtype(v) and v in DTYPE_NAMES.values():
        return Abs((), None, kind="tensor", value=v, weak=True)
    return Abs((), literal_dtype(v), value=v, weak=True)


# ---------------------------------------------------------------------------------------------
# shapes


class ShapeConflict(Exception):
    def __init__(self, index: int, left, right):
        super().__init__(f"dimension {index}: {left} vs {right}")
        self.index, self.left, self.right = index, left, right


def broadcast(a: tuple | None, b: tuple | None) -> tuple | None:
    """Triton's broadcast of two block shapes (semantic.broadcast_impl_value); raises ShapeConflict
    only when both dimensions are known numbers that differ and neither is 1."""
    if a is None or b is None:
        return None
    if not a:
        return b
    if not b:
        return a
    if len(a) < len(b):
        a = (1,) * (len(b) - len(a)) + tuple(a)
    elif len(b) < len(a):
        b = (1,) * (len(a) - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        elif isinstance(x, int) and isinstance(y, int):
            raise ShapeConflict(i, x, y)
        else:
            out.append(None)  # symbolic or unknown: could be equal, could be 1
    return tuple(out)


def dim_of(v):
    """A constant as a block dimension: an int or a Sym; None for anything else."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, Sym)):
        return v
    return None


def _sym_arith(op: str, x, y):
    """Arithmetic where at least one side is a Sym: a readable expression, lightly simplified."""
    if op == "+" and x == 0:
        return y
    if op in ("+", "-") and y == 0:
        return x
    if op == "*" and (x == 1 or y == 1):
        return y if x == 1 else x
    if op in ("//", "/") and y == 1:
        return x

    def wrap(v):
        s = str(v)
        return f"({s})" if any(c in s for c in "+-*/ ") else s

    return Sym(f"{wrap(x)}{op}{wrap(y)}")


def scalar_value(op: str, a: Abs, b: Abs):
    """The value of `a op b`: constant arithmetic on two constexprs (symbols included), or on two
    scalars whose numbers are known (a runtime size with a constexpr: `K // BLOCK_K`)."""
    if a.weak and b.weak:
        return value_op(op, a.value, b.value)
    if known_scalar(a) and known_scalar(b):
        return value_op(op, a.value, b.value)
    return UNKNOWN


def value_op(op: str, x, y):
    """`x op y` on constant values, symbols included (`BLOCK_M * 2` → Sym("BLOCK_M*2"))."""
    if x is UNKNOWN or y is UNKNOWN:
        return UNKNOWN
    if isinstance(x, Sym) or isinstance(y, Sym):
        if op in ("+", "-", "*", "//") and all(isinstance(v, (int, Sym)) and not isinstance(v, bool) for v in (x, y)):
            return _sym_arith(op, x, y)
        return UNKNOWN
    if all(isinstance(v, (int, float, bool)) for v in (x, y)):
        return binary(op, x, y)
    if op in ("==", "!=") and isinstance(x, str) and isinstance(y, str):
        return binary(op, x, y)
    return UNKNOWN


def join(a: Abs, b: Abs) -> Abs:
    """What is certain of a value that is `a` on one path and `b` on another."""
    if a == b:
        return a
    if a.kind != b.kind:
        return UNKNOWN_ABS
    if a.kind == "tuple":
        if len(a.items) != len(b.items):
            return UNKNOWN_ABS
        return Abs(kind="tuple", items=tuple(join(x, y) for x, y in zip(a.items, b.items)))
    shape = None
    if a.shape is not None and b.shape is not None and len(a.shape) == len(b.shape):
        shape = tuple(x if x == y else None for x, y in zip(a.shape, b.shape))
    return Abs(shape, a.dtype if a.dtype == b.dtype else None, a.kind,
               a.value if (a.value is b.value or (type(a.value) is type(b.value) and a.value == b.value)) else UNKNOWN,
               a.weak and b.weak)


def join_env(a: dict, b: dict) -> dict:
    """The names after two paths meet. A name bound on one path only keeps that path's value:
    a use of it can only follow that path (`if HAS_BIAS: b_ptr = ...` ... `if HAS_BIAS: tl.load(b_ptr)`),
    anything else is a NameError Triton reports itself."""
    out = {}
    for k in a.keys() | b.keys():
        if k in a and k in b:
            out[k] = join(a[k], b[k])
        else:
            out[k] = a[k] if k in a else b[k]
    return out
