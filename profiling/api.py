"""Profile the Triton kernels of one file: the entry point for the CLI and the language server.

    result = profile_file("kernels/add.py", backend="local", ncu=False, cancel=event,
                          progress=lambda message, percent: ...)

Returns (JSON-serialisable):
    {"file", "backend", "mode": "gpu" | "interpreter", "device": {...}, "ceilings": {...} | None,
     "source": "tritonlens_cases" | "harness" | "tests" | "main" | None,
     "cases": [{"index", "label", "ok", "error"?}],
     "kernels": [{"name", "line", "launches": [{"grid", "num_warps", "num_stages", "constexprs",
                  "time_ms", "gbps", "tflops", "pct_of_peak", "bound", "registers", "spills",
                  "shared_bytes", "ncu", ...extras: "key", "signature", "flops_source", "cached"}],
                  "error": None | str}],
     "error": None | {"type", "message"}}

Thread-safe: call it from any thread; `cancel` (a threading.Event) kills the running worker.
Kernels run only in worker processes (local, ssh or Ray), never in the caller's process.
Results are cached by (kernel source hash, launch signature, device, backend): a re-profile
after a save re-runs the harness to see the launches, but times only launches whose kernel
source changed (or that are new).
"""

from __future__ import annotations

import collections
import os
import threading
import uuid

from tritonlens.analysis.kernel_discovery import discover_source
from tritonlens.profiling.backends import BackendError, get_backend

__all__ = ["ProfileError", "clear_cache", "find_kernels", "profile_file"]

CACHE_SIZE = 1024
_LAUNCH_FIELDS = ("grid", "num_warps", "num_stages", "constexprs", "time_ms", "gbps", "tflops",
                  "pct_of_peak", "bound", "registers", "spills", "shared_bytes", "ncu")


class ProfileError(ValueError):
    """Bad input (missing file, unknown kernel, bad backend): nothing was run."""


# -- kernel discovery (pure parsing, safe in the server process) --------------------------
def find_kernels(source: str) -> dict[str, int]:
    """{kernel name: 1-based line of its `def`} for every launchable @triton.jit kernel of the
    module (device helpers, which no launch can run on their own, are left out)."""
    return {k.name: k.line for k in discover_source(source) if k.launchable}


# -- cache -----------------------------------------------------------------------------------
class _Cache:
    def __init__(self, size: int):
        self.size = size
        self.data: collections.OrderedDict = collections.OrderedDict()
        self.lock = threading.Lock()
        self.devices: dict[str, str] = {}  # backend key -> last device name seen there

    def get(self, key):
        with self.lock:
            value = self.data.get(key)
            if value is not None:
                self.data.move_to_end(key)
            return value

    def put(self, key, value):
        with self.lock:
            self.data[key] = value
            self.data.move_to_end(key)
            while len(self.data) > self.size:
                self.data.popitem(last=False)

    def keys_for(self, backend_key: str, device: str, ncu: bool) -> list[str]:
        with self.lock:
            return [f"{k[2]}:{k[3]}" for k in self.data if k[0] == backend_key and k[1] == device and k[4] == ncu]

    def clear(self):
        with self.lock:
            self.data.clear()
            self.devices.clear()


_cache = _Cache(CACHE_SIZE)


def clear_cache() -> None:
    _cache.clear()


# -- profiling ---------------------------------------------------------------------------
def _report(progress, message: str, percent: int | None) -> None:
    if progress is not None:
        try:
            progress(message, percent)
        except Exception:
            pass  # a broken progress sink must not break profiling


def _failed(reply: dict) -> dict:
    err = reply.get("error") or {}
    out = {"type": err.get("type", "unknown"), "message": err.get("message", "")}
    if err.get("stderr"):
        out["stderr"] = err["stderr"][-2000:]
    return out


def profile_file(path, kernel: str | None = None, backend: str = "local", ncu: bool = False,
                 python: str | None = None, harness: str | None = None, timeout: float = 120,
                 progress=None, cancel: threading.Event | None = None, options: dict | None = None) -> dict:
    """See the module docstring. `options`: extra bench-job fields (e.g. {"compare_bare": True})."""
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise ProfileError(f"no such file: {path}")
    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        kernels = find_kernels(source)
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        raise ProfileError(f"cannot read {path}: {exc}") from exc
    if not kernels:
        raise ProfileError(f"{path} defines no @triton.jit kernel")
    if kernel is not None and kernel not in kernels:
        raise ProfileError(f"no kernel {kernel!r} in {path}; kernels: {', '.join(kernels)}")
    if harness:
        hfile, sep, func = harness.rpartition("::")
        if not sep or not hfile or not func:
            raise ProfileError(f"harness must be FILE.py::FUNCTION, got {harness!r}")
        hfile = os.path.abspath(hfile)
        if not os.path.isfile(hfile):
            raise ProfileError(f"no such harness file: {hfile}")
        harness = f"{hfile}::{func}"
    spec = (backend or "local").strip()
    try:
        runner = get_backend(spec, python=python or None, timeout=timeout)
    except BackendError as exc:
        raise ProfileError(str(exc)) from exc

    backend_key = f"{spec}|{python or ''}"
    device_name = _cache.devices.get(backend_key, "")
    base_job = dict(options or {}, kind="bench", path=path)
    if harness:
        base_job["harness"] = harness
    base_job["skip"] = _cache.keys_for(backend_key, device_name, ncu) if device_name else []
    wanted = [kernel] if kernel else list(kernels)
    _report(progress, f"profiling {os.path.basename(path)} on {spec}", 0)
    if runner.parallel and len(wanted) > 1:
        jobs = [dict(base_job, kernel=name, id=uuid.uuid4().hex[:8]) for name in wanted]
        replies = runner.run_many(jobs, timeout=timeout, cancel=cancel)
    else:
        job = dict(base_job, id=uuid.uuid4().hex[:8])
        if kernel:
            job["kernel"] = kernel
        replies = [runner.run(job, timeout=timeout, cancel=cancel)]

    result = {"file": path, "backend": spec, "mode": None, "device": None, "ceilings": None,
              "source": None, "cases": [], "kernels": [], "error": None}
    launches_by_kernel: dict[str, list] = {name: [] for name in wanted}
    errors: list[dict] = []
    for reply in replies:
        if not reply.get("ok"):
            errors.append(_failed(reply))
            continue
        res = reply["result"]
        for field in ("mode", "device", "ceilings", "source"):
            if res.get(field) is not None and result[field] is None:
                result[field] = res[field]
        seen = {c["index"] for c in result["cases"]}
        for case in res.get("cases", []):
            if case["index"] not in seen:  # Ray: every per-kernel job ran the same cases
                result["cases"].append({k: case[k] for k in ("index", "label", "ok", "error") if k in case})
        for entry in res.get("launches", []):
            if entry["kernel"] in launches_by_kernel:
                launches_by_kernel[entry["kernel"]].append(entry)
    if errors:
        result["error"] = errors[0]
    device = (result["device"] or {}).get("name", "")
    if device:
        _cache.devices[backend_key] = device

    # fill cached launches; store fresh ones
    for name, entries in launches_by_kernel.items():
        for i, entry in enumerate(entries):
            ckey = (backend_key, device, entry.get("source_hash"), entry.get("key"), bool(ncu))
            if entry.get("cached"):
                hit = _cache.get(ckey)
                if hit is not None:
                    entries[i] = dict(hit, cached=True)
                else:  # evicted meanwhile: report what we know rather than a made-up number
                    entries[i] = dict(entry, **{f: None for f in _LAUNCH_FIELDS if f not in entry},
                                      error="cached result was evicted; profile again")

    if ncu and result["mode"] == "gpu" and not (cancel is not None and cancel.is_set()):
        todo = [(name, entries[0]) for name, entries in launches_by_kernel.items()
                if entries and not entries[0].get("cached") and not entries[0].get("error")]
        for n, (name, entry) in enumerate(todo):
            _report(progress, f"ncu: {name}", int(50 + 50 * n / max(1, len(todo))))
            job = {"kind": "ncu", "path": path, "kernel": name, "key": entry.get("key"),
                   "id": uuid.uuid4().hex[:8], "keep_csv": bool((options or {}).get("keep_csv"))}
            if harness:
                job["harness"] = harness
            reply = runner.run(job, timeout=max(timeout, 300), cancel=cancel)
            entry["ncu"] = reply["result"] if reply.get("ok") else {"error": _failed(reply)}

    for name, entries in launches_by_kernel.items():
        for entry in entries:
            if not entry.get("cached") and entry.get("error") is None and result["mode"] == "gpu":
                _cache.put((backend_key, device, entry.get("source_hash"), entry.get("key"), bool(ncu)),
                           {k: v for k, v in entry.items() if k != "cached"})
            for field in _LAUNCH_FIELDS:
                entry.setdefault(field, None)
        if entries:
            error = None
        elif result["error"]:
            error = f"{result['error']['type']}: {result['error']['message']}"
        else:
            how = {"tests": "the file's test_* functions", "main": "the file's __main__ block",
                   "harness": "the harness", "tritonlens_cases": "tritonlens_cases()"}.get(result["source"],
                                                                                          "the harness")
            failed = [c for c in result["cases"] if not c.get("ok")]
            error = f"not launched by {how}" + (f" ({len(failed)} case(s) failed: {failed[0].get('error')})"
                                                if failed else "")
        result["kernels"].append({"name": name, "line": kernels[name], "launches": entries, "error": error})
    _report(progress, "done", 100)
    return result
