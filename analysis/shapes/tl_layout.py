"""What the layout `tl.*` calls return: trans, permute, reshape, broadcast_to, expand_dims, ravel,
join/split/interleave, block pointers and tensor descriptors, random numbers, gather.
"""

from __future__ import annotations

from ..values import UNKNOWN
from .abstract import (
    UNKNOWN_ABS,
    Abs,
    ShapeConflict,
    broadcast,
    dim_of,
    shape_dim,
    shape_text,
    value_op,
)
from .dtypes import promote


class TlLayout:
    """Mixin of the Interpreter: layout calls (tl_calls.TlCalls.tl_call falls through to these)."""

    def tl_layout(self, short: str, n, vals, kv, nodes, arg) -> Abs:
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
                    self.problem("broadcast", n, f"tl.broadcast_to of {shape_text(x.shape)} to {shape_text(shape)}: "
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
                total = value_op("*", total, d) if d is not None else UNKNOWN
            return Abs((dim_of(total),), x.dtype)
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
            return Abs(shape[:-1] + (dim_of(value_op("*", shape[-1], 2)) if shape[-1] is not None else None,), vals[0].dtype)
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
            return Abs((shape_dim(nb),) if nb is not None else None, "int32")
        if short == "gather":
            idx, src = arg(1, "index"), arg(0, "src")
            return Abs(idx.shape if idx is not None else None, src.dtype if src is not None else None)
        if short == "constexpr" and vals:
            v = vals[0]
            return Abs((), v.dtype, value=v.value if v.weak else UNKNOWN, weak=True)
        if short == "static_range" or short == "range":
            return UNKNOWN_ABS
        return UNKNOWN_ABS

    def _shape_list(self, vals, kw: Abs | None):
        if kw is not None:
            return self._shape_arg(kw)
        if len(vals) == 1 and vals[0].kind == "tuple":
            return self._shape_arg(vals[0])
        if vals and all(v.kind == "tensor" for v in vals):
            return tuple(shape_dim(v) for v in vals)
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
