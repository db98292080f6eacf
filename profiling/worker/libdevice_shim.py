"""libdevice functions for Triton's interpreter, computed with numpy. Standalone (standard library;
numpy and triton imported by install()), beside interpreter_shims.py, which installs it.

On a GPU `libdevice.tanh(x)` (from `triton.language.extra.libdevice`, or its cuda / hip module)
becomes a call into the vendor's device library. The interpreter has neither: the generic module's
functions are stubs returning None, the vendor modules' ones refuse to run outside a compiled
kernel. install() puts numpy stand-ins in their place, in the modules and in the globals of each
interpreted kernel that imported one by name (`from ...libdevice import rsqrt`), and uninstall()
puts the originals back. A name without a stand-in here keeps failing as before, and
interpreter_shims.interpreter_limit() names it.

Results follow libdevice's typing: a float function computes in fp64 on fp64 input and in fp32
otherwise (libdevice has no fp16 / bf16 versions); predicates answer int32; llrint / llround int64.
"""

from __future__ import annotations

import math

_MODULES = ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice",
            "triton.language.extra.hip.libdevice")
_installed: dict = {}  # (module or globals dict, name) -> original
_stand_ins: dict = {}  # id(original function) -> stand-in


def _table(np) -> dict:
    """name -> (numpy function, result: "float" | numpy dtype name)."""
    vector = lambda fn: np.vectorize(fn, otypes=[np.float64])  # noqa: E731
    round_away = lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)  # noqa: E731  # C round(), not banker's
    floats = {
        "tanh": np.tanh, "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x),
        "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
        "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x), "cbrt": np.cbrt, "rcbrt": lambda x: 1.0 / np.cbrt(x),
        "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
        "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
        "atanh": np.arctanh, "sinpi": lambda x: np.sin(np.pi * x), "cospi": lambda x: np.cos(np.pi * x),
        "erf": vector(math.erf), "erfc": vector(math.erfc), "lgamma": vector(math.lgamma),
        "tgamma": vector(lambda v: math.gamma(v) if v > 0 or v != math.floor(v) else math.nan),
        "pow": np.power, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": round_away,
        "rint": np.rint, "nearbyint": np.rint, "abs": np.abs, "fmod": np.fmod, "hypot": np.hypot,
        "copysign": np.copysign, "fdim": lambda x, y: np.maximum(x - y, 0), "fma": lambda a, b, c: a * b + c,
        "saturatef": lambda x: np.clip(x, 0.0, 1.0), "rcp_rn": lambda x: 1.0 / x, "ldexp": np.ldexp,
        "remainder": lambda x, y: x - y * np.rint(x / y), "nextafter": np.nextafter,
        "normcdf": vector(lambda v: 0.5 * math.erfc(-v / math.sqrt(2))),
    }
    for name in ("expf", "exp10f", "logf", "log2f", "log10f", "tanhf", "sinf", "cosf", "tanf", "powf"):
        floats[f"fast_{name}"] = floats[name[:-1]]
    floats["fast_dividef"] = np.divide
    for op, fn in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
                   ("sqrt", np.sqrt), ("fma", floats["fma"]), ("rcp", floats["rcp_rn"])):
        for rounding in ("rn", "rz", "rd", "ru"):  # the interpreter rounds to nearest only
            floats.setdefault(f"{op}_{rounding}", fn)
    floats["rsqrt_rn"] = floats["rsqrt"]
    table = {name: (fn, "float") for name, fn in floats.items()}
    table.update({
        "isnan": (np.isnan, "int32"), "isinf": (np.isinf, "int32"), "signbit": (np.signbit, "int32"),
        "isfinited": (np.isfinite, "int32"), "finitef": (np.isfinite, "int32"),
        "llrint": (np.rint, "int64"), "llround": (round_away, "int64"),
        "ilogb": (lambda x: _ilogb(np, x), "int32"), "logb": (lambda x: _ilogb(np, x).astype(np.float64), "float"),
    })
    return table


INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1


def _ilogb(np, x):
    """The unbiased exponent as CUDA's ilogbf gives it: INT_MIN for zero and NaN, INT_MAX for
    infinities; subnormals by their own exponent (frexp, not the biased field)."""
    exponent = np.frexp(x)[1].astype(np.int64) - 1
    exponent = np.where(np.isinf(x), INT_MAX, exponent)
    return np.where((x == 0) | np.isnan(x), INT_MIN, exponent)


def _stand_in(name: str, fn, result: str):

    def stand_in(*args, _semantic=None, **kwargs):
        import numpy as np
        from triton import language as tl
        from triton.runtime.interpreter import TensorHandle, _get_np_dtype, interpreter_semantic as sem

        tensors = [a if isinstance(a, tl.tensor) else sem.to_tensor(tl.core._unwrap_if_constexpr(a))
                   for a in args]
        float_type = tl.float64 if any(t.dtype == tl.float64 for t in tensors) else tl.float32
        data = [sem.cast(t, float_type).handle.data if t.dtype.is_floating() else t.handle.data for t in tensors]
        with np.errstate(all="ignore"):
            value = np.asarray(fn(*data))
        dtype = float_type if result == "float" else getattr(tl, result)
        value = value.astype(_get_np_dtype(dtype))
        blocks = [t.type for t in tensors if t.type.is_block()]
        ty = tl.block_type(dtype, list(value.shape)) if blocks else dtype
        return tl.tensor(TensorHandle(value, dtype), ty)

    stand_in.__name__ = stand_in.__qualname__ = name
    stand_in.__module__ = __name__
    return stand_in


def _set(where, name: str, value) -> None:
    if isinstance(where, dict):
        _installed.setdefault((id(where), name), (where, name, where[name]))
        where[name] = value
    else:
        _installed.setdefault((id(where), name), (where, name, getattr(where, name)))
        setattr(where, name, value)


def _patch_globals(fn) -> None:
    """A kernel that imported a libdevice function by name holds the original in its globals."""
    namespace = getattr(fn, "__globals__", None) or {}
    for name, value in list(namespace.items()):
        stand_in = _stand_ins.get(id(value)) if callable(value) else None
        if stand_in is not None:
            _set(namespace, name, stand_in)


def install() -> None:
    """Stand-ins in the libdevice modules, and in each interpreted kernel's globals as it launches."""
    if _installed:
        return
    import importlib

    import numpy as np
    from triton.runtime import interpreter

    table = _table(np)
    for module_name in _MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # a triton built without that backend
            continue
        for name, (fn, result) in table.items():
            original = getattr(module, name, None)
            if original is not None:
                _stand_ins[id(original)] = stand_in = _stand_in(name, fn, result)
                _set(module, name, stand_in)
    patch_lang = interpreter._patch_lang

    def patch_lang_and_libdevice(fn):
        _patch_globals(fn)
        return patch_lang(fn)

    _set(interpreter, "_patch_lang", patch_lang_and_libdevice)


def uninstall() -> None:
    """The originals back, in the modules and in every kernel's globals install() touched."""
    for where, name, original in reversed(list(_installed.values())):
        if isinstance(where, dict):
            where[name] = original
        else:
            setattr(where, name, original)
    _installed.clear()
    _stand_ins.clear()
