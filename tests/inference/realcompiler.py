"""Compile a fixture's kernel with the installed Triton (sm_90 cross-compile on the CPU), to show
that what a rule reports is what the compiler refuses, and that what it accepts stays silent.

Fixture convention: pointer parameters end in `_ptr` (fp32 pointees unless the fixture sets a
module-level `ARG_DTYPES = {"param": "*fp16", ...}`); other runtime parameters are i32."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def load_module(path: Path):
    name = f"_tritonlens_fixture_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(name, None)
    return mod


def jit_function(mod, name: str):
    from triton.runtime.jit import JITFunction

    obj = getattr(mod, name)
    while not isinstance(obj, JITFunction) and hasattr(obj, "fn"):  # Autotuner / Heuristics wrap the JITFunction
        obj = obj.fn
    return obj


def compile_kernel(mod, name: str, constexprs: dict) -> None:
    """Raises whatever the compiler raises."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = jit_function(mod, name)
    dtypes = getattr(mod, "ARG_DTYPES", {})
    sig = {}
    for p in fn.params:
        if p.is_constexpr:
            sig[p.name] = "constexpr"
        elif p.name in dtypes:
            sig[p.name] = dtypes[p.name]
        elif p.name.endswith("_ptr"):
            sig[p.name] = "*fp32"
        else:
            sig[p.name] = "i32"
    triton.compile(ASTSource(fn, sig, dict(constexprs)), target=GPUTarget("cuda", 90, 32))
