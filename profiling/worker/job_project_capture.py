"""Job "project_capture" (project_capture_report.ProjectCaptureJob): run a command of the user's
project in this worker, under capture.Capture, and answer a ProjectCaptureResult.

The command runs here, not in a child process: the worker is already the killable, sandboxed,
time-limited process for untrusted code, and one process lets the hook see every launch, whatever
module the kernel was imported from. Without a GPU, Triton's interpreter runs the kernels and
device "cuda" is mapped to the CPU (cuda_on_cpu.py) before any of the project's code is imported.

The worker's state is put back afterwards (working directory, sys.path, sys.argv, the cuda
mapping, the project's modules), so a worker that serves further jobs neither keeps stale copies
of the project's modules nor reports a CUDA device it does not have.
"""

from __future__ import annotations

import json
import os
import runpy
import shlex
import sys
import tempfile

import capture_causes
import cuda_on_cpu
import sandbox
from project_capture_report import (
    ProjectCaptureJob,
    ProjectCaptureResult,
    ProjectLaunch,
    causes_file,
)


class JobError(Exception):
    """The job cannot run as asked (no such root, a command that is not pytest or python)."""


def _prepare_root(job: ProjectCaptureJob) -> str:
    if job.project_files:
        import relay  # its materialize() refuses paths escaping the folder

        root = tempfile.mkdtemp(prefix="project-", dir=os.getcwd())
        relay.materialize(job.project_files, root)
        return os.path.realpath(root)
    if not job.root or not os.path.isdir(job.root):
        raise JobError(f"no project folder at {job.root!r}")
    return os.path.realpath(job.root)


def _split(argv: list) -> tuple[str, list]:
    """("pytest", args) | ("script", [file, args...]) | ("module", [module, args...]) | ("code", [code, args...])."""
    if not argv:
        raise JobError("no command to run")
    head = os.path.basename(str(argv[0]))
    rest = [str(a) for a in argv[1:]]
    if head in ("pytest", "py.test"):
        return "pytest", rest
    if head.startswith("python"):
        if rest[:2] == ["-m", "pytest"]:
            return "pytest", rest[2:]
        if rest[:1] == ["-m"] and len(rest) > 1:
            return "module", rest[1:]
        if rest[:1] == ["-c"] and len(rest) > 1:
            return "code", rest[1:]
        if rest and not rest[0].startswith("-"):
            return "script", rest
    raise JobError(f"can only capture `pytest ...`, `python FILE|-m MODULE|-c CODE ...`, not {shlex.join(argv)[:80]!r}")


class _Recorder:
    """The launch hook plus the running test's node id, the progress checkpoint and whether every
    kernel the job waits for (`until`: "file::kernel", the file relative to the root) is recorded."""

    def __init__(self, root: str, progress_file: str | None, until: list | None = None):
        import capture

        self.capture = capture.Capture(file=None)
        self.root = root
        self.progress_file = progress_file
        self.current_test: str | None = None
        self.first_test: dict[str, str | None] = {}
        self.waiting = set(until or ())
        self.until = len(self.waiting)
        self._checkpointed: tuple | None = None
        self.capture.on_change = self._changed

    def _changed(self) -> None:
        """A launch was recorded (before it runs) or completed: tag it with its test and checkpoint,
        so that a launch the worker dies in still leaves its record."""
        for key in self.capture.order[len(self.first_test):]:
            self.first_test.setdefault(key, self.current_test)
            d = self.capture.records[key].descriptor
            self.waiting.discard(f"{self._relative(d.get('file') or '')[0]}::{d['kernel']}")
        self.checkpoint()

    def _relative(self, path: str) -> tuple[str, bool]:
        rel = os.path.relpath(path, self.root) if path else ""
        inside = bool(path) and not rel.startswith("..")
        return (rel.replace(os.sep, "/") if inside else path), inside

    def launches(self) -> list[ProjectLaunch]:
        import messages

        out = []
        for key in self.capture.order:
            descriptor = dict(self.capture.records[key].descriptor)
            descriptor["case"] = None  # launched outside any harness entry
            file, inside = self._relative(descriptor.get("file") or "")
            test = self.first_test.get(key)
            if test:
                descriptor["test"] = test
            out.append(ProjectLaunch(file=file, inside=inside, test=test,
                                     launch=messages.LaunchDescriptor.from_json(descriptor, "launch")))
        return out

    def note_causes(self, causes: list) -> None:
        """Keep the causes seen so far beside the progress file (`causes_file`), for a run the timeout ends."""
        if not self.progress_file:
            return
        path = causes_file(self.progress_file)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump([c.to_json() for c in causes], fh)
        os.replace(tmp, path)

    def checkpoint(self) -> None:
        seen = (self.capture.changes, sum(r.descriptor["count"] for r in self.capture.records.values()))
        if not self.progress_file or seen == self._checkpointed:
            return  # nothing new since the last one: a long suite does not rewrite it per test
        self._checkpointed = seen
        tmp = f"{self.progress_file}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump([p.to_json() for p in self.launches()], fh)
        os.replace(tmp, self.progress_file)


def _quiet_plugin_args() -> list[str]:
    """Options that keep installed pytest plugins from writing into the user's project: with
    pytest-benchmark installed, every run made a `.benchmarks` folder there; its benchmarks run
    once each, which is all a capture needs of them."""
    import importlib.util

    if importlib.util.find_spec("pytest_benchmark") is None:
        return []
    store = os.path.join(tempfile.gettempdir(), "tritonlens-benchmarks")
    return ["--benchmark-disable", f"--benchmark-storage=file://{store}"]


def _run(kind: str, args: list, recorder: _Recorder, result: ProjectCaptureResult) -> None:
    if kind == "pytest":
        try:
            import pytest
        except ImportError:
            raise JobError(f"pytest is not installed in {sys.executable}") from None
        import pytest_capture

        plugin = pytest_capture.CapturePlugin(recorder, root=recorder.root)
        result.exit_code = int(pytest.main([*args, *_quiet_plugin_args()], plugins=[plugin]))
        result.passed, result.failed, result.skipped = plugin.passed, plugin.failed, plugin.skipped
        result.first_failure = plugin.first_failure
        result.first_skip = plugin.first_skip
        result.causes = list(plugin.causes)
        result.stopped = plugin.stopped
        return
    sys.argv = ["-c", *args[1:]] if kind == "code" else list(args)
    # as Python itself does: a script's own folder comes first (it imports its siblings), and
    # `-m` / `-c` put the working directory (the root) there
    sys.path.insert(0, os.path.dirname(os.path.realpath(args[0])) if kind == "script" else recorder.root)
    try:
        if kind == "code":
            exec(compile(args[0], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102 - the user asked for it
        elif kind == "module":
            runpy.run_module(args[0], run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(args[0], run_name="__main__")
        result.exit_code = 0
    except SystemExit as exc:
        code = exc.code
        result.exit_code = code if isinstance(code, int) else (0 if code is None else 1)
    except Exception as exc:  # noqa: BLE001 - the user's script failed: its launches so far are still the answer
        result.error = capture_causes.describe(capture_causes.real_exception(exc))
        result.causes = [capture_causes.cause_of(exc, None, root=recorder.root)]


def _memory_cap():
    """Cap this process's address space at what it holds now plus most of the memory still free, and
    return the limit to put back (None where it cannot be read). A project's test sized for a GPU's
    memory then fails on its own allocation, and the run goes on to the next test, instead of the
    whole machine running short and the kernel's OOM killer ending the worker, records unsaved."""
    try:
        import resource

        with open("/proc/meminfo", encoding="ascii") as fh:
            free = next(int(ln.split()[1]) for ln in fh if ln.startswith("MemAvailable:")) << 10
        with open("/proc/self/status", encoding="ascii") as fh:
            held = next(int(ln.split()[1]) for ln in fh if ln.startswith("VmSize:")) << 10
        saved = resource.getrlimit(resource.RLIMIT_AS)
        cap = held + free * 3 // 4
        soft, hard = saved
        if soft != resource.RLIM_INFINITY and soft <= cap:
            return None
        resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
        return saved
    except (ImportError, OSError, StopIteration, ValueError):
        return None


def handle(job) -> dict:
    job = ProjectCaptureJob.from_json(job.to_json(), "project_capture job")
    kind, args = _split(job.argv)
    root = _prepare_root(job)
    import capture  # first: its import-time check must see the real torch.cuda

    mapped = job.map_cuda and cuda_on_cpu.install()  # before the project's imports

    saved_cwd, saved_path, saved_argv = os.getcwd(), list(sys.path), list(sys.argv)
    saved_modules = set(sys.modules)
    progress = job.progress_file
    recorder = _Recorder(root, progress, job.until)
    result = ProjectCaptureResult(mode="interpreter" if capture.interpreter_mode() else "gpu",
                                  command=shlex.join(str(a) for a in job.argv))
    # only where tensors live in this machine's memory: CUDA's driver reserves address space far
    # beyond the RAM it uses, and an address-space cap would stop it from starting
    memory = _memory_cap() if capture.interpreter_mode() else None
    try:
        os.chdir(root)
        for entry in reversed(job.sys_path or ["."]):
            sys.path.insert(0, os.path.normpath(os.path.join(root, entry)))
        with recorder.capture, sandbox.forks_allowed():
            _run(kind, args, recorder, result)
    finally:
        if memory is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, memory)
        if mapped:
            cuda_on_cpu.uninstall()
        os.chdir(saved_cwd)
        sys.path[:], sys.argv[:] = saved_path, saved_argv
        for name in set(sys.modules) - saved_modules:
            file = getattr(sys.modules.get(name), "__file__", None) or ""
            if os.path.realpath(file).startswith(root + os.sep):
                del sys.modules[name]
    result.launches = recorder.launches()
    result.total_launches = recorder.capture.total_launches
    result.capture_errors = list(recorder.capture.errors)
    recorder.checkpoint()
    return result.to_json()
