"""Launch capture and replay for the kernels of one user file. Standalone (torch + triton only).

A launch hook wraps `run` of JITFunction (compiled path) and of InterpretedFunction (the
TRITON_INTERPRET=1 path): plain, heuristic and autotuned kernels end in one of those alike. The
autotuner's benchmark launches are not recorded (Autotuner._bench mutes the hook), only the
one with the chosen config; the interpreter cannot time configs, so there the first one runs
untimed (tuner_choice.py) and the descriptor's "tuning" says so.

Each distinct launch becomes a descriptor: messages.LaunchDescriptor describes its JSON. Replaying a
recorded launch on fresh data: replay.py.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import os
import textwrap
import threading

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # must precede the user's `import triton` effects

from triton.runtime import autotuner as _autotuner
from triton.runtime import jit as _jit

try:
    from triton.runtime.interpreter import InterpretedFunction as _Interpreted
except Exception:  # pragma: no cover - interpreter always ships, but never let it break capture
    _Interpreted = None

MAX_SIGNATURES_PER_KERNEL = 32
_STORE_FUNCS = {"store", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
                "atomic_xchg", "atomic_cas"}
_DEFAULTS = {"num_warps": 4, "num_stages": 3}


def interpreter_mode() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available()


def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def _is_tensor(value) -> bool:
    return isinstance(value, torch.Tensor) or (hasattr(value, "data_ptr") and hasattr(value, "dtype")
                                               and hasattr(value, "base"))


def _unwrap(value):
    # triton.reinterpret wraps tensors in TensorWrapper(base, dtype)
    return value.base if not isinstance(value, torch.Tensor) and hasattr(value, "base") else value


def _python_fn(kernel):
    return getattr(kernel, "fn", None)


def _arg_names(kernel) -> list[str]:
    return list(kernel.arg_names) if hasattr(kernel, "arg_names") else list(inspect.signature(_python_fn(kernel)).parameters)


def _constexpr_names(kernel) -> set[str]:
    params = getattr(kernel, "params", None)
    if params:
        return {p.name for p in params if getattr(p, "is_constexpr", False)}
    fn = _python_fn(kernel)
    names = set()
    for name, ann in getattr(fn, "__annotations__", {}).items():
        if "constexpr" in (ann if isinstance(ann, str) else repr(ann)):
            names.add(name)
    return names


def _pointer_names(fn, is_access) -> set[str] | None:
    """Names feeding the pointer argument of the tl calls `is_access(attr)` selects, in the
    source of `fn`, through local aliasing (`ptrs = out_ptr + offs` then tl.store(ptrs, ...)).
    None when the source cannot be read."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    aliases: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            used = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            for target in node.targets:
                if isinstance(target, ast.Name):
                    aliases.setdefault(target.id, set()).update(used)
    names: set[str] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and is_access(node.func.attr) and node.args):
            used = {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name)}
            for _ in range(3):
                used |= {a for u in list(used) for a in aliases.get(u, ())}
            names |= used
    return names


_static_cache: dict = {}


def static_written(kernel) -> set[str]:
    """Parameter names used in the pointer argument of tl.store / tl.atomic_* (source scan)."""
    fn = _python_fn(kernel)
    if fn not in _static_cache:
        used = _pointer_names(fn, lambda attr: attr in _STORE_FUNCS)
        try:
            params = set(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            params = set()
        _static_cache[fn] = (used or set()) & params
    return _static_cache[fn]


def _scalar(value):
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, int):
        return "int", value
    if isinstance(value, float):
        return "float", value
    return None, None


def _constexpr_value(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if hasattr(value, "value"):  # tl.constexpr
        return _constexpr_value(value.value)
    if isinstance(value, torch.dtype) or type(value).__module__.startswith("triton"):
        return str(value)
    return repr(value)


def _resolve_grid(grid, meta: dict) -> list[int]:
    if callable(grid):
        grid = grid(meta)
    grid = tuple(int(g) for g in grid)
    return list(grid + (1,) * (3 - len(grid)))


class LaunchRecord:
    """One distinct launch: its JSON descriptor plus what an in-process replay needs."""

    def __init__(self, kernel, descriptor: dict, snapshots: dict):
        self.kernel = kernel  # the JITFunction / InterpretedFunction whose run() was called
        self.descriptor = descriptor
        self.snapshots = snapshots  # integer tensors' values (indices must stay in range)


class Capture:
    """Context manager recording launches of kernels defined in `file` (all files if None)."""

    def __init__(self, file: str | None = None, detect_writes: bool = True):
        self.file = os.path.realpath(file) if file else None
        self.detect_writes = detect_writes
        self.records: dict[str, LaunchRecord] = {}
        self.order: list[str] = []
        self.case = None
        self.errors: list[str] = []
        self._saved = []
        self._local = threading.local()
        self.total_launches = 0

    # -- patching ----------------------------------------------------------------------
    def __enter__(self):
        capture = self

        def wrap_run(cls):
            original = cls.run

            def run(kernel, *args, grid, warmup, **kwargs):
                if warmup or getattr(capture._local, "muted", 0) or not capture._wants(kernel):
                    return original(kernel, *args, grid=grid, warmup=warmup, **kwargs)
                return capture._launch(original, kernel, args, grid, kwargs)

            self._saved.append((cls, "run", original))
            cls.run = run

        wrap_run(_jit.JITFunction)
        if _Interpreted is not None:
            wrap_run(_Interpreted)

        bench = getattr(_autotuner.Autotuner, "_bench", None)
        if bench is not None:
            def muted_bench(tuner, *args, **kwargs):
                capture._local.muted = getattr(capture._local, "muted", 0) + 1
                try:
                    return bench(tuner, *args, **kwargs)
                finally:
                    capture._local.muted -= 1

            self._saved.append((_autotuner.Autotuner, "_bench", bench))
            _autotuner.Autotuner._bench = muted_bench

        tuner_run = _autotuner.Autotuner.run

        def autotuner_run(tuner, *args, **kwargs):
            capture._local.autotuned = getattr(capture._local, "autotuned", 0) + 1
            try:
                if interpreter_mode() and len(tuner.configs) > 1:  # its timer needs a GPU driver
                    import tuner_choice  # a sibling in the worker; here only, as tests load this file by path
                    capture._local.tuning = tuner_choice.untimed_note(tuner, 0)
                    try:
                        return tuner_choice.run_one(tuner_run, tuner, 0, args, kwargs)
                    finally:
                        capture._local.tuning = None
                return tuner_run(tuner, *args, **kwargs)
            finally:
                capture._local.autotuned -= 1

        self._saved.append((_autotuner.Autotuner, "run", tuner_run))
        _autotuner.Autotuner.run = autotuner_run
        return self

    def __exit__(self, *exc):
        for cls, name, original in reversed(self._saved):
            setattr(cls, name, original)
        self._saved.clear()

    def _wants(self, kernel) -> bool:
        fn = _python_fn(kernel)
        code = getattr(fn, "__code__", None)
        if code is None:
            return False
        return self.file is None or os.path.realpath(code.co_filename) == self.file

    # -- recording ---------------------------------------------------------------------
    def _launch(self, original, kernel, args, grid, kwargs):
        self.total_launches += 1
        fn = _python_fn(kernel)
        names = _arg_names(kernel)
        constexpr_names = _constexpr_names(kernel)
        bound = dict(zip(names, args))
        params = inspect.signature(fn).parameters
        for name, value in kwargs.items():
            if name in params:
                bound[name] = value
        for name, p in params.items():
            if name not in bound and p.default is not inspect.Parameter.empty:
                bound[name] = p.default
        options = {k: v for k, v in kwargs.items() if k not in params}
        try:
            meta = dict(bound)
            meta.update(options)
            grid_list = _resolve_grid(grid, meta)
        except Exception as exc:  # the launch itself will raise the real error
            self.errors.append(f"{fn.__name__}: cannot evaluate grid: {exc}")
            return original(kernel, *args, grid=grid, warmup=False, **kwargs)

        arg_desc = []
        storages: dict[int, int] = {}
        tensors = {}
        for index, name in enumerate(names):
            if name not in bound:
                arg_desc.append({"name": name, "kind": "missing"})
                continue
            value = bound[name]
            if name in constexpr_names:
                arg_desc.append({"name": name, "kind": "constexpr", "value": _constexpr_value(value)})
            elif value is None:
                arg_desc.append({"name": name, "kind": "none"})
            elif _is_tensor(value):
                t = _unwrap(value)
                sptr = t.untyped_storage().data_ptr()
                alias = storages.get(sptr)
                storages.setdefault(sptr, index)
                d = {"name": name, "kind": "tensor", "dtype": _dtype_name(getattr(value, "dtype", t.dtype)),
                     "shape": list(t.shape), "strides": list(t.stride()), "storage_offset": t.storage_offset(),
                     "device": str(t.device), "alias_of": names[alias] if alias is not None else None,
                     "written": False}
                if d["dtype"] != _dtype_name(t.dtype):
                    d["storage_dtype"] = _dtype_name(t.dtype)
                arg_desc.append(d)
                tensors[name] = t
            else:
                kind, val = _scalar(value)
                if kind is None:
                    arg_desc.append({"name": name, "kind": "other", "repr": repr(value)[:200]})
                else:
                    arg_desc.append({"name": name, "kind": "scalar", "type": kind, "value": val})
        constexprs = {d["name"]: d["value"] for d in arg_desc if d["kind"] == "constexpr"}
        # the file's base name, not its path: a copy shipped to a remote temp dir keys the same
        sig = {"kernel": fn.__qualname__, "file": os.path.basename(fn.__code__.co_filename),
               "args": arg_desc, "grid": grid_list,
               "options": {k: _constexpr_value(v) for k, v in sorted(options.items())}}
        key = hashlib.sha256(json.dumps(sig, sort_keys=True, default=str).encode()).hexdigest()[:16]
        record = self.records.get(key)
        if record is not None:
            record.descriptor["count"] += 1
            return original(kernel, *args, grid=grid, warmup=False, **kwargs)

        per_kernel = sum(1 for r in self.records.values() if r.descriptor["kernel"] == fn.__name__)
        track = per_kernel < MAX_SIGNATURES_PER_KERNEL
        before = {}
        if track and self.detect_writes:
            with torch.no_grad():
                before = {n: t.clone() for n, t in tensors.items()}
        snapshots = {n: t.clone() for n, t in tensors.items()
                     if track and not (t.dtype.is_floating_point or t.dtype.is_complex)}

        result = original(kernel, *args, grid=grid, warmup=False, **kwargs)
        if not track:
            return result

        written_by: dict[str, list[str]] = {}
        for n, t in before.items():
            if _changed(t, tensors[n]):
                written_by.setdefault(n, []).append("compare")
        for n in static_written(kernel):
            if n in tensors:
                written_by.setdefault(n, []).append("static")
        for d in arg_desc:
            if d["kind"] == "tensor":
                d["written"] = d["name"] in written_by

        num_warps, num_stages = options.get("num_warps"), options.get("num_stages")
        metadata = getattr(result, "metadata", None)
        if metadata is not None:
            num_warps = getattr(metadata, "num_warps", num_warps)
            num_stages = getattr(metadata, "num_stages", num_stages)
        read_bytes = written_bytes = 0
        for d in arg_desc:
            if d["kind"] == "tensor":
                nbytes = tensors[d["name"]].numel() * tensors[d["name"]].element_size()
                # an output-only buffer is not read; one that is read-modify-written is both
                if not d["written"] or "load" in _loaded_names(kernel, d["name"]):
                    read_bytes += nbytes
                if d["written"]:
                    written_bytes += nbytes
        descriptor = {
            "kernel": fn.__name__, "qualname": fn.__qualname__,
            "file": os.path.realpath(fn.__code__.co_filename),
            "def_line": _def_line(fn), "key": key, "source_hash": source_hash(fn),
            "mode": "interpreter" if interpreter_mode() else "gpu",
            "autotuned": bool(getattr(self._local, "autotuned", 0)), "count": 1, "case": self.case,
            "grid": grid_list,
            "num_warps": int(num_warps if num_warps is not None else _DEFAULTS["num_warps"]),
            "num_stages": int(num_stages if num_stages is not None else _DEFAULTS["num_stages"]),
            "constexprs": constexprs, "options": sig["options"], "args": arg_desc,
            "written": sorted(written_by), "written_by": written_by,
            "bytes": {"read": read_bytes, "written": written_bytes},
        }
        if getattr(self._local, "tuning", None):
            descriptor["tuning"] = self._local.tuning
        self.records[key] = LaunchRecord(kernel, descriptor, snapshots)
        self.order.append(key)
        return result

    def descriptors(self) -> list[dict]:
        return [self.records[k].descriptor for k in self.order]


def _changed(before: torch.Tensor, after: torch.Tensor) -> bool:
    if before.shape != after.shape:
        return True
    if before.dtype.is_floating_point:
        both_nan = before.isnan() & after.isnan()
        return bool(((before != after) & ~both_nan).any())
    return not torch.equal(before, after)


_loads_cache: dict = {}


def _loaded_names(kernel, name: str) -> set[str]:
    """{"load"} if the kernel source loads through parameter `name` (for read-byte counting)."""
    fn = _python_fn(kernel)
    if fn not in _loads_cache:
        _loads_cache[fn] = _pointer_names(fn, lambda attr: attr == "load" or attr.startswith("atomic_"))
    loaded = _loads_cache[fn]
    return {"load"} if loaded is None or name in loaded else set()


def source_hash(fn) -> str | None:
    """Hash of the kernel's own source text: results stay valid while it is unchanged."""
    try:
        text = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _def_line(fn) -> int | None:
    """1-based line of the `def` (co_firstlineno points at the first decorator)."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    for offset, line in enumerate(lines):
        if line.lstrip().startswith(("def ", "async def ")):
            return start + offset
    return start
