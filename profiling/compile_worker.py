"""The compile engine's worker side: the long-lived compile workers, the capture and compile jobs
they run, and the translation of captured launches into the compile job's configurations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

from tritonlens.profiling.worker.messages import (
    CaptureResult,
    CompileJob,
    CompileResult,
    Job,
    LaunchDescriptor,
    LaunchJob,
    MessageError,
    WorkerError,
)

_ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
             "int32": 4, "int64": 8, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "uint16": 2,
             "uint32": 4, "uint64": 8, "complex64": 8}


class CompileError(RuntimeError):
    """The compile could not run at all (worker failed, bad input); per-kernel compile errors
    are data in the result, not exceptions."""


class CompileCancelled(CompileError):
    pass


_clients: dict = {}
_clients_lock = threading.Lock()
_versions: dict = {}
STATS = {"worker_jobs": 0, "capture_jobs": 0, "file_cache_hits": 0}  # for tests and benchmarks


def client_for(python: str | None):
    """The long-lived compile worker of this interpreter."""
    from tritonlens.profiling.client import WorkerClient

    key = python or sys.executable
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            # TRITON_INTERPRET must not leak in: the compile worker needs real JITFunctions.
            client = WorkerClient(python=python, timeout=600, env={"TRITON_INTERPRET": "0"})
            _clients[key] = client
        return client


def warm_up(python: str | None = None) -> None:
    """Start the compile worker and load Triton in it now (the server calls this for the first
    document with a kernel whose text waits for a save), so that the save costs a compile, not an
    interpreter start."""
    run(client_for(python), CompileJob("compile", warmup=True), None, 120)


def shutdown() -> None:
    """Stop the compile workers (the server calls this on exit)."""
    with _clients_lock:
        for client in _clients.values():
            client.close()
        _clients.clear()


def triton_version(python: str | None = None) -> str:
    """The Triton version of the interpreter that compiles, without importing triton here."""
    key = python or sys.executable
    if key not in _versions:
        if python is None or os.path.realpath(python) == os.path.realpath(sys.executable):
            from importlib.metadata import PackageNotFoundError, version

            try:
                _versions[key] = version("triton")
            except PackageNotFoundError:
                _versions[key] = "none"
        else:
            code = ("import importlib.metadata as m\ntry: print(m.version('triton'))\n"
                    "except m.PackageNotFoundError: print('none')")
            out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, check=False)
            _versions[key] = out.stdout.strip() or "none"
    return _versions[key]


def run(client, job: Job, cancel, timeout: float) -> dict:
    """The job's result object; CompileCancelled / CompileError when the worker did not give one."""
    reply = client.run(job, timeout=timeout, cancel=cancel)
    if reply.ok:
        return reply.result
    err = reply.error or WorkerError("exception", "the worker gave no reason")
    if err.type == "cancelled":
        raise CompileCancelled(err.message or "cancelled")
    raise CompileError(f"{job.kind} job failed ({err.type}): {err.message}\n"
                       f"{err.traceback or err.stderr or ''}".rstrip())


def compile_job(job: CompileJob, python: str | None, cancel, timeout: float) -> CompileResult:
    STATS["worker_jobs"] += 1
    result = run(client_for(python), job, cancel, timeout)
    try:
        return CompileResult.from_json(result)
    except MessageError as exc:
        raise CompileError(f"the compile job's result is malformed: {exc}") from exc


# ---------------------------------------------------------------------------------------------
# Configurations from captured launches


def configs_from_launches(launches: list[LaunchDescriptor]) -> dict[str, list[dict]]:
    """Captured launches → the compile job's configurations per kernel (messages.CompileJob)."""
    out: dict[str, list[dict]] = {}
    seen: dict[str, set[str]] = {}
    for d in launches:
        args = {}
        for a in d.args:
            if a.kind == "tensor":
                # A CUDA allocation is 256-byte aligned: only the view's offset decides whether the
                # JIT sees a 16-byte aligned pointer.
                itemsize = _ITEMSIZE.get(str(a.dtype), 4)
                args[a.name] = {"kind": "tensor", "dtype": a.dtype or a.storage_dtype,
                                "data_ptr": a.storage_offset * itemsize}
            elif a.kind == "scalar":
                args[a.name] = {"kind": a.type or "int", "value": a.value}
            elif a.kind == "constexpr":
                args[a.name] = {"kind": "constexpr", "value": a.value}
            elif a.kind == "none":
                args[a.name] = {"kind": "none"}
            # "other" / "missing": left out; the worker fills defaults or reports what is missing
        options = {k: v for k, v in d.options.items() if k in ("num_warps", "num_stages", "num_ctas", "maxnreg")}
        for k, v in (("num_warps", d.num_warps), ("num_stages", d.num_stages)):
            if v is not None:
                options[k] = v
        # Launches that differ only in sizes compile alike: one configuration each, so that the
        # worker's per-kernel cap is spent on different specialisations.
        same = json.dumps([args, options, d.autotuned], sort_keys=True, default=str)
        if same in seen.setdefault(d.kernel, set()):
            continue
        seen[d.kernel].add(same)
        grid = "×".join(str(g) for g in d.grid)
        test = d.more.get("test")
        where = (f"launch in {str(test).rpartition('::')[2][:60]}" if d.case is None and test
                 else "recorded launch" if d.case is None else f"launch of case {d.case}")
        label = where + (f", grid {grid}" if grid else "")
        out.setdefault(d.kernel, []).append({"label": label, "args": args, "options": options,
                                             "autotuned": d.autotuned})
    return out


def capture_launches(path: str, kernel: str | None, python: str | None, cancel, timeout: float = 300,
                     max_cases: int | None = None) -> CaptureResult:
    """Run the file's harness in a fresh worker (interpreter mode on a CPU) and return its result."""
    from tritonlens.profiling.client import WorkerClient

    STATS["capture_jobs"] += 1
    client = WorkerClient(python=python, timeout=timeout)
    try:
        result = run(client, LaunchJob("capture", path=path, kernel=kernel or None, max_cases=max_cases or None),
                     cancel, timeout)
    finally:
        client.close()
    try:
        return CaptureResult.from_json(result)
    except MessageError as exc:
        raise CompileError(f"the capture job's result is malformed: {exc}") from exc
