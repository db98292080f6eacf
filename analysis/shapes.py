"""Block shapes and element dtypes of every expression in a kernel: an abstract interpreter.

Triton kernels have a static type system that Python tools cannot see: every value is a scalar or
a block of a fixed shape (dimensions are constexpr expressions) with one element dtype. This module
runs each kernel body once per resolved configuration (`kernel.configs`; constexprs without a value
stay symbolic, so `tl.arange(0, BLOCK)` is `[BLOCK] int32`) and once fully symbolically, and records:
the value of each assignment target, of each expression it evaluated, and the shape conflicts the
compiler would refuse (broadcasts, masks, stored values, `tl.dot` operands).

Pure: no pygls, torch or triton import. Unknown stays unknown: a dimension or dtype that cannot be
known is None and is never reported as a conflict.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from .model import Config, Kernel, Module, is_kernel_definition, top_level_definitions
from .source import Source, dotted_name
from .values import UNKNOWN, Scope, evaluate

# ---------------------------------------------------------------------------------------------
# abstract values


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

    __slots__ = ("shape", "dtype", "kind", "value", "weak", "items")

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

    def describe(self) -> str:
        return describe(self)


UNKNOWN_ABS = Abs(kind="unknown")
NONE_ABS = Abs(shape=(), kind="none", value=None, weak=True)


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


# ---------------------------------------------------------------------------------------------
# dtypes

DTYPE_NAMES = {
    "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
    "float64": "fp64", "double": "fp64", "int1": "int1", "int8": "int8", "int16": "int16",
    "int32": "int32", "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
    "uint64": "uint64", "float8e4nv": "fp8e4nv", "float8e5": "fp8e5", "float8e4b15": "fp8e4b15",
    "float8e4b8": "fp8e4b8", "float8e5b16": "fp8e5b16", "void": "void",
}
_ALIASES = {
    "i1": "int1", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
    "u16": "uint16", "u32": "uint32", "u64": "uint64", "bool": "int1", "f16": "fp16", "f32": "fp32",
    "f64": "fp64", "fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64",
}
_WIDTH = {"int1": 1, "int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32,
          "uint64": 64, "fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64}


def normalize_dtype(text: str | None) -> str | None:
    """"*fp16", "fp16*", "torch.float16", "i32", "float32" → Triton's short names; None if unknown."""
    if not text:
        return None
    t = text.strip()
    ptr = False
    if t.startswith("*"):
        ptr, t = True, t[1:]
    elif t.endswith("*"):
        ptr, t = True, t[:-1]
    t = t.split(".")[-1].strip()
    name = _ALIASES.get(t) or DTYPE_NAMES.get(t) or (t if t in _WIDTH or t.startswith("fp8") else None)
    if name is None:
        return None
    return "*" + name if ptr else name


def _kind(dt: str) -> int:
    if dt == "int1":
        return 0
    if dt.startswith(("int", "uint")):
        return 1
    return 2


def _is_float(dt: str | None) -> bool:
    return dt is not None and (dt.startswith(("fp", "bf")))


def _is_int(dt: str | None) -> bool:
    return dt is not None and dt.startswith(("int", "uint"))


def _int_promote(a: str, b: str) -> str:
    if a == b:
        return a
    ua, ub = a.startswith("uint"), b.startswith("uint")
    wa, wb = _WIDTH.get(a, 32), _WIDTH.get(b, 32)
    if ua == ub:
        return a if wa >= wb else b
    u, s, wu, ws = (a, b, wa, wb) if ua else (b, a, wb, wa)
    return u if wu >= ws else s


def promote(a: Abs, b: Abs, div_or_mod: bool = False) -> str | None:
    """Triton's computation type (semantic.computation_type_impl), pointers aside."""
    da, db = a.dtype, b.dtype
    if da is None or db is None:
        return None
    if da.startswith("*") or db.startswith("*"):
        return da if da.startswith("*") else db
    if a.weak != b.weak:
        (s, sd), (t, td) = ((a, da), (b, db)) if a.weak else ((b, db), (a, da))
        if _kind(sd) <= _kind(td):
            da = db = td
    if "fp64" in (da, db):
        return "fp64"
    if div_or_mod and (_is_float(da) or _is_float(db)):
        return "fp32"
    if "fp32" in (da, db):
        return "fp32"
    if "fp16" in (da, db):
        return "fp16"
    if da == "bf16" and db == "bf16":
        return "bf16"
    if "bf16" in (da, db):
        return "fp32"
    if da.startswith("fp8") and db.startswith("fp8"):
        return da if da == db else "fp16"
    if _is_int(da) and _is_int(db) or da == "int1" or db == "int1":
        if da == "int1" and db == "int1":
            return "int1"
        if da == "int1":
            return db
        if db == "int1":
            return da
        return _int_promote(da, db)
    return None


def _literal_dtype(v) -> str | None:
    if isinstance(v, bool):
        return "int1"
    if isinstance(v, int):
        if -(2 ** 31) <= v < 2 ** 31:
            return "int32"
        if -(2 ** 63) <= v < 2 ** 63:
            return "int64"
        return "uint64"
    if isinstance(v, float):
        return "fp32"
    return None


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
    return Abs((), _literal_dtype(v), value=v, weak=True)


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


def _dim_of(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, Sym):
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

    return Sym(f"{wrap(x)}{op if op != '//' else '//'}{wrap(y)}")


_PY_BINOPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "//": lambda a, b: a // b,
    "/": lambda a, b: a / b, "%": lambda a, b: a % b, "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "**": lambda a, b: a ** b if abs(b) <= 64 else UNKNOWN,
}
_PY_CMP = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
           "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def _value_op(op: str, x, y):
    if x is UNKNOWN or y is UNKNOWN:
        return UNKNOWN
    if isinstance(x, Sym) or isinstance(y, Sym):
        if op in ("+", "-", "*", "//") and all(isinstance(v, (int, Sym)) and not isinstance(v, bool) for v in (x, y)):
            return _sym_arith(op, x, y)
        return UNKNOWN
    fn = _PY_BINOPS.get(op) or _PY_CMP.get(op)
    if fn is None or not all(isinstance(v, (int, float, bool)) for v in (x, y)):
        if op in ("==", "!=") and isinstance(x, str) and isinstance(y, str):
            return _PY_CMP[op](x, y)
        return UNKNOWN
    try:
        return fn(x, y)
    except Exception:
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


def _join_env(a: dict, b: dict) -> dict:
    out = {}
    for k in a.keys() | b.keys():
        if k in a and k in b:
            out[k] = join(a[k], b[k])
        else:
            out[k] = UNKNOWN_ABS  # defined on one path only
    return out


# ---------------------------------------------------------------------------------------------
# results


@dataclass
class Problem:
    """A shape conflict the compiler would refuse, found in one configuration."""

    kind: str  # "broadcast", "mask", "other", "store_value", "dot_inner", "dot_rank", "dot_batch"
    node: Any  # the expression to underline
    message: str  # what conflicts, without the configuration
    shapes: tuple = ()
    operands: tuple = ()  # nodes of the operands involved


@dataclass
class RunResult:
    """One interpretation of a kernel: in one configuration, or symbolic (config None)."""

    config: Config | None
    label: str
    targets: dict = field(default_factory=dict)  # (start_byte, name) of an assignment target → Abs
    exprs: dict = field(default_factory=dict)  # (start_byte, end_byte) of an expression → Abs
    problems: dict = field(default_factory=dict)  # (start_byte, kind) → Problem
    returns: Abs | None = None

    def at(self, node) -> Abs | None:
        return self.exprs.get((node.start_byte, node.end_byte))


class KernelShapes:
    """Every run of one kernel. The symbolic run is made on first use: rules need only the
    configurations, the editor (hover, inlay hints) wants the symbolic shapes too."""

    def __init__(self, kernel: Kernel, per_config: list[RunResult], make_symbolic, symbolic: RunResult | None = None):
        self.kernel = kernel
        self.per_config = per_config  # one per entry of kernel.configs (identical constexprs share a run)
        self._make_symbolic = make_symbolic
        self._symbolic = symbolic

    @property
    def symbolic(self) -> RunResult:
        if self._symbolic is None:
            self._symbolic = self._make_symbolic()
        return self._symbolic

    def results(self) -> list[RunResult]:
        return self.per_config or [self.symbolic]


# ---------------------------------------------------------------------------------------------
# the interpreter

_REDUCE = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"}
_SCAN = {"cumsum", "cumprod", "associative_scan", "sort", "flip"}
_ELEMENTWISE_1 = {
    "exp", "exp2", "log", "log2", "log1p", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "tan", "abs", "floor", "ceil",
    "erf", "sigmoid", "softmax", "tanh", "neg", "trunc", "round", "fast_expf", "fast_dividef", "isnan", "isinf",
    "signbit", "relu", "gelu", "popc", "clz", "math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt",
    "math.rsqrt", "math.sin", "math.cos", "math.abs", "math.floor", "math.ceil", "math.erf", "math.log1p",
    "math.sqrt_rn", "math.tanh", "math.trunc", "math.round",
}
_ELEMENTWISE_N = {"maximum", "minimum", "clamp", "fma", "fdiv", "div_rn", "umulhi", "math.fma", "math.fdiv",
                  "math.div_rn", "math.umulhi", "math.maximum", "math.minimum", "math.pow", "pow", "atan2"}
_SCALAR_I32 = {"program_id", "num_programs"}
_IDENTITY = {"multiple_of", "max_contiguous", "max_constancy", "assume"}
_NOTHING = {"static_assert", "static_print", "device_print", "device_assert", "debug_barrier", "store"}
_ATOMIC = {"atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas"}
_METHOD_TL = {"to": "cast", "sum": "sum", "max": "max", "min": "min", "argmax": "argmax", "argmin": "argmin",
              "reshape": "reshape", "view": "view", "trans": "trans", "permute": "permute",
              "broadcast_to": "broadcast_to", "expand_dims": "expand_dims", "ravel": "ravel", "split": "split",
              "cumsum": "cumsum", "cumprod": "cumprod", "reduce": "reduce", "xor_sum": "xor_sum", "sort": "sort",
              "flip": "flip", "exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt",
              "abs": "abs", "sigmoid": "sigmoid", "cast": "cast", "associative_scan": "associative_scan"}

MAX_LOOP_PASSES = 6
MAX_CALL_DEPTH = 4


class _Return(Exception):
    pass


class Interpreter:
    """Interprets one function body in one configuration."""

    def __init__(self, module: Module, src: Source, consts: dict, run: RunResult | None,
                 arg_dtypes: dict | None = None, jit_functions: dict | None = None, depth: int = 0,
                 memo: dict | None = None):
        self.module = module
        self.src = src
        self.al = module.aliases
        memo = module.__dict__.get("_tritonlens_tl_names")
        if memo is None:
            memo = module.__dict__["_tritonlens_tl_names"] = {}
        self._tl_memo = memo
        self.consts = consts  # constexpr name → value (or Sym)
        self.run = run  # where to record; None inside helpers
        self.arg_dtypes = arg_dtypes or {}
        self.jit = jit_functions if jit_functions is not None else {}
        self.depth = depth
        self.memo = memo if memo is not None else {}
        self.returns: list[Abs] = []
        # The tree does not change between configurations, loop passes or rules: what each call,
        # operator and assignment node is made of is read from it once.
        self._call_parts = src.memo_for("shapes.call")
        self._binop_parts = src.memo_for("shapes.binop")
        self._assign_parts = src.memo_for("shapes.assign")

    def tl_name(self, dotted: str | None) -> str | None:
        """Aliases.tl_function, memoised per module (it is asked for every name and call)."""
        try:
            return self._tl_memo[dotted]
        except KeyError:
            r = self._tl_memo[dotted] = self.al.tl_function(dotted)
            return r

    # -- recording ----------------------------------------------------------------------------

    def _rec(self, node, a: Abs) -> Abs:
        if self.run is not None:
            self.run.exprs[(node.start_byte, node.end_byte)] = a
        return a

    def problem(self, kind: str, node, message: str, shapes=(), operands=()) -> None:
        if self.run is not None:
            self.run.problems[(node.start_byte, kind)] = Problem(kind, node, message, tuple(shapes), tuple(operands))

    # -- statements ---------------------------------------------------------------------------

    def body(self, block, env: dict) -> dict:
        for stmt in block.named_children:
            env = self.stmt(stmt, env)
        return env

    def stmt(self, s, env: dict) -> dict:
        t = s.type
        if t == "expression_statement":
            for e in s.named_children:
                if e.type == "assignment":
                    self.assign(e, env)
                elif e.type == "augmented_assignment":
                    self.aug_assign(e, env)
                else:
                    self.expr(e, env)
            return env
        if t == "if_statement":
            return self.if_stmt(s, env)
        if t == "for_statement":
            return self.for_stmt(s, env)
        if t == "while_statement":
            cond = s.child_by_field_name("condition")
            return self.loop(s, s.child_by_field_name("body"), env, cond=cond)
        if t == "return_statement":
            vals = s.named_children
            if not vals:
                self.returns.append(NONE_ABS)
            else:
                self.returns.append(self.expr(vals[0], env))
            return env
        if t == "block":
            return self.body(s, env)
        if t in ("with_statement",):
            b = s.child_by_field_name("body")
            return self.body(b, env) if b is not None else env
        return env

    def bind(self, target, value: Abs, env: dict, stmt) -> None:
        t = target.type
        if t == "identifier":
            name = self.src.text_of(target)
            env[name] = value
            if self.run is not None:
                self.run.targets[(target.start_byte, name)] = value
                self._rec(target, value)
        elif t in ("pattern_list", "tuple_pattern", "list_pattern"):
            items = [c for c in target.named_children]
            vals = value.items if value.kind == "tuple" and len(value.items) == len(items) else [UNKNOWN_ABS] * len(items)
            for item, v in zip(items, vals):
                self.bind(item, v, env, stmt)

    def assign(self, e, env: dict) -> None:
        parts = self._assign_parts.get(e)
        if parts is None:
            ann = e.child_by_field_name("type")
            parts = self._assign_parts[e] = (e.child_by_field_name("left"), e.child_by_field_name("right"),
                                             ann is not None and "constexpr" in self.src.text_of(ann))
        left, right, constexpr_ann = parts
        if right is None:
            return
        if right.type == "assignment":  # a = b = value
            self.assign(right, env)
            inner = right.child_by_field_name("left")
            value = env.get(self.src.text_of(inner), UNKNOWN_ABS) if inner is not None and inner.type == "identifier" else UNKNOWN_ABS
        else:
            value = self.expr(right, env)
        if constexpr_ann and value.kind == "tensor":
            value = Abs((), value.dtype, value=value.value, weak=True)
        if left is not None:
            self.bind(left, value, env, e)

    def aug_assign(self, e, env: dict) -> None:
        left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
        op = self.src.text_of(e.child_by_field_name("operator")).rstrip("=")
        if left is None or right is None:
            return
        cur = self.expr(left, env)
        rhs = self.expr(right, env)
        value = self.binop(op, cur, rhs, e, left, right)
        if left.type == "identifier":
            self.bind(left, value, env, e)

    def if_stmt(self, s, env: dict) -> dict:
        cond = s.child_by_field_name("condition")
        c = self.expr(cond, env) if cond is not None else UNKNOWN_ABS
        cons = s.child_by_field_name("consequence")
        alts = [a for a in s.children_by_field_name("alternative")]
        known = c.value is not UNKNOWN and not isinstance(c.value, Sym) and c.weak
        if known:
            if c.value:
                return self.body(cons, env) if cons is not None else env
            for alt in alts:
                if alt.type == "elif_clause":
                    ec = alt.child_by_field_name("condition")
                    ev = self.expr(ec, env) if ec is not None else UNKNOWN_ABS
                    if ev.value is UNKNOWN or isinstance(ev.value, Sym) or not ev.weak:
                        return self._branches([alt.child_by_field_name("consequence")] + self._rest(alts, alt), env)
                    if ev.value:
                        b = alt.child_by_field_name("consequence")
                        return self.body(b, env) if b is not None else env
                elif alt.type == "else_clause":
                    b = alt.child_by_field_name("body")
                    return self.body(b, env) if b is not None else env
            return env
        blocks = [cons]
        has_else = False
        for alt in alts:
            if alt.type == "elif_clause":
                ec = alt.child_by_field_name("condition")
                if ec is not None:
                    self.expr(ec, env)
                blocks.append(alt.child_by_field_name("consequence"))
            elif alt.type == "else_clause":
                blocks.append(alt.child_by_field_name("body"))
                has_else = True
        if not has_else:
            blocks.append(None)
        return self._branches(blocks, env)

    @staticmethod
    def _rest(alts, alt):
        out, after = [], False
        for a in alts:
            if after:
                out.append(a.child_by_field_name("consequence") if a.type == "elif_clause" else a.child_by_field_name("body"))
            if a == alt:
                after = True
        if not any(a.type == "else_clause" for a in alts):
            out.append(None)
        return out

    def _branches(self, blocks, env: dict) -> dict:
        result = None
        for b in blocks:
            out = self.body(b, dict(env)) if b is not None else dict(env)
            result = out if result is None else _join_env(result, out)
        return result if result is not None else env

    def for_stmt(self, s, env: dict) -> dict:
        right = s.child_by_field_name("right")
        left = s.child_by_field_name("left")
        var = UNKNOWN_ABS
        if right is not None:
            if right.type == "call":
                fname = dotted_name(right.child_by_field_name("function"), self.src)
                tl = self.tl_name(fname)
                argn = right.child_by_field_name("arguments")
                for a in (argn.named_children if argn else []):
                    self.expr(a.child_by_field_name("value") if a.type == "keyword_argument" else a, env)
                if fname == "range" or tl in ("range", "static_range"):
                    var = Abs((), "int32")
                    vals = [self.expr(a, env) for a in (argn.named_children if argn else []) if a.type != "keyword_argument"]
                    if any(v.dtype == "int64" for v in vals):
                        var = Abs((), "int64")
            else:
                self.expr(right, env)
        if left is not None and left.type == "identifier":
            name = self.src.text_of(left)
            env = dict(env)
            env[name] = var
            if self.run is not None:
                self.run.targets[(left.start_byte, name)] = var
                self._rec(left, var)
        return self.loop(s, s.child_by_field_name("body"), env)

    def loop(self, s, body, env: dict, cond=None) -> dict:
        """Loop-carried values: iterate the body until what flows around the back edge is stable."""
        if body is None:
            return env
        cur = env
        for _ in range(MAX_LOOP_PASSES):
            if self.run is not None:
                # Only the converged pass speaks: drop what earlier passes found in this loop.
                for key in [k for k in self.run.problems if s.start_byte <= k[0] < s.end_byte]:
                    del self.run.problems[key]
            if cond is not None:
                self.expr(cond, cur)
            out = self.body(body, dict(cur))
            new = _join_env(cur, {k: out[k] for k in out})
            # Names first defined in the loop are not carried in when they were absent before it.
            for k in list(new):
                if k not in cur:
                    new[k] = out[k]
            if new == cur:
                return new
            cur = new
        return {k: (v if k in env and env[k] == v else UNKNOWN_ABS) for k, v in cur.items()}

    # -- expressions --------------------------------------------------------------------------

    def expr(self, n, env: dict) -> Abs:
        if n is None:
            return UNKNOWN_ABS
        fn = _DISPATCH.get(n.type)
        a = fn(self, n, env) if fn is not None else UNKNOWN_ABS
        run = self.run
        if run is not None:
            run.exprs[(n.start_byte, n.end_byte)] = a
        return a

    def e_integer(self, n, env):
        text = self.src.text_of(n).replace("_", "").rstrip("lL")
        try:
            return const(int(text, 0))
        except ValueError:
            return UNKNOWN_ABS

    def e_float(self, n, env):
        try:
            return const(float(self.src.text_of(n).replace("_", "")))
        except ValueError:
            return UNKNOWN_ABS

    def e_true(self, n, env):
        return const(True)

    def e_false(self, n, env):
        return const(False)

    def e_none(self, n, env):
        return NONE_ABS

    def e_string(self, n, env):
        text = self.src.text_of(n)
        if len(text) >= 2 and text[0] in "'\"" and text[-1] == text[0]:
            return Abs((), None, value=text[1:-1], weak=True)
        return UNKNOWN_ABS

    def e_paren(self, n, env):
        kids = n.named_children
        return self.expr(kids[0], env) if kids else UNKNOWN_ABS

    def e_tuple(self, n, env):
        return Abs(kind="tuple", items=tuple(self.expr(c, env) for c in n.named_children if c.type != "comment"))

    def e_identifier(self, n, env):
        name = self.src.text_of(n)
        if name in env:
            return env[name]
        if name in self.consts:
            return const(self.consts[name])
        if name in ("True", "False", "None"):
            return const({"True": True, "False": False, "None": None}[name])
        tl = self.tl_name(name)
        if tl is not None:
            return self.tl_attr(tl)
        if name in self.module.constants:
            vals = evaluate(self.module.constants[name][-1], self.module.src, Scope(lambda _n: None))
            if len(vals) == 1 and vals[0] is not UNKNOWN:
                return const(vals[0])
        return UNKNOWN_ABS

    def tl_attr(self, name: str) -> Abs:
        short = name.split(".")[-1]
        if short in DTYPE_NAMES and "." not in name:
            return Abs(kind="dtype", value=DTYPE_NAMES[short])
        return UNKNOWN_ABS

    def e_attribute(self, n, env):
        dotted = dotted_name(n, self.src)
        tl = self.tl_name(dotted)
        if tl is not None:
            return self.tl_attr(tl)
        obj = self.expr(n.child_by_field_name("object"), env)
        attr = self.src.text_of(n.child_by_field_name("attribute"))
        if attr == "dtype" and obj.kind in ("tensor", "block_ptr"):
            return Abs(kind="dtype", value=obj.dtype if obj.dtype is not None else UNKNOWN)
        if attr == "element_ty" and obj.kind == "dtype":
            v = obj.value
            return Abs(kind="dtype", value=v[1:] if isinstance(v, str) and v.startswith("*") else UNKNOWN)
        if attr == "shape" and obj.kind == "tensor" and obj.shape is not None:
            return Abs(kind="tuple", items=tuple(const(d) if d is not None else Abs((), "int32") for d in obj.shape))
        if attr == "T" and obj.kind == "tensor" and obj.shape is not None and len(obj.shape) == 2:
            return Abs(obj.shape[::-1], obj.dtype)
        return UNKNOWN_ABS

    def e_subscript(self, n, env):
        base = self.expr(n.child_by_field_name("value"), env)
        subs = n.children_by_field_name("subscript")
        if base.kind == "tuple":
            if len(subs) == 1:
                idx = self.expr(subs[0], env)
                if isinstance(idx.value, int) and not isinstance(idx.value, bool) and -len(base.items) <= idx.value < len(base.items):
                    return base.items[idx.value]
            return UNKNOWN_ABS
        if base.kind != "tensor" or base.shape is None:
            for s in subs:
                if s.type != "slice":
                    self.expr(s, env)
            return UNKNOWN_ABS
        shape = list(base.shape)
        out, i = [], 0
        for s in subs:
            if s.type == "none" or (s.type == "identifier" and self.src.text_of(s) == "None"):
                out.append(1)
            elif s.type == "slice" and not s.named_children:
                if i >= len(shape):
                    return UNKNOWN_ABS
                out.append(shape[i])
                i += 1
            elif s.type == "ellipsis":
                rest = len(shape) - i - sum(1 for x in subs[subs.index(s) + 1:] if x.type == "slice")
                out.extend(shape[i:i + rest])
                i += rest
            else:
                self.expr(s, env)
                return UNKNOWN_ABS  # integer indexing or a real slice: not a block operation Triton has
        out.extend(shape[i:])
        return Abs(tuple(out), base.dtype)

    def e_unary(self, n, env):
        op = self.src.text_of(n.child_by_field_name("operator"))
        a = self.expr(n.child_by_field_name("argument"), env)
        if a.kind != "tensor":
            return UNKNOWN_ABS
        v = UNKNOWN
        if a.value is not UNKNOWN and isinstance(a.value, (int, float)) and not isinstance(a.value, bool):
            v = {"-": lambda x: -x, "+": lambda x: x, "~": lambda x: ~x if isinstance(x, int) else UNKNOWN}[op](a.value)
        elif isinstance(a.value, Sym) and op == "-":
            v = Sym(f"-{a.value}")
        return Abs(a.shape, a.dtype, value=v, weak=a.weak)

    def e_not(self, n, env):
        a = self.expr(n.child_by_field_name("argument"), env)
        v = (not a.value) if a.value is not UNKNOWN and not isinstance(a.value, Sym) else UNKNOWN
        return Abs(a.shape, "int1" if a.shape is not None else None, value=v, weak=a.weak)

    def e_boolean(self, n, env):
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        a, b = self.expr(left, env), self.expr(right, env)
        op = self.src.text_of(n.child_by_field_name("operator"))
        v = UNKNOWN
        if a.weak and b.weak and a.value is not UNKNOWN and b.value is not UNKNOWN and not isinstance(a.value, Sym) and not isinstance(b.value, Sym):
            v = (a.value and b.value) if op == "and" else (a.value or b.value)
        try:
            shape = broadcast(a.shape, b.shape)
        except ShapeConflict:
            shape = None
        return Abs(shape, "int1" if shape == () else None, value=v, weak=a.weak and b.weak)

    def e_binary(self, n, env):
        parts = self._binop_parts.get(n)
        if parts is None:
            parts = self._binop_parts[n] = (n.child_by_field_name("left"), n.child_by_field_name("right"),
                                            self.src.text_of(n.child_by_field_name("operator")))
        left, right, op = parts
        return self.binop(op, self.expr(left, env), self.expr(right, env), n, left, right)

    def binop(self, op: str, a: Abs, b: Abs, node, left, right) -> Abs:
        if a.kind != "tensor" or b.kind != "tensor":
            if a.kind == "tuple" and b.kind == "tuple" and op == "+":
                return Abs(kind="tuple", items=a.items + b.items)
            return UNKNOWN_ABS
        try:
            shape = broadcast(a.shape, b.shape)
        except ShapeConflict as c:
            self.problem("broadcast", node, f"`{op}` of a {shape_text(a.shape)} block and a {shape_text(b.shape)} block: "
                         f"dimension {c.index} is {c.left} on the left and {c.right} on the right",
                         (a.shape, b.shape), (left, right))
            shape = None
        if op in ("/",):
            dt = promote(a, b, div_or_mod=True)
            if dt is not None and _is_int(dt) or dt == "int1":
                dt = "fp32"
        elif op == "%":
            dt = promote(a, b, div_or_mod=True)
        elif op in ("&", "|", "^", "<<", ">>"):
            dt = promote(a, b)
        else:
            dt = promote(a, b)
        v = _value_op(op, a.value, b.value) if a.weak and b.weak else UNKNOWN
        if a.weak and b.weak and v is not UNKNOWN:
            if not isinstance(v, Sym):
                dt = _literal_dtype(v) or dt
        return Abs(shape, dt, value=v, weak=a.weak and b.weak)

    def e_compare(self, n, env):
        kids = n.named_children
        ops = [c for c in n.children if not c.is_named]
        vals = [self.expr(k, env) for k in kids]
        if len(vals) != 2 or len(ops) != 1:
            return Abs(None, "int1")
        a, b = vals
        op = self.src.text_of(ops[0])
        if a.kind == "none" or b.kind == "none" or op in ("is", "is not", "in", "not in"):
            v = UNKNOWN
            if op in ("is", "is not") and (a.kind == "none" or b.kind == "none") and a.kind != "unknown" and b.kind != "unknown":
                same = a.kind == b.kind
                v = same if op == "is" else not same
            return Abs((), "int1", value=v, weak=True)
        if a.kind == "dtype" and b.kind == "dtype":
            v = _value_op(op, a.value, b.value) if a.value is not UNKNOWN and b.value is not UNKNOWN else UNKNOWN
            return Abs((), "int1", value=v, weak=True)
        if a.kind != "tensor" or b.kind != "tensor":
            return Abs(None, "int1")
        try:
            shape = broadcast(a.shape, b.shape)
        except ShapeConflict as c:
            self.problem("broadcast", n, f"`{op}` of a {shape_text(a.shape)} block and a {shape_text(b.shape)} block: "
                         f"dimension {c.index} is {c.left} on the left and {c.right} on the right",
                         (a.shape, b.shape), (kids[0], kids[1]))
            shape = None
        v = _value_op(op, a.value, b.value) if a.weak and b.weak else UNKNOWN
        return Abs(shape, "int1", value=v, weak=a.weak and b.weak)

    def e_conditional(self, n, env):
        kids = n.named_children
        if len(kids) != 3:
            return UNKNOWN_ABS
        c = self.expr(kids[1], env)
        if c.weak and c.value is not UNKNOWN and not isinstance(c.value, Sym):
            return self.expr(kids[0] if c.value else kids[2], env)
        return join(self.expr(kids[0], env), self.expr(kids[2], env))

    def e_list(self, n, env):
        return self.e_tuple(n, env)

    # -- calls --------------------------------------------------------------------------------

    def _split_call(self, n):
        fnode = n.child_by_field_name("function")
        argnode = n.child_by_field_name("arguments")
        args, kwargs = [], {}
        for a in (argnode.named_children if argnode else []):
            if a.type == "keyword_argument":
                kn = a.child_by_field_name("name")
                if kn is not None:
                    kwargs[self.src.text_of(kn)] = a.child_by_field_name("value")
            elif a.type in ("list_splat", "dictionary_splat"):
                splat = [x.child_by_field_name("value") if x.type == "keyword_argument" else x for x in argnode.named_children]
                return fnode, None, None, splat, None
            elif a.type != "comment":
                args.append(a)
        dotted = dotted_name(fnode, self.src) if fnode is not None and fnode.type in ("attribute", "identifier") else None
        return fnode, tuple(args), kwargs, None, dotted

    def e_call(self, n, env):
        parts = self._call_parts.get(n)
        if parts is None:
            parts = self._call_parts[n] = self._split_call(n)
        fnode, args, kwargs, splat, dotted = parts
        if splat is not None:
            for x in splat:
                self.expr(x, env)
            return UNKNOWN_ABS
        if fnode is None:
            return UNKNOWN_ABS
        tl = self.tl_name(dotted)
        if tl is not None:
            return self.tl_call(tl, n, args, kwargs, env, None)
        ta = self.al.triton_attr(dotted)
        if ta in ("cdiv", "next_power_of_2"):
            return self.tl_call(ta, n, args, kwargs, env, None)
        if fnode.type == "attribute":
            attr = self.src.text_of(fnode.child_by_field_name("attribute"))
            if attr in _METHOD_TL:
                obj = self.expr(fnode.child_by_field_name("object"), env)
                if obj.kind == "tensor":
                    return self.tl_call(_METHOD_TL[attr], n, args, kwargs, env, obj)
            if attr == "advance":
                obj = self.expr(fnode.child_by_field_name("object"), env)
            if attr in ("load",):
                obj = self.expr(fnode.child_by_field_name("object"), env)
                if obj.kind == "descriptor":
                    self._eval_args(args, kwargs, env)
                    return Abs(obj.shape, obj.dtype)
            self._eval_args(args, kwargs, env)
            return UNKNOWN_ABS
        if fnode.type == "identifier":
            name = self.src.text_of(fnode)
            if name in self.jit:
                return self.jit_call(name, n, args, kwargs, env)
            if name in ("min", "max") and args and not kwargs:
                vals = [self.expr(a, env) for a in args]
                if all(v.weak and isinstance(v.value, (int, float)) for v in vals):
                    return const((min if name == "min" else max)(v.value for v in vals))
                return UNKNOWN_ABS
            if name == "int" and len(args) == 1:
                v = self.expr(args[0], env)
                if v.weak and isinstance(v.value, (int, float)):
                    return const(int(v.value))
                return UNKNOWN_ABS
        self._eval_args(args, kwargs, env)
        return UNKNOWN_ABS

    def _eval_args(self, args, kwargs, env):
        vals = [self.expr(a, env) for a in args]
        kv = {k: self.expr(v, env) for k, v in kwargs.items()}
        return vals, kv

    def jit_call(self, name: str, n, args, kwargs, env) -> Abs:
        vals, kv = self._eval_args(args, kwargs, env)
        if self.depth >= MAX_CALL_DEPTH:
            return UNKNOWN_ABS
        fn, src = self.jit[name]
        key = (name, tuple(vals), tuple(sorted(kv.items())))
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = UNKNOWN_ABS  # recursion: unknown
        params = fn.child_by_field_name("parameters")
        env2: dict = {}
        consts: dict = {}
        i = 0
        for p in (params.named_children if params else []):
            if p.type == "identifier":
                pname, ann, default = src.text_of(p), None, None
            elif p.type in ("typed_parameter",):
                idn = next((c for c in p.named_children if c.type == "identifier"), None)
                pname, ann, default = (src.text_of(idn) if idn else None), p.child_by_field_name("type"), None
            elif p.type in ("default_parameter", "typed_default_parameter"):
                pname, ann, default = src.text_of(p.child_by_field_name("name")), p.child_by_field_name("type"), p.child_by_field_name("value")
            else:
                return UNKNOWN_ABS
            if pname is None:
                continue
            if i < len(vals):
                v = vals[i]
            elif pname in kv:
                v = kv[pname]
            elif default is not None:
                sub = Interpreter(self.module, src, {}, None, jit_functions=self.jit, depth=self.depth + 1, memo=self.memo)
                v = sub.expr(default, {})
            else:
                v = UNKNOWN_ABS
            i += 1
            if ann is not None and "constexpr" in src.text_of(ann):
                consts[pname] = v.value if v.value is not UNKNOWN else Sym(pname)
            else:
                env2[pname] = v
        sub = Interpreter(self.module, src, consts, None, arg_dtypes=None, jit_functions=self.jit,
                          depth=self.depth + 1, memo=self.memo)
        body = fn.child_by_field_name("body")
        if body is not None:
            sub.body(body, env2)
        out = NONE_ABS
        if sub.returns:
            out = sub.returns[0]
            for r in sub.returns[1:]:
                out = join(out, r)
        self.memo[key] = out
        return out

    def tl_call(self, name: str, n, args, kwargs, env, obj: Abs | None) -> Abs:
        """`obj` is the receiver of a method call (x.to(...)), standing for the first argument."""
        vals = [self.expr(a, env) for a in args]
        kv = {k: self.expr(v, env) for k, v in kwargs.items()}
        nodes = list(args)
        if obj is not None:
            vals = [obj] + vals
            nodes = [n.child_by_field_name("function").child_by_field_name("object")] + nodes

        def arg(i, kw=None):
            if kw is not None and kw in kv:
                return kv[kw]
            return vals[i] if i < len(vals) else None

        def argnode(i, kw=None):
            if kw is not None and kw in kwargs:
                return kwargs[kw]
            return nodes[i] if i < len(nodes) else None

        short = name
        if short in ("arange",):
            s, e = arg(0, "start"), arg(1, "end")
            if s is None or e is None:
                return UNKNOWN_ABS
            if s.value is UNKNOWN or e.value is UNKNOWN:
                return Abs((None,), "int32")
            return Abs((_dim_of(_value_op("-", e.value, s.value)),), "int32")
        if short in ("zeros", "full", "empty"):
            shp = arg(0, "shape")
            dt = arg(1, "dtype") if short in ("zeros", "empty") else arg(2, "dtype")
            return Abs(self._shape_arg(shp), self._dtype_arg(dt))
        if short in ("zeros_like", "full_like", "empty_like"):
            x = arg(0, "input")
            if x is None or x.kind != "tensor":
                return UNKNOWN_ABS
            dt = arg(2, "dtype") if short == "full_like" else arg(1, "dtype")
            return Abs(x.shape, self._dtype_arg(dt) if dt is not None and dt.kind != "none" else x.dtype)
        if short in _SCALAR_I32:
            return Abs((), "int32")
        if short in ("cdiv", "next_power_of_2"):
            if short == "cdiv" and len(vals) >= 2:
                a, b = vals[0], vals[1]
                if a.weak and b.weak and isinstance(a.value, int) and isinstance(b.value, int) and b.value:
                    return const(-(-a.value // b.value))
                return Abs((), promote(a, b) if a.kind == b.kind == "tensor" else None)
            if short == "next_power_of_2" and vals and vals[0].weak and isinstance(vals[0].value, int):
                v = vals[0].value
                return const(1 if v <= 1 else 1 << (v - 1).bit_length())
            return UNKNOWN_ABS
        if short == "load":
            return self._load(n, arg, argnode)
        if short == "store":
            self._store(n, arg, argnode)
            return NONE_ABS
        if short in _ATOMIC:
            p = arg(0, "pointer")
            if p is None or p.kind != "tensor":
                return UNKNOWN_ABS
            shape = p.shape
            for i, kw in ((1, "val"), (2, "mask")):
                v = arg(i, kw) if short != "atomic_cas" else arg(i + 1 if kw == "mask" else 2, kw)
                if v is not None and v.kind == "tensor":
                    try:
                        shape = broadcast(shape, v.shape)
                    except ShapeConflict:
                        shape = None
            dt = p.dtype[1:] if p.dtype and p.dtype.startswith("*") else None
            return Abs(shape, dt)
        if short in ("cast",):
            x, dt = arg(0, "input"), arg(1, "dtype")
            if x is None or x.kind != "tensor":
                return UNKNOWN_ABS
            return Abs(x.shape, self._dtype_arg(dt))
        if short == "bitcast" or (short == "cast" and "bitcast" in kv):
            x, dt = arg(0, "input"), arg(1, "dtype")
            return Abs(x.shape if x else None, self._dtype_arg(dt))
        if short == "where":
            c, x, y = arg(0, "condition"), arg(1, "x"), arg(2, "y")
            if c is None or x is None or y is None:
                return UNKNOWN_ABS
            shape = self._bcast_all(n, [c, x, y], [argnode(0, "condition"), argnode(1, "x"), argnode(2, "y")])
            return Abs(shape, promote(x, y) if x.kind == y.kind == "tensor" else None)
        if short in _REDUCE:
            return self._reduce(short, arg, kv)
        if short in _SCAN:
            x = arg(0, "input")
            if x is None or x.kind != "tensor":
                return UNKNOWN_ABS
            dt = x.dtype
            if short in ("cumsum", "cumprod") and dt is not None:
                dt = {"int1": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}.get(dt, dt)
            return Abs(x.shape, dt)
        if short in _ELEMENTWISE_1 or short.startswith(("math.", "extra.", "libdevice.")):
            if not vals:
                return UNKNOWN_ABS
            if short.split(".")[-1] in ("isnan", "isinf", "signbit"):
                return Abs(vals[0].shape, "int1")
            shape = self._bcast_all(n, vals, nodes)
            dt = vals[0].dtype
            for v in vals[1:]:
                dt = promote(Abs((), dt), v) if dt is not None else None
            return Abs(shape, dt)
        if short in _ELEMENTWISE_N:
            if not vals:
                return UNKNOWN_ABS
            shape = self._bcast_all(n, vals, nodes)
            dt = vals[0].dtype
            acc = vals[0]
            for v in vals[1:]:
                dt = promote(acc, v)
                acc = Abs(shape, dt)
            return Abs(shape, dt)
        if short in _IDENTITY:
            x = arg(0, "input")
            return x if x is not None else UNKNOWN_ABS
        if short in _NOTHING:
            return NONE_ABS
        if short == "dot":
            return self._dot(n, arg, argnode, kv)
        if short == "trans":
            x = arg(0, "input")
            if x is None or x.kind != "tensor" or x.shape is None:
                return UNKNOWN_ABS
            dims = self._int_list(vals[1:], kv.get("dims"))
            if dims is None:
                return UNKNOWN_ABS
            if not dims:
                if len(x.shape) != 2:
                    return Abs(None, x.dtype) if len(x.shape) != 1 else x
                return Abs(x.shape[::-1], x.dtype)
            return self._permute(x, dims)
        if short == "permute":
            x = arg(0, "input")
            if x is None or x.kind != "tensor" or x.shape is None:
                return UNKNOWN_ABS
            dims = self._int_list(vals[1:], kv.get("dims"))
            return self._permute(x, dims) if dims else Abs(None, x.dtype)
        if short in ("reshape", "view", "broadcast_to"):
            x = arg(0, "input")
            if x is None or x.kind != "tensor":
                return UNKNOWN_ABS
            shape = self._shape_list(vals[1:], kv.get("shape"))
            if short == "broadcast_to" and shape is not None and x.shape is not None:
                try:
                    broadcast(x.shape, shape)
                except ShapeConflict as c:
                    self.problem("broadcast", n, f"tl.broadcast_to of a {shape_text(x.shape)} block to {shape_text(shape)}: "
                                 f"dimension {c.index} is {c.left} vs {c.right}", (x.shape, shape))
            return Abs(shape, x.dtype)
        if short == "expand_dims":
            x, ax = arg(0, "input"), arg(1, "axis")
            if x is None or x.kind != "tensor" or x.shape is None or ax is None:
                return UNKNOWN_ABS
            axes = [i.value for i in ax.items] if ax.kind == "tuple" else [ax.value]
            if not all(isinstance(a, int) for a in axes):
                return Abs(None, x.dtype)
            shape = list(x.shape)
            for a in sorted(a if a >= 0 else a + len(shape) + len(axes) for a in axes):
                shape.insert(a, 1)
            return Abs(tuple(shape), x.dtype)
        if short == "ravel":
            x = arg(0, "x")
            if x is None or x.kind != "tensor" or x.shape is None:
                return UNKNOWN_ABS
            total = 1
            for d in x.shape:
                total = _value_op("*", total, d) if d is not None else UNKNOWN
            return Abs((_dim_of(total),), x.dtype)
        if short == "broadcast":
            if len(vals) < 2:
                return UNKNOWN_ABS
            shape = self._bcast_all(n, vals[:2], nodes[:2])
            return Abs(kind="tuple", items=(Abs(shape, vals[0].dtype), Abs(shape, vals[1].dtype)))
        if short == "join":
            if len(vals) < 2:
                return UNKNOWN_ABS
            shape = self._bcast_all(n, vals[:2], nodes[:2])
            return Abs(shape + (2,) if shape is not None else None, promote(vals[0], vals[1]))
        if short == "split":
            x = arg(0, "a")
            if x is None or x.kind != "tensor" or x.shape is None or not x.shape:
                return UNKNOWN_ABS
            half = Abs(x.shape[:-1], x.dtype)
            return Abs(kind="tuple", items=(half, half))
        if short == "interleave":
            if len(vals) < 2 or vals[0].shape is None:
                return UNKNOWN_ABS
            shape = self._bcast_all(n, vals[:2], nodes[:2])
            if not shape:
                return UNKNOWN_ABS
            return Abs(shape[:-1] + (_dim_of(_value_op("*", shape[-1], 2)) if shape[-1] is not None else None,), vals[0].dtype)
        if short == "make_block_ptr":
            base, bs = arg(0, "base"), arg(4, "block_shape")
            dt = base.dtype[1:] if base is not None and base.dtype and base.dtype.startswith("*") else None
            shape = self._shape_arg(bs)
            return Abs(shape, dt, kind="block_ptr")
        if short == "make_tensor_descriptor":
            base, bs = arg(0, "base"), arg(3, "block_shape")
            dt = base.dtype[1:] if base is not None and base.dtype and base.dtype.startswith("*") else None
            return Abs(self._shape_arg(bs), dt, kind="descriptor")
        if short == "advance":
            bp = arg(0, "base")
            return bp if bp is not None and bp.kind == "block_ptr" else UNKNOWN_ABS
        if short in ("rand", "randn", "randint", "rand4x", "randn4x"):
            off = arg(1, "offset")
            if off is None:
                return UNKNOWN_ABS
            dt = "fp32" if short.startswith("rand") and "int" not in short else "uint32"
            return Abs(off.shape, dt)
        if short == "histogram":
            nb = arg(1, "num_bins")
            return Abs((_dim_of(nb.value),) if nb is not None else None, "int32")
        if short == "gather":
            idx, src = arg(1, "index"), arg(0, "src")
            return Abs(idx.shape if idx is not None else None, src.dtype if src is not None else None)
        if short == "constexpr" and vals:
            v = vals[0]
            return Abs((), v.dtype, value=v.value, weak=True)
        if short == "static_range" or short == "range":
            return UNKNOWN_ABS
        return UNKNOWN_ABS

    # -- helpers for calls --------------------------------------------------------------------

    def _bcast_all(self, n, vals, nodes):
        shape = ()
        for i, v in enumerate(vals):
            if v.kind != "tensor":
                if v.kind == "none":
                    continue
                return None
            try:
                shape = broadcast(shape, v.shape)
            except ShapeConflict as c:
                self.problem("broadcast", n, f"operands of shapes {', '.join(shape_text(x.shape) for x in vals)} do not broadcast: "
                             f"dimension {c.index} is {c.left} vs {c.right}", tuple(x.shape for x in vals), tuple(nodes))
                return None
        return shape

    def _dtype_arg(self, a: Abs | None) -> str | None:
        if a is None:
            return None
        if a.kind == "dtype":
            return a.value if isinstance(a.value, str) else None
        if isinstance(a.value, str):
            return normalize_dtype(a.value)
        return None

    def _shape_arg(self, a: Abs | None):
        if a is None:
            return None
        if a.kind == "tuple":
            return tuple(_dim_of(i.value) for i in a.items)
        if a.kind == "tensor" and a.weak:
            d = _dim_of(a.value)
            return (d,) if a.value is not UNKNOWN else None
        return None

    def _shape_list(self, vals, kw: Abs | None):
        if kw is not None:
            return self._shape_arg(kw)
        if len(vals) == 1 and vals[0].kind == "tuple":
            return self._shape_arg(vals[0])
        if vals and all(v.kind == "tensor" for v in vals):
            return tuple(_dim_of(v.value) for v in vals)
        return None

    def _int_list(self, vals, kw: Abs | None):
        items = None
        if kw is not None:
            items = kw.items if kw.kind == "tuple" else [kw]
        elif len(vals) == 1 and vals[0].kind == "tuple":
            items = vals[0].items
        else:
            items = vals
        out = []
        for v in items:
            if not isinstance(v.value, int) or isinstance(v.value, bool):
                return None
            out.append(v.value)
        return out

    def _permute(self, x: Abs, dims):
        if dims is None or x.shape is None or sorted(dims) != list(range(len(x.shape))):
            return Abs(None, x.dtype)
        return Abs(tuple(x.shape[d] for d in dims), x.dtype)

    def _reduce(self, short, arg, kv):
        x = arg(0, "input")
        if x is None or x.kind != "tensor" or x.shape is None:
            return UNKNOWN_ABS
        ax = arg(1, "axis")
        keep = kv.get("keep_dims")
        keep_v = keep.value if keep is not None else False
        if short == "reduce":
            ax = kv.get("axis", arg(1, "axis"))
            keep_v = kv["keep_dims"].value if "keep_dims" in kv else False
        dt = x.dtype
        if short in ("argmax", "argmin"):
            dt = "int32"
        elif short in ("sum", "xor_sum") and dt is not None:
            d = kv.get("dtype")
            if d is not None and d.kind == "dtype":
                dt = self._dtype_arg(d)
            else:
                dt = {"int1": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}.get(dt, dt)
        elif short == "reduce":
            dt = None  # the combine function decides
        if keep_v is UNKNOWN:
            return Abs(None, dt)
        if ax is None or ax.kind == "none":
            shape = tuple(1 for _ in x.shape) if keep_v else ()
        else:
            a = ax.value
            if not isinstance(a, int) or isinstance(a, bool):
                return Abs(None, dt)
            if a < 0:
                a += len(x.shape)
            if not 0 <= a < len(x.shape):
                return Abs(None, dt)
            shape = x.shape[:a] + ((1,) if keep_v else ()) + x.shape[a + 1:]
        out = Abs(shape, dt)
        if short in ("max", "min") and "return_indices" in kv and kv["return_indices"].value is True:
            return Abs(kind="tuple", items=(out, Abs(shape, "int32")))
        return out

    def _load(self, n, arg, argnode) -> Abs:
        p = arg(0, "pointer")
        if p is None:
            return UNKNOWN_ABS
        if p.kind == "block_ptr":
            return Abs(p.shape, p.dtype)
        if p.kind != "tensor":
            return UNKNOWN_ABS
        shape = p.shape
        for i, kw, kind in ((1, "mask", "mask"), (2, "other", "other")):
            m = arg(i, kw)
            if m is None or m.kind != "tensor":
                continue
            try:
                shape = broadcast(shape, m.shape)
            except ShapeConflict as c:
                self.problem(kind, argnode(i, kw), f"the {kw} of tl.load is a {shape_text(m.shape)} block but the pointer block is "
                             f"{shape_text(p.shape)}: dimension {c.index} is {c.left} vs {c.right}", (p.shape, m.shape),
                             (argnode(0, "pointer"), argnode(i, kw)))
                shape = None
                break
        dt = p.dtype[1:] if p.dtype and p.dtype.startswith("*") else None
        return Abs(shape, dt)

    def _store(self, n, arg, argnode) -> None:
        p, v, m = arg(0, "pointer"), arg(1, "value"), arg(2, "mask")
        if p is None or p.kind != "tensor" or p.shape is None:
            return
        shape = p.shape
        if v is not None and v.kind == "tensor":
            try:
                shape = broadcast(shape, v.shape)
            except ShapeConflict as c:
                self.problem("store_value", argnode(1, "value"), f"the value stored is a {shape_text(v.shape)} block but the pointer "
                             f"block is {shape_text(p.shape)}: dimension {c.index} is {c.left} vs {c.right}",
                             (p.shape, v.shape), (argnode(0, "pointer"), argnode(1, "value")))
                return
        if m is not None and m.kind == "tensor":
            try:
                broadcast(shape, m.shape)
            except ShapeConflict as c:
                self.problem("mask", argnode(2, "mask"), f"the mask of tl.store is a {shape_text(m.shape)} block but the pointer "
                             f"block is {shape_text(shape)}: dimension {c.index} is {c.left} vs {c.right}",
                             (shape, m.shape), (argnode(0, "pointer"), argnode(2, "mask")))

    def _dot(self, n, arg, argnode, kv) -> Abs:
        a, b = arg(0, "input"), arg(1, "other")
        acc = arg(2, "acc")
        out_dt = kv.get("out_dtype")
        if a is None or b is None or a.kind != "tensor" or b.kind != "tensor":
            return UNKNOWN_ABS
        if a.shape is None or b.shape is None:
            return Abs(None, acc.dtype if acc is not None and acc.kind == "tensor" else None)
        ra, rb = len(a.shape), len(b.shape)
        if ra not in (2, 3) or rb not in (2, 3) or ra != rb:
            self.problem("dot_rank", n, f"tl.dot takes two 2-D blocks or two 3-D (batched) blocks of the same rank; "
                         f"got {shape_text(a.shape)} and {shape_text(b.shape)}", (a.shape, b.shape),
                         (argnode(0, "input"), argnode(1, "other")))
            return UNKNOWN_ABS
        ka, kb = a.shape[-1], b.shape[-2]
        if isinstance(ka, int) and isinstance(kb, int) and ka != kb:
            self.problem("dot_inner", n, f"tl.dot of {shape_text(a.shape)} by {shape_text(b.shape)}: the inner dimensions "
                         f"differ ({ka} vs {kb})", (a.shape, b.shape), (argnode(0, "input"), argnode(1, "other")))
        shape = a.shape[:-1] + (b.shape[-1],)
        if ra == 3:
            ba, bb = a.shape[0], b.shape[0]
            if isinstance(ba, int) and isinstance(bb, int) and ba != bb:
                self.problem("dot_batch", n, f"batched tl.dot of {shape_text(a.shape)} by {shape_text(b.shape)}: the batch "
                             f"dimensions differ ({ba} vs {bb})", (a.shape, b.shape), (argnode(0, "input"), argnode(1, "other")))
            shape = ((ba if ba == bb else (ba if isinstance(bb, int) and bb == ba else None)),) + shape[1:]
        dt = None
        if acc is not None and acc.kind == "tensor" and acc.shape is not None:
            if len(acc.shape) == len(shape):
                for x, y in zip(acc.shape, shape):
                    if isinstance(x, int) and isinstance(y, int) and x != y:
                        self.problem("dot_acc", n, f"the accumulator of tl.dot is a {shape_text(acc.shape)} block but the "
                                     f"product is {shape_text(shape)}", (acc.shape, shape), (argnode(2, "acc"),))
                        break
            dt = acc.dtype
        elif out_dt is not None and out_dt.kind == "dtype":
            dt = self._dtype_arg(out_dt)
            if _is_int(a.dtype):
                dt = "int32"
        elif _is_int(a.dtype) or (a.dtype or "").startswith("fp8") and False:
            dt = "int32"
        elif _is_float(a.dtype) or _is_float(b.dtype):
            dt = "fp32"  # out_dtype defaults to float32
        return Abs(shape, dt)


_DISPATCH = {
    "integer": Interpreter.e_integer, "float": Interpreter.e_float, "true": Interpreter.e_true,
    "false": Interpreter.e_false, "none": Interpreter.e_none, "string": Interpreter.e_string,
    "parenthesized_expression": Interpreter.e_paren, "tuple": Interpreter.e_tuple, "list": Interpreter.e_list,
    "expression_list": Interpreter.e_tuple, "identifier": Interpreter.e_identifier,
    "attribute": Interpreter.e_attribute, "subscript": Interpreter.e_subscript,
    "unary_operator": Interpreter.e_unary, "not_operator": Interpreter.e_not,
    "boolean_operator": Interpreter.e_boolean, "binary_operator": Interpreter.e_binary,
    "comparison_operator": Interpreter.e_compare, "conditional_expression": Interpreter.e_conditional,
    "call": Interpreter.e_call,
}


# ---------------------------------------------------------------------------------------------
# entry points


def jit_functions(module: Module) -> dict:
    """name → (function_definition node, Source) for every @triton.jit function of the file."""
    cached = getattr(module, "_tritonlens_jit_functions", None)
    if cached is not None:
        return cached
    out = {}
    src = module.src
    for outer, fn, decorators in top_level_definitions(src):
        name_node = fn.child_by_field_name("name")
        if name_node is not None and decorators and is_kernel_definition(decorators, src, module.aliases):
            out.setdefault(src.text_of(name_node), (fn, src))
    try:
        module._tritonlens_jit_functions = out
    except AttributeError:
        pass
    return out


def _param_env(kernel: Kernel, consts: dict, arg_dtypes: dict) -> dict:
    env = {}
    for p in kernel.params:
        if p.is_constexpr or p.name in consts:
            continue
        dt = normalize_dtype(arg_dtypes.get(p.name)) if arg_dtypes.get(p.name) else None
        # A kernel argument is a scalar or a pointer: a 0-d value either way.
        env[p.name] = Abs((), dt)
    return env


def _consts_for(kernel: Kernel, config: Config | None) -> dict:
    consts = {}
    for p in kernel.params:
        if not p.is_constexpr:
            continue
        v = config.get(p.name) if config is not None else UNKNOWN
        if v is UNKNOWN and config is None and p.has_default and p.default is not UNKNOWN and False:
            v = p.default
        consts[p.name] = v if v is not UNKNOWN else Sym(p.name)
    return consts


def _interpret(module: Module, kernel: Kernel, config: Config | None, label: str, arg_dtypes: dict, jit: dict) -> RunResult:
    src = kernel.src or module.src
    consts = _consts_for(kernel, config)
    run = RunResult(config, label)
    it = Interpreter(module, src, consts, run, arg_dtypes=arg_dtypes, jit_functions=jit)
    body = kernel.node.child_by_field_name("body")
    if body is not None:
        it.body(body, _param_env(kernel, consts, arg_dtypes))
    return run


def _helpers_key(module: Module, jit: dict) -> str:
    h = hashlib.blake2b(digest_size=12)
    for name, (fn, src) in sorted(jit.items()):
        h.update(name.encode())
        h.update(src.data[fn.start_byte:fn.end_byte])
    return h.hexdigest()


def infer_kernel(module: Module, kernel: Kernel, arg_dtypes: dict | None = None) -> KernelShapes:
    """Shapes and dtypes in `kernel`, symbolically and per configuration; cached on the kernel
    (the engine caches kernels by text), keyed by the file's jit helpers and the argument dtypes."""
    arg_dtypes = dict(arg_dtypes or {})
    jit = jit_functions(module)
    hkey = module.__dict__.get("_tritonlens_helpers_key")
    if hkey is None:
        hkey = module.__dict__["_tritonlens_helpers_key"] = _helpers_key(module, jit) if len(jit) > 1 else ""
    key = (hkey, tuple(sorted(arg_dtypes.items())))
    cache = kernel.__dict__.get("_tritonlens_inference")
    if cache is not None and cache[0] == key:
        return cache[1]
    symbolic = None
    per_config = []
    by_values: dict = {}
    for c in kernel.configs:
        consts = _consts_for(kernel, c)
        ck = tuple(sorted((n, repr(v)) for n, v in consts.items()))
        run = by_values.get(ck)
        if run is None:
            run = _interpret(module, kernel, c, c.label, arg_dtypes, jit)
            if all(isinstance(v, Sym) for v in consts.values()):
                symbolic = RunResult(None, "symbolic", run.targets, run.exprs, run.problems)
            by_values[ck] = run
            per_config.append(run)
        else:
            per_config.append(RunResult(c, c.label, run.targets, run.exprs, run.problems))
    result = KernelShapes(kernel, per_config, lambda: _interpret(module, kernel, None, "symbolic", arg_dtypes, jit), symbolic)
    try:
        kernel.__dict__["_tritonlens_inference"] = (key, result)
    except AttributeError:
        pass
    return result


def assignment_targets(kernel: Kernel) -> list:
    """(statement node, target identifier node, name) for every assignment in the kernel body, in order."""
    out = []
    for name, defs in kernel.assignments.items():
        for a in defs:
            stmt = a.node
            if stmt is None:
                continue
            if stmt.type == "for_statement":
                left = stmt.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    out.append((stmt, left, name))
                continue
            left = stmt.child_by_field_name("left")
            if left is None:
                continue
            if left.type == "identifier":
                out.append((stmt, left, name))
            else:
                for item in left.named_children:
                    if item.type == "identifier" and item.text.decode() == name:
                        out.append((stmt, item, name))
    out.sort(key=lambda t: t[1].start_byte)
    seen, uniq = set(), []
    for t in out:
        if t[1].start_byte not in seen:
            seen.add(t[1].start_byte)
            uniq.append(t)
    return uniq
