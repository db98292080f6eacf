"""Worker job "compile": cross-compile a file's Triton kernels for a GPU that need not be present.

Standalone (stdlib + triton; torch only if the user's module imports it): shipped as a plain file to
whatever interpreter runs the worker.

The job is a messages.CompileJob, the result a messages.CompileResult.

The user's module, its top level run statement by statement so that nothing it does at import
costs the kernels: tolerant_module.py; the driver stand-in: compile_loading.py; its arguments and configurations:
compile_configs.py.

The signature is built by Triton's own binder (`create_function_from_signature` + `_pack_args`, the
code `JITFunction.run` uses), fed stand-in tensors that carry the real dtype and data_ptr, so pointer
alignment, integers divisible by 16 and integers equal to 1 are specialised exactly as the JIT
would on the GPU.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from compile_configs import build_args, expand_configs, specialise
from compile_loading import JobError, _compile_mode, def_line, unwrap_kernel
from compile_refusals import in_user_terms
from compile_retry import KernelRetries, compile_with_retries
from messages import NOT_IN_CACHE
from older_language import compiled_noting, emulated, note
from tolerant_module import define_again, load_tolerant

DEFAULT_ARTIFACTS = ("ptx", "sass", "ttgir")
# "cubin" comes back base64-encoded; "sass?" means: SASS only when the kernel spills (nvdisasm costs
# 0.5-1 s, and per-line spill traffic is all the facts need it for).
ALL_ARTIFACTS = ("ttir", "ttgir", "llir", "ptx", "sass", "sass?", "cubin")
# Bump when what a cached entry holds changes.
CACHE_FORMAT = 4  # 2, 3: errors in user terms (compile_refusals.py); 4: what older Tritons compiled (older_language.py)

COMPILE_CALLS = 0  # triton.compile invocations in this process (tests prove cache hits with it)


# --------------------------------------------------------------------------------------------
# Compiling


def make_target(name: str):
    from triton.backends.compiler import GPUTarget

    # The capability is in the name ("sm_90a" → 90): the worker needs no table of GPUs.
    m = re.fullmatch(r"sm_?(\d+)a?", name or "")
    if not m:
        raise JobError(f"unknown target {name!r} (expected e.g. \"sm_90\")")
    return GPUTarget("cuda", int(m.group(1)), 32)


def _bin(name: str) -> str:
    import triton

    path = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)
    if os.path.exists(path):
        return path
    found = shutil.which(name)
    if not found:
        raise JobError(f"{name} not found (the triton wheel ships it under triton/backends/nvidia/bin)")
    return found


def resource_usage(cubin: bytes) -> dict:
    """Registers, stack and local bytes from `cuobjdump -res-usage`: what ptxas allocated."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as fh:
        fh.write(cubin)
        fh.flush()
        out = subprocess.run([_bin("cuobjdump"), "-res-usage", fh.name], capture_output=True, text=True,
                             timeout=60, check=False).stdout
    m = re.search(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)", out)
    if not m:
        raise JobError("cuobjdump -res-usage printed no resource line")
    return {"registers": int(m.group(1)), "stack_bytes": int(m.group(2)), "static_shared_bytes": int(m.group(3)),
            "local_bytes": int(m.group(4))}


def disassemble(cubin: bytes) -> str:
    """SASS with source lines (inlined calls resolved to their call site in the kernel)."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as fh:
        fh.write(cubin)
        fh.flush()
        proc = subprocess.run([_bin("nvdisasm"), "-gi", "-c", fh.name], capture_output=True, text=True, timeout=120,
                              check=False)
    if proc.returncode != 0:
        raise JobError(f"nvdisasm failed: {proc.stderr.strip()[:500]}")
    return proc.stdout


def _jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    name = type(v).__name__
    if name == "constexpr":
        return _jsonable(v.value)
    return str(v)


def map_error(exc, text: str, fn, path: str) -> dict:
    """A compile error as {"message", "line", "column"} in file coordinates (1-based line, 0-based
    column). Triton's "at L:C" counts from the kernel's `def` line (L=1) in its dedented source."""
    out = {"type": type(exc).__name__, "message": str(exc).strip(), "line": None, "column": None}
    src = getattr(exc, "src", None)
    node = getattr(exc, "node", None)
    if type(exc).__name__ == "CompilationError":
        # A refusal inside a jit helper comes wrapped once per call level: the innermost
        # message with text is the reason.
        msg = getattr(exc, "error_message", None)
        cause, last = exc.__cause__, None
        while not msg and cause is not None:
            msg = getattr(cause, "error_message", None)
            last = cause
            cause = cause.__cause__
        if not msg and last is not None and type(last).__name__ != "CompilationError":
            msg = f"{type(last).__name__}: {last}"
        out["message"] = (msg or str(exc).split("\n")[-1]).strip()
        m = re.match(r"at (\d+):(\d+):", str(exc))
        rel_line = getattr(node, "lineno", None) or (int(m.group(1)) if m else None)
        rel_col = getattr(node, "col_offset", None)
        if rel_col is None and m:
            rel_col = int(m.group(2))
        if rel_line is not None and src:
            base, indent = _locate_source(text, src, fn)
            out["line"] = base + rel_line - 1
            out["column"] = (rel_col or 0) + indent
    import triton

    out["message"] = in_user_terms(out["message"], triton.__version__)
    if out["line"] is None:
        # Errors from later stages (MLIR passes, ptxas) name no position: the kernel's def line.
        out["line"] = def_line(fn)
        out["column"] = 0
    return out


def _locate_source(text: str, src: str, fn) -> tuple[int, int]:
    """(1-based file line where `src` starts, its indentation) — src is the dedented function."""
    first = src.splitlines()[0].strip() if src.strip() else ""
    lines = text.splitlines()
    start = def_line(fn)
    order = list(range(start - 1, len(lines))) + list(range(start - 1))
    for i in order:
        if first and lines[i].strip() == first:
            return i + 1, len(lines[i]) - len(lines[i].lstrip())
    return start, 0


def compile_config(fn, text, path, backend, target, cfg, cache_dir, artifacts, cached_only=False):
    import triton
    from triton.compiler import ASTSource

    global COMPILE_CALLS
    try:
        values = build_args(fn, cfg)
        options, signature, constexprs, attrs = specialise(fn, backend, values, cfg["options"])
    except JobError:
        raise
    except Exception as exc:
        raise JobError(f"Triton's binder refused this configuration: {type(exc).__name__}: {exc}") from exc
    names = [p.name for p in fn.params]
    constexpr_values = {names[k[0]]: _jsonable(v) for k, v in constexprs.items() if len(k) == 1}
    spec = {names[k[0]]: ("D" if any(a and a[0] == "tt.divisibility" for a in v) else "")
            for k, v in attrs.items() if len(k) == 1 and not fn.params[k[0]].is_constexpr}
    for name, ty in signature.items():
        if ty == "constexpr" and name in constexpr_values and not fn.params[names.index(name)].is_constexpr:
            spec[name] = f"={constexpr_values[name]}"  # an argument the JIT turned into a constant (== 1)
    opt_dict = {k: v for k, v in options.__dict__.items() if k != "extern_libs"}
    result = {
        "label": cfg["label"],
        "constexprs": {k: v for k, v in constexpr_values.items() if fn.params[names.index(k)].is_constexpr},
        "signature": dict(signature),
        "specialization": spec,
        "options": _jsonable(opt_dict),
        "num_warps": options.num_warps,
        "num_stages": options.num_stages,
        "error": None,
    }
    key_src = json.dumps([CACHE_FORMAT, fn.cache_key, _jsonable(signature), sorted(map(repr, constexprs.items())),
                          sorted(map(repr, attrs.items())), _jsonable(opt_dict), repr(target), triton.__version__,
                          sorted(artifacts)], sort_keys=True, default=str)
    key = hashlib.sha256(key_src.encode()).hexdigest()[:32]
    result["key"] = key
    cached = _cache_get(cache_dir, key)
    if cached is not None:
        cached.update(label=cfg["label"], cached=True)
        return cached
    if cached_only:
        raise JobError(NOT_IN_CACHE)
    t0 = time.perf_counter()
    try:
        COMPILE_CALLS += 1
        kernel, result["older_language"] = compiled_noting(lambda: triton.compile(
            ASTSource(fn, signature, constexprs, attrs), target=target, options=options.__dict__))
    except Exception as exc:  # noqa: BLE001 - every compiler failure is a TL105 for the user
        result["error"] = map_error(exc, text, fn, path)
        result.update(compile_s=round(time.perf_counter() - t0, 3), cached=False)
        if "is not defined" not in result["error"]["message"]:
            # A missing name is this run's environment (an import that failed), not the kernel's
            # source, which is all the key holds: it must not answer the next run from the cache.
            _cache_put(cache_dir, key, result)
        return result
    result["compile_s"] = round(time.perf_counter() - t0, 3)
    md = kernel.metadata
    result["shared_bytes"] = int(getattr(md, "shared", 0) or 0)
    result["tmem_bytes"] = int(getattr(md, "tmem_size", 0) or 0)
    result["num_warps"] = int(getattr(md, "num_warps", options.num_warps))
    cubin = kernel.asm["cubin"]
    result.update(resource_usage(cubin))
    arts = {}
    for stage in artifacts:
        if stage == "sass" or (stage == "sass?" and max(result["stack_bytes"], result["local_bytes"]) > 0):
            arts["sass"] = disassemble(cubin)
        elif stage == "cubin":
            arts["cubin"] = base64.b64encode(cubin).decode("ascii")
        elif stage in kernel.asm:
            arts[stage] = kernel.asm[stage]
    result["artifacts"] = arts
    result["cached"] = False
    _cache_put(cache_dir, key, result)
    return result


def _cache_get(cache_dir, key):
    if not cache_dir:
        return None
    try:
        with open(os.path.join(cache_dir, key[:2], key + ".json"), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _cache_put(cache_dir, key, result) -> None:
    if not cache_dir:
        return
    folder = os.path.join(cache_dir, key[:2])
    try:
        os.makedirs(folder, exist_ok=True)
        tmp = os.path.join(folder, f".{key}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(result, fh)
        os.replace(tmp, os.path.join(folder, key + ".json"))  # atomic: readers never see half a file
    except OSError:
        pass  # a cache that cannot be written only costs a recompile


# --------------------------------------------------------------------------------------------


def handle(job) -> dict:
    import triton
    from triton.compiler import make_backend

    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # 3.9 warns when unset; 1 is the JIT's default
    if job.warmup:  # pay the one-time costs now, so that the first real compile is quick
        make_backend(make_target(job.target))
        for module, name in (("triton.runtime.cache", "triton_key"), ("triton.compiler.compiler", "triton_key")):
            key_fn = getattr(sys.modules.get(module) or __import__(module, fromlist=["_"]), name, None)
            if key_fn:
                key_fn()  # hashes Triton's own sources once per process (0.7 s)
                break
        try:
            import torch  # noqa: F401 - kernel files nearly always import it; 2 s on first import
        except ImportError:
            pass
        return {"triton_version": triton.__version__}
    if job.disassemble:
        return {"sass": disassemble(base64.b64decode(job.disassemble))}
    path = job.path
    if not isinstance(path, str) or not path:
        raise JobError("job needs 'path'")
    target = make_target(job.target)
    backend = make_backend(target)
    artifacts = tuple(DEFAULT_ARTIFACTS if job.artifacts is None else job.artifacts)
    bad = [a for a in artifacts if a not in ALL_ARTIFACTS]
    if bad:
        raise JobError(f"unknown artifact(s) {bad}; choose from {ALL_ARTIFACTS}")
    reply = {"triton_version": triton.__version__, "target": job.target, "kernels": [],
             "error": None}
    try:
        with _compile_mode(target):
            loaded = load_tolerant(path, job.text)
    except SyntaxError as exc:
        reply["error"] = {"type": "SyntaxError", "message": exc.msg, "line": exc.lineno,
                          "column": max((exc.offset or 1) - 1, 0)}
        return reply
    text = loaded.text
    reply["module_failures"] = loaded.failures[:20]
    with emulated():
        for spec in job.kernels:
            reply["kernels"].append(_compile_kernel(spec, loaded, text, path, backend, target, artifacts, job))
    reply["compile_calls"] = COMPILE_CALLS
    return reply


def _compile_kernel(spec, loaded, text, path, backend, target, artifacts, job) -> dict:
    """One kernel's entry of the reply: its line, each configuration compiled (or refused), its note."""
    name = spec.get("name")
    entry = {"name": name, "line": None, "configs": [], "error": None}
    if loaded.left_out.get(name):
        entry["note"] = "compiled without " + "; ".join(loaded.left_out[name])[:400]
    try:
        fn, autotune, heuristics = unwrap_kernel(loaded.module.__dict__.get(name))
    except JobError:
        with _compile_mode(target):
            obj, left_out = define_again(loaded, name, path)
        if obj is None:
            why = "; ".join(left_out + loaded.failures[:1])
            entry["error"] = {"type": "JobError", "message": f"{name} could not be defined: {why}"[:500]}
            return entry
        fn, autotune, heuristics = unwrap_kernel(obj)
        if left_out:
            entry["note"] = "compiled without " + "; ".join(left_out)[:400]
    entry["line"] = def_line(fn)
    try:
        configs = expand_configs(fn, autotune, heuristics, spec.get("configs"))
    except Exception as exc:  # noqa: BLE001 - a heuristic that raises on these arguments
        entry["error"] = {"type": type(exc).__name__, "message": f"expanding its configurations: {exc}"[:500]}
        return entry
    retries = KernelRetries()
    for cfg in configs:
        def compile_one(c, fn=fn, line=entry["line"]):
            try:
                return compile_config(fn, text, path, backend, target, c, job.cache_dir, artifacts,
                                      job.cached_only)
            except Exception as exc:  # noqa: BLE001 - one configuration Triton's binder refuses
                # (num_warps not a power of 2, a missing argument) costs only that configuration
                kind = "JobError" if isinstance(exc, JobError) else type(exc).__name__
                return {"label": c["label"], "error": {"type": kind, "message": str(exc)[:500],
                                                       "line": line, "column": 0}}
        entry["configs"].append(compile_with_retries(compile_one, cfg, text, retries))
    emulation = note([u for c in entry["configs"] if c.get("error") is None for u in c.get("older_language", ())])
    if emulation:
        entry["note"] = f"{emulation}; {entry['note']}" if entry.get("note") else emulation
    return entry


if __name__ == "__main__":  # one job on stdin, one reply on stdout: handy outside the worker protocol
    import messages  # a sibling: the script's folder is on sys.path

    print(json.dumps(handle(messages.CompileJob.from_json(json.load(sys.stdin)))))
