"""What `tl.*` calls return: creation (arange, zeros, full), memory (load, store, atomics), casts,
element-wise math with broadcasting and promotion, reductions and scans, and tl.dot, recording the
shape conflicts the compiler would refuse. Layout calls (trans, reshape, block pointers, …) are in
tl_layout.py.
"""

from __future__ import annotations

from ..values import UNKNOWN, cdiv, next_power_of_2
from .abstract import (
    NONE_ABS,
    UNKNOWN_ABS,
    Abs,
    ShapeConflict,
    broadcast,
    const,
    dim_of,
    known_scalar,
    shape_dim,
    shape_text,
    value_op,
)
from .dtypes import ACCUMULATED, is_float, is_int, normalize_dtype, promote

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


class TlCalls:
    """Mixin of the Interpreter: the semantics of `tl.*` calls."""

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
        if short == "constexpr":
            # tl.constexpr(v): the value as a compile-time constant, known or not
            x = arg(0, "value")
            if x is None or x.kind in ("tensor", "unknown"):
                return Abs((), x.dtype if x is not None else None, value=x.value if x is not None else UNKNOWN, weak=True)
            return x
        if short in ("arange",):
            s, e = arg(0, "start"), arg(1, "end")
            if s is None or e is None:
                return UNKNOWN_ABS
            if s.value is UNKNOWN or e.value is UNKNOWN or not (s.weak and e.weak):
                return Abs((None,), "int32")
            return Abs((dim_of(value_op("-", e.value, s.value)),), "int32")
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
                if known_scalar(a) and known_scalar(b) and isinstance(a.value, int) and isinstance(b.value, int) and b.value:
                    v = cdiv(a.value, b.value)
                    return const(v) if a.weak and b.weak else Abs((), promote(a, b), value=v)
                return Abs((), promote(a, b) if a.kind == b.kind == "tensor" else None)
            if short == "next_power_of_2" and vals and vals[0].weak and isinstance(vals[0].value, int):
                return const(next_power_of_2(vals[0].value))
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
                dt = ACCUMULATED.get(dt, dt)
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
            return self.elementwise(n, vals, nodes)
        if short in _IDENTITY:
            x = arg(0, "input")
            return x if x is not None else UNKNOWN_ABS
        if short in _NOTHING:
            return NONE_ABS
        if short == "dot":
            return self._dot(n, arg, argnode, kv)
        return self.tl_layout(short, n, vals, kv, nodes, arg)

    def elementwise(self, n, vals, nodes) -> Abs:
        """An element-wise function of several blocks (tl.maximum, tl.fma, …): they broadcast,
        their dtypes promote."""
        if not vals:
            return UNKNOWN_ABS
        shape = self._bcast_all(n, vals, nodes)
        dt = vals[0].dtype
        acc = vals[0]
        for v in vals[1:]:
            dt = promote(acc, v)
            acc = Abs(shape, dt)
        return Abs(shape, dt)

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
            return tuple(shape_dim(i) for i in a.items)
        if a.kind == "tensor" and a.weak:
            d = dim_of(a.value)
            return (d,) if a.value is not UNKNOWN else None
        return None

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
                dt = ACCUMULATED.get(dt, dt)
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
                self.problem(kind, argnode(i, kw), f"tl.load {kw} {shape_text(m.shape)} does not fit the pointer block "
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
                self.problem("store_value", argnode(1, "value"), f"tl.store value {shape_text(v.shape)} does not fit the pointer "
                             f"block {shape_text(p.shape)}: dimension {c.index} is {c.left} vs {c.right}",
                             (p.shape, v.shape), (argnode(0, "pointer"), argnode(1, "value")))
                return
        if m is not None and m.kind == "tensor":
            try:
                broadcast(shape, m.shape)
            except ShapeConflict as c:
                self.problem("mask", argnode(2, "mask"), f"tl.store mask {shape_text(m.shape)} does not fit the pointer "
                             f"block {shape_text(shape)}: dimension {c.index} is {c.left} vs {c.right}",
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
            self.problem("dot_rank", n, f"tl.dot needs two 2-D or two 3-D blocks, "
                         f"got {shape_text(a.shape)} and {shape_text(b.shape)}", (a.shape, b.shape),
                         (argnode(0, "input"), argnode(1, "other")))
            return UNKNOWN_ABS
        ka, kb = a.shape[-1], b.shape[-2]
        if isinstance(ka, int) and isinstance(kb, int) and ka != kb:
            self.problem("dot_inner", n, f"tl.dot of {shape_text(a.shape)} by {shape_text(b.shape)}: inner dimensions "
                         f"{ka} vs {kb}", (a.shape, b.shape), (argnode(0, "input"), argnode(1, "other")))
        shape = a.shape[:-1] + (b.shape[-1],)
        if ra == 3:
            ba, bb = a.shape[0], b.shape[0]
            if isinstance(ba, int) and isinstance(bb, int) and ba != bb:
                self.problem("dot_batch", n, f"batched tl.dot of {shape_text(a.shape)} by {shape_text(b.shape)}: batch "
                             f"dimensions {ba} vs {bb}", (a.shape, b.shape), (argnode(0, "input"), argnode(1, "other")))
            shape = ((ba if ba == bb else (ba if isinstance(bb, int) and bb == ba else None)),) + shape[1:]
        dt = None
        if acc is not None and acc.kind == "tensor" and acc.shape is not None:
            if len(acc.shape) == len(shape):
                for x, y in zip(acc.shape, shape):
                    if isinstance(x, int) and isinstance(y, int) and x != y:
                        self.problem("dot_acc", n, f"tl.dot accumulator {shape_text(acc.shape)} does not fit the "
                                     f"product {shape_text(shape)}", (acc.shape, shape), (argnode(2, "acc"),))
                        break
            dt = acc.dtype
        elif out_dt is not None and out_dt.kind == "dtype":
            dt = self._dtype_arg(out_dt)
            if is_int(a.dtype):
                dt = "int32"
        elif is_int(a.dtype):
            dt = "int32"
        elif is_float(a.dtype) or is_float(b.dtype):
            dt = "fp32"  # out_dtype defaults to float32
        return Abs(shape, dt)
