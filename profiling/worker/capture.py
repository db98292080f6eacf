"""Launch capture and replay for the kernels of one user file. Standalone (torch + triton only).

A launch hook wraps `run` of JITFunction (compiled path) and of InterpretedFunction (the
TRITON_INTERPRET=1 path): plain, heuristic and autotuned kernels end in one of those alike. The
autotuner's benchmark launches are not recorded (Autotuner._bench mutes the hook), only the
one with the chosen config; the interpreter cannot time configs, so there the first one runs
untimed (tuner_choice.py) and the descriptor's "tuning" says so.

Each distinct launch becomes a descriptor: messages.LaunchDescriptor describes its JSON. It is
recorded before it runs (its configuration is what the record is for) and completed after it
returns (the tensors it changed, the compiled kernel's warps); a launch that raised instead keeps
what stopped it under UNFINISHED, so a CPU run of that record can name the interpreter's limit.
Replaying a recorded launch on fresh data: replay.py.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
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

try:  # a plain file in the worker folder, or imported as a package module
    from launch_source import def_line, loaded_names, source_hash, static_written
except ImportError:
    from .launch_source import def_line, loaded_names, source_hash, static_written

MAX_SIGNATURES_PER_KERNEL = 32
_DEFAULTS = {"num_warps": 4, "num_stages": 3}
# A recorded launch that raised instead of returning: {"error": "Type: message", "limit": an
# interpreter_shims.InterpreterLimit key or None, "line": that limit's words for a person or None}
UNFINISHED = "unfinished"


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
        self.changes = 0  # bumped whenever a record is added or completed
        self.on_change = None  # called after each such change (a progress checkpoint)

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
        if per_kernel >= MAX_SIGNATURES_PER_KERNEL:
            return original(kernel, *args, grid=grid, warmup=False, **kwargs)
        before = {}
        if self.detect_writes:
            with torch.no_grad():
                before = {n: t.clone() for n, t in tensors.items()}
        snapshots = {n: t.clone() for n, t in tensors.items() if not (t.dtype.is_floating_point or t.dtype.is_complex)}
        for d in arg_desc:
            if d["name"] in snapshots and holds_addresses(snapshots[d["name"]]):
                d["addresses"] = True

        # Recorded before it runs: the configuration is what compile, profile and optimize need, and a
        # launch the interpreter cannot finish (or one a test fails after) is still one the project makes.
        descriptor = {
            "kernel": fn.__name__, "qualname": fn.__qualname__,
            "file": os.path.realpath(fn.__code__.co_filename),
            "def_line": def_line(fn), "key": key, "source_hash": source_hash(fn),
            "mode": "interpreter" if interpreter_mode() else "gpu",
            "autotuned": bool(getattr(self._local, "autotuned", 0)), "count": 1, "case": self.case,
            "grid": grid_list, "num_warps": None, "num_stages": None,
            "constexprs": constexprs, "options": sig["options"], "args": arg_desc,
        }
        if getattr(self._local, "tuning", None):
            descriptor["tuning"] = self._local.tuning
        _settle(descriptor, kernel, tensors, {}, options, None)
        self.records[key] = LaunchRecord(kernel, descriptor, snapshots)
        self.order.append(key)
        self._bump()
        try:
            result = original(kernel, *args, grid=grid, warmup=False, **kwargs)
        except Exception as exc:
            descriptor[UNFINISHED] = _unfinished(exc)
            self._bump()
            raise
        compared = {n for n, t in before.items() if _changed(t, tensors[n])}
        _settle(descriptor, kernel, tensors, compared, options, getattr(result, "metadata", None))
        self._bump()
        return result

    def _bump(self) -> None:
        self.changes += 1
        if self.on_change is not None:
            self.on_change()

    def descriptors(self) -> list[dict]:
        return [self.records[k].descriptor for k in self.order]


# No tensor has 2**40 elements: an int64 table whose every nonzero value is past that holds memory
# addresses (pointers to tensors the launch does not pass), which a replay on fresh tensors cannot rebuild.
ADDRESS_FLOOR = 1 << 40


def holds_addresses(t: torch.Tensor) -> bool:
    if t.dtype != torch.int64 or t.numel() == 0:
        return False
    nonzero = t[t != 0]
    return nonzero.numel() > 0 and bool((nonzero >= ADDRESS_FLOOR).all())


def _changed(before: torch.Tensor, after: torch.Tensor) -> bool:
    if before.shape != after.shape:
        return True
    if before.dtype.is_floating_point:
        both_nan = before.isnan() & after.isnan()
        return bool(((before != after) & ~both_nan).any())
    return not torch.equal(before, after)


def _settle(descriptor: dict, kernel, tensors: dict, compared: set, options: dict, metadata) -> None:
    """Fill what is known of a launch's writes, traffic and warps: before it runs, what the source
    stores to and the launch options; after it returns, also the tensors it changed and the
    compiled kernel's own numbers."""
    written_by: dict[str, list[str]] = {n: ["compare"] for n in sorted(compared)}
    for n in static_written(kernel):
        if n in tensors:
            written_by.setdefault(n, []).append("static")
    read_bytes = written_bytes = 0
    for d in descriptor["args"]:
        if d["kind"] != "tensor":
            continue
        d["written"] = d["name"] in written_by
        nbytes = tensors[d["name"]].numel() * tensors[d["name"]].element_size()
        # an output-only buffer is not read; one that is read-modify-written is both
        if not d["written"] or "load" in loaded_names(kernel, d["name"]):
            read_bytes += nbytes
        if d["written"]:
            written_bytes += nbytes
    num_warps, num_stages = options.get("num_warps"), options.get("num_stages")
    if metadata is not None:
        num_warps = getattr(metadata, "num_warps", num_warps)
        num_stages = getattr(metadata, "num_stages", num_stages)
    descriptor["num_warps"] = int(num_warps if num_warps is not None else _DEFAULTS["num_warps"])
    descriptor["num_stages"] = int(num_stages if num_stages is not None else _DEFAULTS["num_stages"])
    descriptor["written"] = sorted(written_by)
    descriptor["written_by"] = written_by
    descriptor["bytes"] = {"read": read_bytes, "written": written_bytes}


def _unfinished(exc: BaseException) -> dict:
    """What stopped a recorded launch (the UNFINISHED entry): the error as Python printed it, and the
    interpreter limit it shows (interpreter_shims.InterpreterLimit's key and line) when it shows one."""
    try:  # a sibling in the worker folder, or imported as a package module
        from interpreter_shims import interpreter_limit_of
    except ImportError:
        from .interpreter_shims import interpreter_limit_of
    limit = interpreter_limit_of(exc)
    text = str(exc).strip().splitlines()
    error = f"{type(exc).__name__}: {text[0].strip()}" if text else type(exc).__name__
    return {"error": error[:300], "limit": limit.key if limit else None, "line": limit.line() if limit else None}


def unfinished(descriptor) -> dict | None:
    """The UNFINISHED entry of a descriptor (a dict or a messages.LaunchDescriptor), None when the
    launch returned when it was recorded."""
    more = descriptor if isinstance(descriptor, dict) else getattr(descriptor, "more", {})
    value = more.get(UNFINISHED)
    return value if isinstance(value, dict) else None
