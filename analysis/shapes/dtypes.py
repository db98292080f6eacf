"""Triton element dtypes: names, promotion as Triton's semantic.py does it, and sizes in bytes."""

from __future__ import annotations

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
    "f64": "fp64", "fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64", "tf32": "fp32",
    "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
}
_WIDTH = {"int1": 1, "int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32,
          "uint64": 64, "fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64}


def normalize_dtype(text: str | None) -> str | None:
    """"*fp16", "fp16*", "torch.float16", "i32", "float32" → Triton's short names; None if unknown."""
    if not text:
        return None
    t = text.strip().strip("'\"")
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


def element_bytes(dtype: str | None) -> int | None:
    """Bytes of one element of `dtype` (any spelling normalize_dtype reads; int1 is stored in a
    byte); None for pointers and unknown names."""
    name = normalize_dtype(dtype)
    if name is None or name.startswith("*"):
        return None
    if name.startswith("fp8"):
        return 1
    width = _WIDTH.get(name)
    return None if width is None else max(width // 8, 1)


def _kind(dt: str) -> int:
    if dt == "int1":
        return 0
    if dt.startswith(("int", "uint")):
        return 1
    return 2


def is_float(dt: str | None) -> bool:
    return dt is not None and (dt.startswith(("fp", "bf")))


def is_int(dt: str | None) -> bool:
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


def promote(a, b, div_or_mod: bool = False) -> str | None:
    """Triton's computation type (semantic.computation_type_impl) of two abstract values (their
    `dtype` and `weak`), pointers aside."""
    da, db = a.dtype, b.dtype
    if da is None or db is None:
        return None
    if da.startswith("*") or db.startswith("*"):
        return da if da.startswith("*") else db
    if a.weak != b.weak:
        sd, td = (da, db) if a.weak else (db, da)
        if _kind(sd) <= _kind(td):
            da = db = td
    if "fp64" in (da, db):
        return "fp64"
    if div_or_mod and (is_float(da) or is_float(db)):
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
    if is_int(da) and is_int(db) or da == "int1" or db == "int1":
        if da == "int1" and db == "int1":
            return "int1"
        if da == "int1":
            return db
        if db == "int1":
            return da
        return _int_promote(da, db)
    return None


def literal_dtype(v) -> str | None:
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


# Sums of small integers widen, as tl.sum and tl.cumsum do.
ACCUMULATED = {"int1": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}
