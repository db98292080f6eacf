"""A compile job's configurations: stand-in arguments that Triton's own binder specialises exactly as
the JIT would, and autotune / heuristics configs expanded."""

from __future__ import annotations

from compile_loading import JobError

MAX_CONFIGS = 8  # per kernel: each compile costs 0.4-3 s

class _Tensor:
    """Stands in for a torch tensor: the binder reads only `dtype` and `data_ptr()`."""

    def __init__(self, dtype, data_ptr: int):
        self.dtype = dtype
        self._ptr = data_ptr

    def data_ptr(self):
        return self._ptr


_DTYPE_ALIASES = {
    "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
    "float64": "fp64", "double": "fp64", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "bool": "int1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
    "float8_e4m3fnuz": "fp8e4b8", "float8_e5m2fnuz": "fp8e5b16", "uint16": "uint16", "uint32": "uint32",
    "uint64": "uint64", "fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64", "i8": "int8",
    "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "i1": "int1", "int1": "int1",
}


def tl_dtype(name: str):
    import triton.language as tl

    key = str(name).removeprefix("torch.").removeprefix("tl.").removeprefix("triton.language.")
    canon = _DTYPE_ALIASES.get(key, key)
    try:
        return tl.dtype(canon)
    except Exception as exc:
        raise JobError(f"unknown dtype {name!r}") from exc


def make_arg(desc, pname: str):
    if not isinstance(desc, dict) or "kind" not in desc:
        raise JobError(f"argument {pname!r}: expected {{'kind': ...}}, got {desc!r}")
    kind = desc["kind"]
    if kind in ("tensor", "pointer"):
        if "data_ptr" in desc:
            ptr = int(desc["data_ptr"])
        else:
            ptr = 0 if int(desc.get("align", 16)) % 16 == 0 else int(desc.get("align", 16))
        return _Tensor(tl_dtype(desc.get("dtype", "float32")), ptr)
    if kind == "tensordesc":
        return _descriptor(desc)
    if kind == "int":
        return int(desc["value"])
    if kind == "float":
        return float(desc["value"])
    if kind == "bool":
        return bool(desc["value"])
    if kind == "constexpr":
        return desc.get("value")
    if kind == "dtype":
        return tl_dtype(desc["value"])
    if kind == "none":
        return None
    raise JobError(f"argument {pname!r}: unknown kind {kind!r}")


def _descriptor(desc):
    """A TMA tensor descriptor over a stand-in tensor; its block shape's sides may still name
    constexprs, which `build_args` resolves once the configuration's values are known."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    sides = list(desc.get("block_shape") or [64, 64])
    out = TensorDescriptor.__new__(TensorDescriptor)  # its checks want a real tensor's strides
    out.base = _Tensor(tl_dtype(desc.get("dtype", "float32")), 0)
    out.shape = [4096] * len(sides)
    out.strides = [4096 ** (len(sides) - 1 - i) for i in range(len(sides))]
    out.block_shape = sides
    out.padding = "zero"
    out.round_f32_to_tf32 = False
    return out


def _resolve_block_shapes(values: dict) -> None:
    from triton.tools.tensor_descriptor import TensorDescriptor

    for v in values.values():
        if isinstance(v, TensorDescriptor):
            sides = [values.get(s) if isinstance(s, str) else s for s in v.block_shape]
            v.block_shape = [s if isinstance(s, int) and not isinstance(s, bool) and s > 0 else 64 for s in sides]


def specialise(fn, backend, args: dict, options: dict):
    """Exactly JITFunction.run's path from call arguments to (options, signature, constexprs, attrs)."""
    from triton import knobs
    from triton.runtime.jit import create_function_from_signature

    kwargs = dict(options)
    kwargs["debug"] = kwargs.get("debug", fn.debug) or knobs.runtime.debug
    if hasattr(knobs.compilation, "instrumentation_mode"):
        kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
    if hasattr(knobs.compilation, "fpsan_homomorphic_casts"):
        kwargs["fpsan_homomorphic_casts"] = knobs.compilation.fpsan_homomorphic_casts
    kwargs.update(args)
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    bound_args, specialization, opts = binder(**kwargs)
    return fn._pack_args(backend, kwargs, bound_args, specialization, opts)


# --------------------------------------------------------------------------------------------
# Configurations


def expand_configs(fn, autotune, heuristics, configs):
    """Fill each config's missing parameters from defaults, autotune configs and heuristics."""
    pnames = [p.name for p in fn.params]
    out = []
    for cfg in configs or [{}]:
        args = dict(cfg.get("args") or {})
        opts = dict(cfg.get("options") or {})
        label = cfg.get("label") or "configuration"
        variants = [(label, {}, {})]
        tuned = [c for c in (autotune or [])]
        if tuned and cfg.get("autotuned"):
            # A captured launch shows only the config the autotuner picked (in the interpreter: the
            # first): compile every config the GPU would try instead.
            for c in tuned:
                for k in c.kwargs:
                    args.pop(k, None)
        if tuned and not all(k in args for c in tuned for k in c.kwargs):
            variants = []
            for i, c in enumerate(tuned):
                extra = {k: {"kind": "constexpr", "value": v} for k, v in c.kwargs.items()}
                copts = {k: v for k, v in c.all_kwargs().items() if k not in c.kwargs}
                variants.append((f"{label}, autotune config #{i + 1} ({_config_str(c)})", extra, copts))
        for vlabel, extra, copts in variants:
            a = {**args, **extra}
            o = {**opts, **copts}  # an autotuned launch cannot pass num_warps itself: the config's win
            # assumed values the worker may retry (compile_retry.py), less those an autotune config sets
            retry = {n: v for n, v in (cfg.get("retry") or {}).items() if n not in extra and n not in copts}
            out.append({"label": vlabel, "args": a, "options": o, "heuristics": heuristics, "pnames": pnames,
                        "retry": retry})
    return out[:MAX_CONFIGS]


def _config_str(c) -> str:
    parts = [f"{k}={v}" for k, v in c.kwargs.items()]
    for k in ("num_warps", "num_stages"):
        v = getattr(c, k, None)
        if v is not None:
            parts.append(f"{k}={v}")
    return ", ".join(parts)


def build_args(fn, cfg) -> dict:
    values = {}
    for p in fn.params:
        if p.name in cfg["args"]:
            values[p.name] = make_arg(cfg["args"][p.name], p.name)
    # Heuristics see the other arguments by name, as Heuristics.run gives them.
    for name, heur in (cfg.get("heuristics") or {}).items():
        if name not in values:
            try:
                values[name] = heur(dict(values))
            except Exception as exc:
                raise JobError(f"heuristic for {name!r} failed: {type(exc).__name__}: {exc}") from exc
    _resolve_block_shapes(values)
    missing = [p.name for p in fn.params if p.name not in values and not p.has_default]
    if missing:
        raise JobError("no value for " + ", ".join(repr(m) for m in missing))
    return values
