"""Compile configurations from the static model, for kernels no captured launch reached.

A kernel whose harness fails before launching it (often because the kernel itself does not
compile: the interpreter trips on the same `tl.arange(0, 48)` the compiler would), or a file with
no harness at all, still has literal launch sites and autotune configs the analysis resolves. Each
resolved `Config` (constexprs, num_warps, num_stages, the runtime ints it could read) becomes one
compile job CONFIG; the runtime arguments it could not read are described conservatively and every
such guess is named in the config's "assumed" list:

- pointers (a `*ptr` name, or the base of a `tl.load` / `tl.store` / atomic / block pointer) get the
  element type the analysis' estimates assume (fp16/bf16 when the kernel converts to or allocates in
  half precision, else fp32) and 16-byte alignment, which every torch allocation has;
- integers get a value that is neither 1 nor divisible by 16: a plain i32 with no specialisation,
  the compile the JIT would make for the least favourable arguments;
- floats (annotated, defaulted or passed as such at the launch) get a plain fp32.

Client side only (imports tritonlens.analysis): the worker receives ordinary CONFIG dicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.estimates import ElementSizes, base_pointer
from tritonlens.analysis.model import ATOMICS
from tritonlens.analysis.values import UNKNOWN

MAX_STATIC_CONFIGS = 8  # the worker compiles at most this many per kernel
# An integer the JIT specialises on nothing: not 1 (a constant) and not a multiple of 16.
PLAIN_INT = 3
_FLOAT_NAMES = re.compile(r"(^|_)(eps|epsilon|scale|alpha|beta|gamma|momentum|temperature|temp|rate|factor|"
                          r"sm_scale|qk_scale|softcap|dropout|p_drop)($|_)", re.IGNORECASE)
_POINTER_CALLS = {"load", "store", "make_block_ptr"} | ATOMICS


def _pointer_params(kernel) -> set[str]:
    params = {p.name for p in kernel.params if not p.is_constexpr}
    out = {n for n in params if n.lower().endswith("ptr")}
    for c in kernel.calls:
        if c.name not in _POINTER_CALLS:
            continue
        node = c.arg(0, "base") if c.name == "make_block_ptr" else c.arg(0, "pointer")
        try:
            base = base_pointer(kernel, node)
        except Exception:  # noqa: BLE001 - half-typed code: a pointer we cannot trace stays an int
            base = None
        if base in params:
            out.add(base)
    return out


def _launch_arg(kernel, launch, pname: str):
    """The node the launch passes for `pname` (keyword or position), or None."""
    if launch is None:
        return None
    if pname in launch.kwargs:
        return launch.kwargs[pname]
    idx = next((p.index for p in kernel.params if p.name == pname), None)
    return launch.args[idx] if idx is not None and idx < len(launch.args) else None


def _is_float_param(kernel, param, launch, src) -> str | None:
    """Why `param` is a float, or None: annotation, default, what the launch passes, or its name."""
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
    if _FLOAT_NAMES.search(param.name):
        return "name"
    return None


def _constexpr_ok(v) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


@dataclass(frozen=True)
class StaticKernel:
    """A kernel the static model looked at: its `def` line (1-based), and why it has no
    configuration when it has none."""

    line: int
    note: str | None = None


StaticConfigs = tuple[dict[str, list[dict]], dict[str, StaticKernel]]


def static_configs_of_text(text: str, kernels: set[str] | None = None, skip: set[str] = frozenset()) \
        -> StaticConfigs:
    """`static_configs` of a file no one has analysed yet (the CLI): a cold analysis of the whole file."""
    module = Analyzer().analyze(text).module
    return static_configs(module, kernels, skip) if module is not None else ({}, {})


def static_configs(module, kernels: set[str] | None = None, skip: set[str] = frozenset()) -> StaticConfigs:
    """({kernel: [CONFIG]}, {kernel: StaticKernel}) for the kernels of `module` (the analysis'
    model of the file) in `kernels` (all when None) but not in `skip`. A kernel only ever called from
    another kernel (a helper) is left out; one with no resolvable configuration gets a note saying
    why instead of configs. Resolving configurations fills caches on the model: call it on the
    thread that owns `module` (the language server's analysis thread)."""
    out: dict[str, list[dict]] = {}
    info: dict[str, StaticKernel] = {}
    for k in module.kernels:
        if k.name in skip or (kernels is not None and k.name not in kernels):
            continue
        if not k.launches and not k.autotuned and _is_helper(module, k):
            continue
        line = k.name_range.start.line + 1
        src = k.src or module.src  # a cached model's nodes index the text it was built from
        pointers = _pointer_params(k)
        hint = ElementSizes(k, module).half_hint
        dtype = hint[0] if hint else "float32"
        dtype_why = (f"pointers assumed {dtype} (the kernel uses tl.{dtype} at line {hint[1]})" if hint
                     else "pointers assumed float32 (no half-precision type in the kernel)")
        configs, unknown = [], set()
        for cfg in k.configs:
            missing = [n for n, v in cfg.values.items() if v.value is UNKNOWN]
            if missing:
                unknown.update(missing)
                continue
            if not all(_constexpr_ok(v.value) for v in cfg.values.values()):
                continue
            args, assumed = {}, []
            aligned, plain, floats = [], [], []
            for p in k.params:
                v = cfg.values.get(p.name)
                if p.is_constexpr:
                    if v is not None:
                        args[p.name] = {"kind": "constexpr", "value": v.value}
                    continue  # absent: its default, or the autotune config the worker expands over
                if p.name in pointers:
                    args[p.name] = {"kind": "tensor", "dtype": dtype, "align": 16}
                    aligned.append(p.name)
                    continue
                s = cfg.scalars.get(p.name)
                if s is not None and s.value is not UNKNOWN and isinstance(s.value, (bool, int, float)):
                    kind = "bool" if isinstance(s.value, bool) else "float" if isinstance(s.value, float) else "int"
                    args[p.name] = {"kind": kind, "value": s.value}
                    continue
                if p.has_default:
                    continue  # the worker takes the default
                if _is_float_param(k, p, cfg.launch, src):
                    args[p.name] = {"kind": "float", "value": 1.0}
                    floats.append(p.name)
                else:
                    args[p.name] = {"kind": "int", "value": PLAIN_INT}
                    plain.append(p.name)
            if aligned:
                assumed.append(f"{dtype_why}, 16-byte aligned: {', '.join(aligned)}")
            if plain:
                assumed.append("integers unknown, compiled as plain i32 (not 1, not divisible by 16): "
                               + ", ".join(plain))
            if floats:
                assumed.append("floats unknown, compiled as fp32: " + ", ".join(floats))
            if k.heuristics:
                assumed.append("@triton.heuristics evaluated on these assumed arguments")
            options = {n: cfg.values[n].value for n in ("num_warps", "num_stages") if n in cfg.values}
            configs.append({"label": f"static: {cfg.label}", "args": args, "options": options,
                            "source": "static", "assumed": assumed})
        note = None
        if configs:
            out[k.name] = configs[:MAX_STATIC_CONFIGS]
        elif unknown:
            note = ("no configuration could be resolved statically (unknown: "
                             + ", ".join(sorted(unknown)) + ")")
        else:
            note = "no launch site or autotune config to compile from"
        info[k.name] = StaticKernel(line, note)
    return out, info


def _is_helper(module, kernel) -> bool:
    """A @triton.jit function called from another kernel of the file (not launched itself)."""
    call = re.compile(r"(?<![\w.])" + re.escape(kernel.name) + r"\s*\(")
    return any(other is not kernel and call.search(other.text or "") for other in module.kernels)
