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
    """The launch hook plus the running test's node id and the progress checkpoint."""

    def __init__(self, root: str, progress_file: str | None):
        import capture

        self.capture = capture.Capture(file=None)
        self.root = root
        self.progress_file = progress_file
        self.current_test: str | None = None
        self.first_test: dict[str, str | None] = {}
        self._checkpointed = -1
        original = self.capture._launch

        def launch(*args, **kwargs):
            known = len(self.capture.order)
            result = original(*args, **kwargs)
            if len(self.capture.order) > known:
                for key in self.capture.order[known:]:
                    self.first_test.setdefault(key, self.current_test)
                self.checkpoint()
            return result

        self.capture._launch = launch

    def launches(self) -> list[ProjectLaunch]:
        import messages

        out = []
        for key in self.capture.order:
            descriptor = dict(self.capture.records[key].descriptor)
            descriptor["case"] = None  # launched outside any harness entry
            path = descriptor.get("file") or ""
            rel = os.path.relpath(path, self.root) if path else ""
            inside = bool(path) and not rel.startswith("..")
            test = self.first_test.get(key)
            if test:
                descriptor["test"] = test
            out.append(ProjectLaunch(file=rel.replace(os.sep, "/") if inside else path, inside=inside, test=test,
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
        total = sum(r.descriptor["count"] for r in self.capture.records.values())
        if not self.progress_file or total == self._checkpointed:
            return  # nothing new since the last one: a long suite does not rewrite it per test
        self._checkpointed = total
        tmp = f"{self.progress_file}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump([p.to_json() for p in self.launches()], fh)
        os.replace(tmp, self.progress_file)


def _run(kind: str, args: list, recorder: _Recorder, result: ProjectCaptureResult) -> None:
    if kind == "pytest":
        try:
            import pytest
        except ImportError:
            raise JobError(f"pytest is not installed in {sys.executable}") from None
        import pytest_capture

        plugin = pytest_capture.CapturePlugin(recorder, root=recorder.root)
        result.exit_code = int(pytest.main(args, plugins=[plugin]))
        result.passed, result.failed, result.skipped = plugin.passed, plugin.failed, plugin.skipped
        result.first_failure = plugin.first_failure
        result.first_skip = plugin.first_skip
        result.causes = list(plugin.causes)
        return
    sys.argv = ["-c", *args[1:]] if kind == "code" else list(args)
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


def handle(job) -> dict:
    job = ProjectCaptureJob.from_json(job.to_json(), "project_capture job")
    kind, args = _split(job.argv)
    root = _prepare_root(job)
    import capture  # first: its import-time check must see the real torch.cuda

    mapped = job.map_cuda and cuda_on_cpu.install()  # before the project's imports

    saved_cwd, saved_path, saved_argv = os.getcwd(), list(sys.path), list(sys.argv)
    saved_modules = set(sys.modules)
    progress = job.progress_file
    recorder = _Recorder(root, progress)
    result = ProjectCaptureResult(mode="interpreter" if capture.interpreter_mode() else "gpu",
                                  command=shlex.join(str(a) for a in job.argv))
    try:
        os.chdir(root)
        for entry in reversed(job.sys_path or ["."]):
            sys.path.insert(0, os.path.normpath(os.path.join(root, entry)))
        with recorder.capture:
            _run(kind, args, recorder, result)
    finally:
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
