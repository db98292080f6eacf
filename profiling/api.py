"""Profile the Triton kernels of one file: the entry point for the CLI and the language server.

    report = profile_file("kernels/add.py", backend="local", ncu=False, cancel=event,
                          progress=lambda message, percent: ...)    # a reports.ProfileReport

Thread-safe: call it from any thread; `cancel` (a threading.Event) kills the running worker.
Kernels run only in worker processes (local, ssh or Ray), never in the caller's process.
Results are cached by (kernel source hash, launch signature, device, backend): a re-profile
after a save re-runs the harness to see the launches, but times only launches whose kernel
source changed (or that are new).

Without --harness, the file's launch records (launch_records.py: what `tritonlens capture` or
an earlier run saw) travel with the job; the worker replays them on fresh data when the file has
no tritonlens_cases() (worker/record_cases.py), the largest launch first.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import os
import threading
import uuid

from tritonlens.analysis.kernel_discovery import discover_source
from tritonlens.analysis.python_ast import parse as parse_python
from tritonlens.profiling import launch_records, line_fold
from tritonlens.profiling.backends import BackendError, get_backend
from tritonlens.profiling.worker.line_profile import LineProfile, SassSamples
from tritonlens.profiling.worker.messages import (
    BenchResult,
    LaunchJob,
    LaunchProfile,
    MessageError,
    NcuResult,
    Reply,
    WorkerError,
)
from tritonlens.profiling.worker.reports import KernelProfile, ProfileReport

__all__ = ["ProfileError", "clear_cache", "find_kernels", "import_folders", "missing_cases", "profile_file"]

CACHE_SIZE = 1024
_SOURCES = {"tests": "the file's test_* functions", "main": "the file's __main__ block",
            "harness": "the harness", "tritonlens_cases": "tritonlens_cases()",
            "records": "the launch records"}


class ProfileError(ValueError):
    """Bad input (missing file, unknown kernel, bad backend): nothing was run."""


# -- kernel discovery (pure parsing, safe in the server process) --------------------------
def find_kernels(source: str) -> dict[str, int]:
    """{kernel name: 1-based line of its `def`} for every launchable @triton.jit kernel of the
    module (device helpers, which no launch can run on their own, are left out)."""
    return {k.name: k.line for k in discover_source(source) if k.launchable}


def import_folders(path: str) -> list[str]:
    """The folders the project imports its packages from (src, setuptools' where, its root):
    the worker puts them on sys.path before importing the file as part of its package."""
    from tritonlens.profiling.project_tests import layout

    return [str(p) for p in layout(path).path_dirs()]


def missing_cases(path: str, source: str, zero_config: bool = True) -> str | None:
    """Why the worker would find nothing to run in `path` (no harness given): no
    tritonlens_cases(), no launch records and, with `zero_config`, no argument-less test_*
    function nor `__main__` block. None when it has something; a syntax error is the worker's."""
    try:
        tree = parse_python(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                node.name == "tritonlens_cases" or (zero_config and node.name.startswith("test_"))):
            return None
        if zero_config and isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return None
    if launch_records.records_for(path):
        return None
    shown = min(path, os.path.relpath(path), key=len)
    return (f"no launch records and no harness for {os.path.basename(path)}: run `tritonlens capture {shown}`, "
            "define tritonlens_cases(), or pass --harness FILE.py::FUNC")


# -- cache -----------------------------------------------------------------------------------
class _Cache:
    def __init__(self, size: int):
        self.size = size
        self.data: collections.OrderedDict = collections.OrderedDict()
        self.lock = threading.Lock()
        self.devices: dict[str, str] = {}  # backend key -> last device name seen there

    def get(self, key) -> LaunchProfile | None:
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

    def keys_for(self, backend_key: str, device: str, extras: tuple) -> list[str]:
        with self.lock:
            return [f"{k[2]}:{k[3]}" for k in self.data if k[0] == backend_key and k[1] == device and k[4] == extras]

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


def _failed(reply: Reply) -> WorkerError:
    err = reply.error or WorkerError("unknown", "the worker gave no reason")
    return WorkerError(err.type, err.message, stderr=err.stderr[-2000:] if err.stderr else None)


def _ncu_result(reply: Reply) -> NcuResult:
    if not reply.ok:
        return NcuResult(error=_failed(reply))
    try:
        return NcuResult.from_json(reply.result)
    except MessageError as exc:
        return NcuResult(error=WorkerError("protocol", f"the ncu job's result is malformed: {exc}"))


def _bench_result(reply: Reply) -> BenchResult | WorkerError:
    if not reply.ok:
        return _failed(reply)
    try:
        return BenchResult.from_json(reply.result)
    except MessageError as exc:
        return WorkerError("protocol", f"the worker's bench result is malformed: {exc}")


def profile_file(path, kernel: str | None = None, backend: str = "local", ncu: bool = False,
                 python: str | None = None, harness: str | None = None, timeout: float = 120,
                 progress=None, cancel: threading.Event | None = None,
                 options: dict | None = None, lines: bool = False) -> ProfileReport:
    """See the module docstring. `options`: extra bench-job fields (e.g. {"compare_bare": True}).
    `lines`: on a GPU, also sample each kernel's first launch per source line (LaunchProfile.lines),
    in a replay of its own after the timing."""
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
    if not harness:
        missing = missing_cases(path, source)
        if missing:
            raise ProfileError(missing)
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
        base_job = LaunchJob.from_json(dict(options or {}, kind="bench", path=path, harness=harness))
    except BackendError as exc:
        raise ProfileError(str(exc)) from exc
    except MessageError as exc:
        raise ProfileError(f"bad profiling option: {exc}") from exc

    records = [] if harness else launch_records.records_for(path, kernel)
    base_job.records = records or None
    base_job.sys_path = import_folders(path)

    backend_key = f"{spec}|{python or ''}"
    device_name = _cache.devices.get(backend_key, "")
    extras = (bool(ncu), bool(lines))  # a cached launch has what was asked for then
    base_job.skip = _cache.keys_for(backend_key, device_name, extras) if device_name else []
    wanted = [kernel] if kernel else list(kernels)
    _report(progress, f"profiling {os.path.basename(path)} on {spec}", 0)
    if runner.parallel and len(wanted) > 1:
        jobs = [dataclasses.replace(base_job, kernel=name, id=uuid.uuid4().hex[:8],
                                    records=[r for r in records if r.kernel == name] or base_job.records)
                for name in wanted]
        replies = runner.run_many(jobs, timeout=timeout, cancel=cancel)
    else:
        job = dataclasses.replace(base_job, kernel=kernel, id=uuid.uuid4().hex[:8])
        replies = [runner.run(job, timeout=timeout, cancel=cancel)]

    report = ProfileReport(file=path, backend=spec)
    launches_by_kernel: dict[str, list[LaunchProfile]] = {name: [] for name in wanted}
    errors: list[WorkerError] = []
    for res in map(_bench_result, replies):
        if isinstance(res, WorkerError):
            errors.append(res)
            continue
        report.mode = report.mode or res.mode
        report.device = report.device or res.device
        report.ceilings = report.ceilings or res.ceilings
        report.source = report.source or res.source
        seen = {c.index for c in report.cases}
        report.cases += [c for c in res.cases if c.index not in seen]  # Ray: each kernel's job ran them all
        for entry in res.launches:
            if entry.kernel in launches_by_kernel:
                launches_by_kernel[entry.kernel].append(entry)
    if errors:
        report.error = errors[0]
    device = (report.device or {}).get("name", "")
    if device:
        _cache.devices[backend_key] = device

    # fill cached launches; store fresh ones
    for entries in launches_by_kernel.values():
        for i, entry in enumerate(entries):
            if entry.cached:
                hit = _cache.get((backend_key, device, entry.source_hash, entry.key, extras))
                # evicted meanwhile: report what we know rather than a made-up number
                entries[i] = dataclasses.replace(hit, cached=True) if hit is not None else \
                    dataclasses.replace(entry, error="cached result was evicted; profile again")

    if ncu and report.mode == "gpu" and not (cancel is not None and cancel.is_set()):
        todo = [(name, entries[0]) for name, entries in launches_by_kernel.items()
                if entries and not entries[0].cached and not entries[0].error]
        for n, (name, entry) in enumerate(todo):
            _report(progress, f"ncu: {name}", int(50 + 50 * n / max(1, len(todo))))
            job = LaunchJob("ncu", id=uuid.uuid4().hex[:8], path=path, harness=harness, kernel=name, key=entry.key,
                            keep_csv=bool((options or {}).get("keep_csv")), records=base_job.records,
                            sys_path=base_job.sys_path)
            reply = runner.run(job, timeout=max(timeout, 300), cancel=cancel)
            entry.ncu = _ncu_result(reply)

    if lines and report.mode == "gpu":
        _sample_lines(runner, report, launches_by_kernel, base_job, timeout, progress, cancel)

    for name, entries in launches_by_kernel.items():
        for entry in entries:
            if not entry.cached and entry.error is None and report.mode == "gpu":
                _cache.put((backend_key, device, entry.source_hash, entry.key, extras),
                           dataclasses.replace(entry, cached=False))
        # a kernel whose every launch failed failed: its first launch's error, not "ran (1 launch)"
        error = (None if any(e.error is None for e in entries) else entries[0].error) if entries \
            else _why_no_launch(report)
        report.kernels.append(KernelProfile(name=name, line=kernels[name], launches=entries, error=error))
    _report(progress, "done", 100)
    return report


def _sample_lines(runner, report, launches_by_kernel, base_job, timeout, progress, cancel) -> None:
    """Each kernel's first timed launch, replayed under ncu's source counters and folded onto the
    kernel's lines; a failure is kept as that launch's `lines.error`, the timing stands."""
    todo = [(name, entries[0]) for name, entries in launches_by_kernel.items()
            if entries and not entries[0].cached and not entries[0].error]
    for n, (name, entry) in enumerate(todo):
        if cancel is not None and cancel.is_set():
            return
        _report(progress, f"sampling lines: {name}", int(50 + 50 * n / max(1, len(todo))))
        job = LaunchJob("lines", id=uuid.uuid4().hex[:8], path=report.file, harness=base_job.harness, kernel=name,
                        key=entry.key, records=base_job.records, sys_path=base_job.sys_path)
        reply = runner.run(job, timeout=max(timeout, 300), cancel=cancel)
        if not reply.ok:
            entry.lines = LineProfile(kernel=name, key=entry.key, source_hash=entry.source_hash, error=_failed(reply))
            continue
        try:
            raw = SassSamples.from_json(reply.result)
        except MessageError as exc:
            entry.lines = LineProfile(kernel=name, key=entry.key, source_hash=entry.source_hash,
                                      error=WorkerError("protocol", f"the lines job's result is malformed: {exc}"))
            continue
        entry.lines = line_fold.fold(raw, report.file, entry.source_hash)


def _why_no_launch(report: ProfileReport) -> str:
    if report.error:
        return str(report.error)
    failed = [c for c in report.cases if not c.ok]
    how = _SOURCES.get(report.source, "the harness")
    return f"not launched by {how}" + (f" ({len(failed)} case(s) failed: {failed[0].error})" if failed else "")
