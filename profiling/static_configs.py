"""Compile configurations from the static model, for kernels no captured launch reached.

A kernel whose harness fails before launching it (often because the kernel itself does not
compile: the interpreter trips on the same `tl.arange(0, 48)` the compiler would), or a file with
no harness at all, still has launch sites and autotune configs the analysis resolves. Each
resolved `Config` (constexprs, num_warps, num_stages, the runtime ints it could read) becomes one
compile job CONFIG. The values it resolved stay ("static"); those it could not are pinned by the
user or assumed (config_pins.py, assumed_values.py), and the CONFIG records the source of each in
"value_sources" and the weakest in "source", so that every kernel gets a configuration, also one
launched from another file. Device helpers (analysis/kernel_roles.py) get none. The runtime
arguments it could not read are described conservatively and every such guess is named in the
config's "assumed" list, after the assumed values:

- pointers (a `*ptr` name, or the base of a `tl.load` / `tl.store` / atomic / block pointer) get the
  dtype of the tensor the wrapper allocates, else the one their use decides (kernel_pointers.py:
  indices, packed words, int8 dot operands, atomic max targets), else the element type the
  analysis' estimates assume (fp16/bf16 when the kernel converts to or allocates in half precision,
  else fp32), and 16-byte alignment, which every torch allocation has;
- strides (named so, or passed as `x.stride(i)`) and sizes named as widths or counts (`n_cols`,
  `hidden_size`, `M`) get what a typical call passes and the JIT specialises: 1 for `x.stride(-1)`,
  a multiple of 16 for the others (a contiguous row's stride, a model's width);
- other integers get a value that is neither 1 nor divisible by 16: a plain i32 with no
  specialisation, the compile the JIT would make for the least favourable arguments;
- floats (annotated, defaulted or passed as such at the launch) get a plain fp32.

Client side only (imports tritonlens.analysis): the worker receives ordinary CONFIG dicts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.estimates import ElementSizes
from tritonlens.analysis.kernel_roles import is_device_helper
from tritonlens.analysis.rules._host_dtypes import pointer_dtype
from tritonlens.analysis.values import UNKNOWN
from tritonlens.profiling.assumed_values import Assumer, Filled, is_float_name, weakest
from tritonlens.profiling.config_pins import DType, KernelPins, kernel_pins
from tritonlens.profiling.descriptor_params import descriptor_params
from tritonlens.profiling.helper_loads import helper_loaded_pointers
from tritonlens.profiling.imported_helpers import Helpers
from tritonlens.profiling.kernel_pointers import (
    atomic_max_pointers,
    helper_calls,
    int8_dot_pointers,
    integer_pointers,
    lock_pointers,
    negated_pointers,
    packed_pointers,
    pointer_params,
)
from tritonlens.profiling.param_use import ParamUse, param_use
from tritonlens.profiling.representative_eval import HostEval

MAX_STATIC_CONFIGS = 8  # the worker compiles at most this many per kernel
# An integer the JIT specialises on nothing: not 1 (a constant) and not a multiple of 16.
PLAIN_INT = 3
STRIDE_INT = 4096  # a stride as the JIT sees a contiguous row's: divisible by 16
_INDEX_NOTE = "pointers assumed integer (their loads index other pointers, bound loops or are bit-shifted)"

def _launch_arg(kernel, launch, pname: str):
    """The node the launch passes for `pname` (keyword or position), or None."""
    if launch is None:
        return None
    if pname in launch.kwargs:
        return launch.kwargs[pname]
    idx = next((p.index for p in kernel.params if p.name == pname), None)
    return launch.args[idx] if idx is not None and idx < len(launch.args) else None


def _is_float_param(kernel, param, launch, src, use: ParamUse) -> str | None:
    """Why `param` is a float, or None: annotation, default, what the launch passes, or its name
    or use, unless the kernel uses it where a float does not compile (an address, a condition)."""
    if param.annotation and "float" in param.annotation:
        return "annotation"
    if param.has_default and isinstance(param.default, float):
        return "default"
    node = _launch_arg(kernel, launch, param.name)
    if node is not None:
        if node.type == "float":
            return "launch"
        if node.type == "identifier" and launch.wrapper is not None:
            name = src.text_of(node)
            params = launch.wrapper.child_by_field_name("parameters")
            for p in (params.named_children if params is not None else []):
                if p.type in ("typed_parameter", "typed_default_parameter", "default_parameter"):
                    pn = p.child_by_field_name("name") or (p.named_children[0] if p.named_children else None)
                    if pn is None or src.text_of(pn) != name:
                        continue
                    ty = p.child_by_field_name("type")
                    val = p.child_by_field_name("value")
                    if (ty is not None and src.text_of(ty) == "float") or (val is not None and val.type == "float"):
                        return "launch"
    if param.name in use.integer or param.name in use.condition:
        return None
    if is_float_name(param.name):
        return "name"
    if _converted_to_float(kernel.text or src.text_of(kernel.outer), param.name):
        return "use"
    return None


_TO_FLOAT = r"\.to\(\s*(?:tl\.(?:float|bfloat)\d+|\w*dtype\w*)"


def _converted_to_float(text: str, name: str) -> bool:
    """`gate_multiplier.to(tl.float32)`, `offset.to(X_dtype)`: a scalar the kernel turns into a
    float and never uses as an index (compared, in a pointer's offset, a loop bound, `//`, `%`)."""
    n = re.escape(name)
    if not re.search(rf"\b{n}{_TO_FLOAT}", text):
        return False
    index = (rf"\b{n}\b\s*(?:[<>]|//|%)", rf"(?:[<>]=?|//|%)\s*\b{n}\b", rf"ptr\w*\s*\+[^,\n)]*\b{n}\b",
             rf"range\([^)\n]*\b{n}\b")
    return not any(re.search(p, text) for p in index)


_LAST_STRIDE = re.compile(r"\.stride\(\s*-1\s*\)")


def _stride_value(kernel, param, launch, src) -> int | None:
    """The value a typical call passes for a stride or a size the launch does not give: 1 for the
    last dimension's stride (`x.stride(-1)`), a multiple of 16 for any other stride (a contiguous
    row) and for a width or count named as one (model widths are); None: neither."""
    node = _launch_arg(kernel, launch, param.name)
    text = src.text_of(node) if node is not None else ""
    if _LAST_STRIDE.search(text):
        return 1
    if "stride" in param.name.lower() or ".stride(" in text or _SIZE_NAME.search(param.name):
        return STRIDE_INT
    return None


# A width or count a model's shapes give (n_cols, hidden_size, num_heads, M, seq_len): a multiple of
# 16 in the typical call, which the JIT specialises; an index or a sentinel (ignore_index) is not one.
_SIZE_NAME = re.compile(r"^(n|num|N)_|_(size|dim|len|cols|rows)$|^(hidden|dim|cols|rows|seq)|^[MNKD]$|"
                        r"(channels|features|head_dim)", re.IGNORECASE)


def _constexpr_ok(v) -> bool:
    return v is None or isinstance(v, (bool, int, float, str, DType))


@dataclass(frozen=True)
class StaticKernel:
    """A kernel the static model looked at: its `def` line (1-based), why it has no configuration
    when it has none, and what was wrong with its pins."""

    line: int
    note: str | None = None
    pin_messages: tuple[str, ...] = ()


StaticConfigs = tuple[dict[str, list[dict]], dict[str, StaticKernel]]


def static_configs_of_text(text: str, kernels: set[str] | None = None, skip: set[str] = frozenset(),
                           path=None) -> StaticConfigs:
    """`static_configs` of a file no one has analysed yet (the CLI): a cold analysis of the whole file."""
    module = Analyzer().analyze(text).module
    return static_configs(module, kernels, skip, path) if module is not None else ({}, {})


def static_configs(module, kernels: set[str] | None = None, skip: set[str] = frozenset(), path=None) \
        -> StaticConfigs:
    """({kernel: [CONFIG]}, {kernel: StaticKernel}) for the kernels of `module` (the analysis'
    model of the file at `path`, which locates pyproject.toml pins and imported helpers) in
    `kernels` (all when None) but not in `skip`. A kernel only ever called from another kernel (a
    helper) is left out. Every CONFIG says where each value came from ("value_sources": static,
    pinned or assumed; assumed_values.py) and its overall "source", the weakest of them. Resolving
    configurations fills caches on the model: call it on the thread that owns `module` (the
    language server's analysis thread)."""
    out: dict[str, list[dict]] = {}
    info: dict[str, StaticKernel] = {}
    host = HostEval(module.src, str(path) if path is not None else None)
    for k in module.kernels:
        if k.name in skip or (kernels is not None and k.name not in kernels):
            continue
        if is_device_helper(module, k):
            continue
        line = k.name_range.start.line + 1
        pins = kernel_pins(module, k, path)
        try:
            configs = _kernel_configs(module, k, pins, host)
            note = None if configs else "no configuration: its launch sites pass values that cannot be compiled"
        except Exception as exc:  # noqa: BLE001 - one kernel's odd code must not cost the file's other kernels
            configs, note = [], f"no configuration: reading it failed ({type(exc).__name__}: {str(exc)[:80]})"
        if configs:
            out[k.name] = configs[:MAX_STATIC_CONFIGS]
        info[k.name] = StaticKernel(line, note, tuple(dict.fromkeys(pins.messages)))
    return out, info


def _kernel_configs(module, k, pins: KernelPins, host: HostEval) -> list[dict]:
    src = k.src or module.src  # a cached model's nodes index the text it was built from
    helpers = Helpers(module, host.main)
    pointers = pointer_params(k, module, helpers=helpers)
    use = _uses(module, k, pointers)
    pointers |= use.pointer_alias
    typed = _typed_pointers(module, k, pointers, src, helpers)
    hint = ElementSizes(k, module).half_hint
    dtype = hint[0] if hint else "float32"
    dtype_why = (f"pointers assumed {dtype} (the kernel uses tl.{dtype} at line {hint[1]})" if hint
                 else "pointers assumed float32 (no half-precision type in the kernel)")
    assumer = Assumer(module, k, pins, host, hint[0] if hint else None, use)
    configs, seen, branched = [], set(), False
    for cfg in k.configs:
        if not all(_constexpr_ok(v.value) for v in cfg.values.values() if v.value is not UNKNOWN):
            continue
        filled, branches = assumer.fill(cfg)
        variants = [(filled, " (heuristic flags true)" if branches else "")]
        if branches and not branched:  # every branch once: the first configuration also compiles them false
            branched = True
            off = {b: Filled(False, "assumed", "a heuristic's other branch") for b in branches}
            variants.append(({**filled, **off}, " (heuristic flags false)"))
        for values, suffix in variants:
            c = _config(k, cfg, values, pins, (pointers, typed, use), (dtype, dtype_why), src, suffix)
            key = json.dumps([c["args"], c["options"]], sort_keys=True, default=str)
            if key not in seen:
                seen.add(key)
                configs.append(c)
    return configs


def _uses(module, k, pointers: set[str], depth: int = 0) -> ParamUse:
    """How `k` and the jit helpers it hands its parameters to use them (param_use.py)."""
    use = param_use(k, k.src or module.src, pointers)
    if depth < 2:
        for helper, mapping in helper_calls(k, module, {p.name for p in k.params}):
            use = use.merged(_uses(module, helper, pointer_params(helper, module), depth + 1), mapping)
    return use


def _typed_pointers(module, k, pointers: set[str], src, helpers: Helpers) -> dict[str, tuple[str, str]]:
    """{pointer: (element dtype, why)} for the pointers whose type the text gives or their use
    decides: the tensors the wrapper allocates, indices and packed words, atomic max targets."""
    out: dict[str, tuple[str, str]] = {}
    ctx = _LaunchContext(k, src)
    for p in sorted(pointers):
        dt = pointer_dtype(ctx, p)
        if dt is not None:
            out[p] = (dt, "pointer dtypes read from the tensors the launch passes")
    for p in int8_dot_pointers(k, pointers):
        out.setdefault(p, ("int8", "pointers assumed int8 (their loads feed a tl.dot into an int32 accumulator)"))
    through_helpers = helper_loaded_pointers(k, helpers, pointers)
    for p, dt in {**through_helpers, **packed_pointers(k, pointers), **integer_pointers(k, module, pointers)}.items():
        out.setdefault(p, (dt, _INDEX_NOTE))
    for p in lock_pointers(k, pointers):
        out.setdefault(p, ("int32", "pointers of tl.atomic_cas/xchg with integer operands assumed int32 (locks, flags)"))
    for p in negated_pointers(k, pointers):
        out.setdefault(p, ("bool", "pointers assumed bool (their loads are negated: `not tl.load(mask_ptr)`)"))
    for p in atomic_max_pointers(k, pointers):
        out.setdefault(p, ("float32", "pointers of tl.atomic_max/min assumed float32 (no half-precision atomic max)"))
    return out


@dataclass(frozen=True)
class _LaunchContext:
    """The kernel and the text its launches are read from, as _host_dtypes reads them."""

    kernel: object
    src: object


def _config(k, cfg, values: dict[str, Filled], pins: KernelPins, pointers: tuple, dtype: tuple, src,
            suffix: str) -> dict:
    """One CONFIG; `pointers` is (pointer params, {pointer: (dtype, why)}, the parameters' uses),
    `dtype` (the other pointers' stand-in dtype, why)."""
    dtype, dtype_why = dtype
    pointers, typed, use = pointers
    descriptors = descriptor_params(k)
    typed_args: dict[str, list[str]] = {}
    launch_pins = pins.for_launch(cfg.launch.line if cfg.launch is not None else None)
    args, sources, notes = {}, {}, []
    aligned, plain, floats, strides, unit, sizes = [], [], [], [], [], []
    for p in k.params:
        v = values.get(p.name)
        if p.is_constexpr:
            if v is not None:
                args[p.name] = _constexpr_arg(v.value)
                sources[p.name] = v.source
                if v.source == "assumed":
                    notes.append(v.note(p.name))
            continue  # absent: its default, or the autotune config the worker expands over
        pin = launch_pins.get(p.name)
        s = cfg.scalars.get(p.name)
        if p.name in descriptors:  # its block shape's constexprs resolve in the worker, per config
            elem = typed[p.name][0] if p.name in typed else dtype
            args[p.name] = {"kind": "tensordesc", "dtype": elem, "block_shape": descriptors[p.name]}
            notes.append(f"{p.name} stands in as a tensor descriptor ({elem}, block "
                         f"[{', '.join(map(str, descriptors[p.name]))}] from the kernel's tiles)")
            continue
        if p.name in pointers:
            if pin is not None and isinstance(pin.value, DType):
                args[p.name] = {"kind": "tensor", "dtype": pin.value.name, "align": 16}
                sources[p.name] = "pinned"
            elif p.name in typed:
                args[p.name] = {"kind": "tensor", "dtype": typed[p.name][0], "align": 16}
                typed_args.setdefault(typed[p.name][1], []).append(f"{p.name} ({typed[p.name][0]})")
            else:
                args[p.name] = {"kind": "tensor", "dtype": dtype, "align": 16}
                aligned.append(p.name)
            continue
        if s is not None and s.value is not UNKNOWN and isinstance(s.value, (bool, int, float)):
            args[p.name] = _scalar_arg(s.value)
            continue
        if pin is not None and isinstance(pin.value, (bool, int, float)):
            args[p.name] = _scalar_arg(pin.value)
            sources[p.name] = "pinned"
            continue
        if p.has_default:
            continue  # the worker takes the default
        if _is_float_param(k, p, cfg.launch, src, use):
            args[p.name] = {"kind": "float", "value": 1.0}
            floats.append(p.name)
        elif (stride := _stride_value(k, p, cfg.launch, src)) is not None:
            args[p.name] = {"kind": "int", "value": stride}
            (unit if stride == 1 else strides if "stride" in p.name.lower() else sizes).append(p.name)
        else:
            args[p.name] = {"kind": "int", "value": PLAIN_INT}
            plain.append(p.name)
    options = {}
    for n in ("num_warps", "num_stages"):
        v = values.get(n)
        if v is not None:
            options[n] = v.value
            sources[n] = v.source
            if v.source == "assumed":
                notes.append(v.note(n))
    if aligned:
        notes.append(f"{dtype_why}, 16-byte aligned: {', '.join(aligned)}")
    notes += [f"{why}: {', '.join(names)}" for why, names in typed_args.items()]
    if strides:
        notes.append("strides assumed divisible by 16, as the JIT specialises a contiguous tensor's row stride: "
                     + ", ".join(strides))
    if sizes:
        notes.append("sizes assumed divisible by 16, as the JIT specialises a model's widths: " + ", ".join(sizes))
    if unit:
        notes.append("strides of the last dimension assumed 1, as the JIT specialises them: " + ", ".join(unit))
    if plain:
        notes.append("integers unknown, compiled as plain i32 (not 1, not divisible by 16): " + ", ".join(plain))
    if floats:
        notes.append("floats unknown, compiled as fp32: " + ", ".join(floats))
    source = weakest(sources.values())
    out = {"label": f"{source}: {cfg.label}{suffix}", "args": args, "options": options, "source": source,
           "value_sources": sources, "assumed": notes}
    # Only assumed values are retried when they do not compile: a pinned or read one is the user's.
    retry = {n: list(v.alternatives) for n, v in values.items()
             if v.source == "assumed" and v.alternatives and (n in args or n in options)}
    if retry:
        out["retry"] = retry
    return out


def _constexpr_arg(v) -> dict:
    if isinstance(v, DType):
        return {"kind": "dtype", "value": v.name}
    return {"kind": "constexpr", "value": v}


def _scalar_arg(v) -> dict:
    return {"kind": "bool" if isinstance(v, bool) else "float" if isinstance(v, float) else "int", "value": v}
