"""Launch records from the project's own tests and commands, kept in the project
(launch_records.py) for compile, profile and optimize to use.

    outcome = capture_for_file("src/pkg/ops/rms.py")             # the tests that reach its kernels
    outcome = capture_command(root, ["pytest", "-k", "rms"])      # any command of the project
    outcome = capture_command(root, ["python", "train.py"], backend="ssh://gpu-box")

The command runs in a worker (job_project_capture.py): locally a fresh one per capture, closed
afterwards, so nothing of the project stays loaded; remotely the project's source files are
shipped with the job and the records come back keyed by path relative to the project root, then
are saved here. Without a GPU the worker runs Triton's interpreter with device "cuda" mapped to
the CPU. Launches recorded before a failing test, a crash or the timeout are kept.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tritonlens.profiling import launch_records
from tritonlens.profiling.backends import BackendError, make_backend
from tritonlens.profiling.project_tests import SKIP_DIRS, ImportGraph, layout
from tritonlens.profiling.worker.json_message import MessageError
from tritonlens.profiling.worker.project_capture_report import (
    CAUSE_NO_LAUNCH,
    CAUSE_NO_TEST_FOUND,
    CAUSE_NO_TEST_RAN,
    CAUSE_OUTSIDE_ONLY,
    CAUSE_SCRIPT,
    CAUSE_WORKER_FAILED,
    CaptureCause,
    ProjectCaptureJob,
    ProjectCaptureResult,
    ProjectLaunch,
    causes_file,
)

DEFAULT_TIMEOUT = 600.0
SHIP_SUFFIXES = (".py", ".pyi", ".toml", ".cfg", ".ini")
SHIP_BUDGET = 16 << 20  # bytes of project source shipped to a remote host
SHIP_FILE_MAX = 2 << 20
# no .pytest_cache left in the user's project; a test module that cannot be imported (a GPU-only
# extension, a missing optional package) must not stop the others from running
PYTEST_ARGS = ("-q", "-p", "no:cacheprovider", "--continue-on-collection-errors")
SCRIPTS_MAX = 2  # test files that turned out to be scripts, run as scripts after the tests
SCRIPT_MIN_S = 10.0  # a script run given less than this would spend it importing


@dataclass
class CaptureOutcome:
    """What one capture did. `recorded`: the launches it saved (of kernels inside the project);
    `kept`: the project's records after merging; `reason`: why nothing was recorded, else None."""

    root: Path
    command: list[str]
    origin: str = ""
    tests: list[str] = field(default_factory=list)
    result: ProjectCaptureResult | None = None
    recorded: list[launch_records.StoredLaunch] = field(default_factory=list)
    outside: int = 0
    kept: int = 0
    error: str | None = None  # the worker's failure (timeout, crash), when it failed
    reason: str | None = None  # `cause.line`
    cause: CaptureCause | None = None  # why nothing was recorded, for the editor's buttons; else None
    causes: list[CaptureCause] = field(default_factory=list)  # each failing test file's, recorded or not

    @property
    def records_file(self) -> Path:
        return launch_records.records_path(self.root)

    def kernels(self) -> dict[str, int]:
        """{"file::kernel": distinct launches recorded}."""
        out: dict[str, int] = {}
        for rec in self.recorded:
            key = f"{rec.file}::{rec.launch.kernel}"
            out[key] = out.get(key, 0) + 1
        return out


def project_files(root: Path) -> dict[str, str]:
    """The project's source and configuration files as {relative path: text}, within a budget."""
    out: dict[str, str] = {}
    budget = SHIP_BUDGET
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS
                         and not (Path(folder, d) / "pyvenv.cfg").exists())
        for name in sorted(files):
            path = Path(folder, name)
            if not name.endswith(SHIP_SUFFIXES):
                continue
            try:
                size = path.stat().st_size
                if size > SHIP_FILE_MAX or size > budget:
                    continue
                out[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            budget -= size
    return out


def _read_progress(path: str, of=ProjectLaunch) -> list:
    try:
        with open(path, encoding="utf-8") as fh:
            return [of.from_json(item, "progress") for item in json.load(fh)]
    except (OSError, ValueError, TypeError, MessageError):
        return []


def capture_command(root: str | os.PathLike, argv: list[str], python: str | None = None,
                    backend: str | None = None, timeout: float = DEFAULT_TIMEOUT, map_cuda: bool = True,
                    tests: list[str] | None = None, backend_options: dict | None = None,
                    origin: str | None = None, cancel: threading.Event | None = None,
                    until: list[str] | None = None) -> CaptureOutcome:
    """Run `argv` (`pytest ...`, `python FILE ...`, `python -m MODULE ...`) in the project at `root`
    under the capture hook and save the launches of the project's kernels to its records.
    `backend_options` go to backends.make_backend (ssh: known_hosts, client_keys, config);
    `origin` names the run in the records (default: the command); setting `cancel` stops the worker
    (the launches recorded so far are kept, as after a timeout); `until` ("file::kernel", the file
    relative to the root): a pytest run stops after the test that records the last of them."""
    lay = layout(Path(root) / "pyproject.toml" if Path(root).is_dir() else root)
    root = lay.root
    spec = (backend or "local").strip()
    outcome = CaptureOutcome(root=root, command=list(argv), tests=list(tests or []))
    remote = spec != "local"
    progress_dir = None if remote else tempfile.mkdtemp(prefix="tritonlens-capture-")
    progress = None if progress_dir is None else os.path.join(progress_dir, "launches.json")
    job = ProjectCaptureJob(root="" if remote else str(root), argv=list(argv), sys_path=list(lay.import_paths),
                            project_files=project_files(root) if remote else None, progress_file=progress,
                            map_cuda=map_cuda, cache_dir=None if remote else str(root), until=list(until or []))
    try:
        runner = make_backend(spec, python=python, timeout=timeout, **(backend_options or {}))
    except BackendError as exc:
        outcome.error = str(exc)
        outcome.cause = CaptureCause(kind=CAUSE_WORKER_FAILED, line=str(exc))
        outcome.reason = outcome.cause.line
        return outcome
    try:
        reply = runner.run(job, timeout=timeout, cancel=cancel)
    finally:
        runner.close()
    host = f"{reply.host}: " if remote and reply.host else ""
    outcome.origin = host + (origin or " ".join(argv))
    launches: list[ProjectLaunch] = []
    if reply.ok and reply.result is not None:
        try:
            outcome.result = ProjectCaptureResult.from_json(reply.result, "project_capture result")
            launches = outcome.result.launches
        except MessageError as exc:
            outcome.error = f"the worker's answer is unreadable: {exc}"
    else:
        err = reply.error
        outcome.error = str(err) if err is not None else "the worker failed"
        launches = _read_progress(progress) if progress else []  # what it saw before it died
        outcome.causes = _read_progress(causes_file(progress), CaptureCause) if progress else []
    if progress_dir:
        for name in os.listdir(progress_dir):
            os.unlink(os.path.join(progress_dir, name))
        os.rmdir(progress_dir)
    outcome.recorded = [launch_records.StoredLaunch(p.launch, p.file, outcome.origin) for p in launches if p.inside]
    outcome.outside = sum(1 for p in launches if not p.inside)
    if outcome.result is not None:
        outcome.causes = list(outcome.result.causes)
    if outcome.recorded:
        outcome.kept = launch_records.save(root, outcome.recorded)
        if outcome.error:  # the tests it did not reach are a cause too
            outcome.causes.insert(0, CaptureCause(kind=CAUSE_WORKER_FAILED, line=(
                f"{_ran(outcome)} stopped after recording {len(outcome.recorded)} launches: {outcome.error[:200]}; "
                f"{'the tests after that point' if argv[:1] == ['pytest'] else 'the rest of it'} did not run")))
    else:
        outcome.cause = _why_nothing(outcome)
        outcome.reason = outcome.cause.line
    return outcome


def _ran(outcome: CaptureOutcome) -> str:
    """The command as a person recognises it: the test files' count for tests found, else the command."""
    if len(outcome.tests) > 2:
        return f"the {len(outcome.tests)} test files found ({outcome.tests[0]}, ...)"
    command = " ".join(outcome.command)
    return f"`{command[:120]}{'...' if len(command) > 120 else ''}`"


def _why_nothing(outcome: CaptureOutcome) -> CaptureCause:
    """Why nothing was recorded: what the worker saw go wrong first (a missing module first of all,
    whose fix is one command), else what the run as a whole did."""
    ran = _ran(outcome)
    res = outcome.result
    causes = outcome.causes
    first = next((c for c in causes if c.kind == "missing_module"), causes[0] if causes else None)
    if outcome.error:
        line = f"{ran} stopped before any launch was recorded: {outcome.error[:200]}"
        if first is not None:
            line += f"; before that, {first.line}"
        return CaptureCause(kind=CAUSE_WORKER_FAILED, line=line, fix=first.fix if first else None,
                            module=first.module if first else None, test=first.test if first else None,
                            exception=first.exception if first else None)
    if outcome.outside:
        return CaptureCause(kind=CAUSE_OUTSIDE_ONLY, line=f"{ran} launched only kernels outside the project "
                                                         f"({outcome.outside} launches)")
    if first is not None:
        return first
    if res is None:
        return CaptureCause(kind=CAUSE_NO_LAUNCH, line=f"{ran} launched no Triton kernel")
    if res.passed + res.failed == 0:
        if res.skipped:
            return CaptureCause(kind=CAUSE_NO_TEST_RAN, line=(
                f"{ran}: all {res.skipped} tests were skipped (first: {(res.first_skip or '')[:200]})"))
        return CaptureCause(kind=CAUSE_NO_TEST_RAN, line=f"{ran}: pytest {_PYTEST_ENDS.get(res.exit_code, 'ran no test')}")
    if res.total_launches:
        said = f": {res.capture_errors[0][:200]}" if res.capture_errors else ""
        return CaptureCause(kind=CAUSE_NO_LAUNCH, line=(
            f"{ran} launched {res.total_launches} kernels of the project, but none could be recorded{said}"))
    return CaptureCause(kind=CAUSE_NO_LAUNCH, line=(
        f"{ran} ran {res.passed + res.failed} tests ({res.passed} passed, {res.failed} failed) and launched no "
        f"Triton kernel"))


# what pytest's exit codes mean, when no test ran and nothing said why
_PYTEST_ENDS = {2: "was interrupted before any test ran", 3: "failed inside itself before any test ran",
                4: "stopped at its configuration before any test ran", 5: "collected no test from them"}


def kernel_files(folder: Path) -> list[Path]:
    """The files under `folder` that define a Triton kernel (by their text: `triton.jit`, `@jit`)."""
    from tritonlens.profiling.own_tests import holds_triton_kernel
    from tritonlens.profiling.project_tests import python_files

    out = []
    for path in python_files(folder):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if holds_triton_kernel(text):
            out.append(path)
    return out


def launchable_kernels(root: Path, files: list[Path]) -> list[str]:
    """"file::kernel" (the file relative to `root`) for every launchable kernel of `files`: what a
    capture for those files waits for."""
    from tritonlens.analysis.kernel_discovery import discover_source

    out = []
    for path in files:
        try:
            kernels = discover_source(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        rel = launch_records.relative_file(root, str(path))
        out += [f"{rel}::{k.name}" for k in kernels if k.launchable]
    return out


def ranked_tests(graph: ImportGraph, files: list[Path]) -> list[str]:
    """The picked tests of `files`, each file's own tests first and the most direct first
    (ImportGraph.picks_for), taken in turns across the files so that each gets its best test early."""
    ranks = [[p.path for p in graph.picks_for(f) if p.picked] for f in files]
    out: list[str] = []
    for turn in range(max(map(len, ranks), default=0)):
        out += [r[turn] for r in ranks if turn < len(r) and r[turn] not in out]
    return out


def capture_for_file(path: str | os.PathLike, python: str | None = None, backend: str | None = None,
                     timeout: float = DEFAULT_TIMEOUT, map_cuda: bool = True,
                     cancel: threading.Event | None = None, every_launch: bool = False) -> CaptureOutcome:
    """Find the project's tests that reach the kernels of `path` (a kernel file, or a folder: each
    kernel file in it) and record their launches. What the compile path calls for a kernel file
    without records. The op's own tests run first, and the run stops after the test that records
    the last launchable kernel of those files (the rest would repeat launches under Triton's slow
    interpreter); `every_launch` runs them all, for every launch they make."""
    lay = layout(path)
    files = kernel_files(Path(path)) if Path(path).is_dir() else [Path(path)]
    graph = ImportGraph(lay)
    tests = ranked_tests(graph, files)
    if not tests:
        what = (f"any of its {len(files)} kernel files" if Path(path).is_dir()
                else launch_records.relative_file(lay.root, str(path)))
        cause = CaptureCause(kind=CAUSE_NO_TEST_FOUND, line=(
            f"no test of {lay.root.name} imports {what} or a name defined there; "
            f"record a command instead: tritonlens capture -- pytest ..."))
        return CaptureOutcome(root=lay.root, command=[], reason=cause.line, cause=cause)
    until = [] if every_launch else launchable_kernels(lay.root, files)
    started = time.monotonic()
    outcome = capture_command(lay.root, ["pytest", *PYTEST_ARGS, *tests], python=python, backend=backend,
                              timeout=timeout, map_cuda=map_cuda, tests=tests, origin=f"pytest {' '.join(tests)}",
                              cancel=cancel, until=until)
    scripts = list(dict.fromkeys(c.test.split("::")[0] for c in outcome.causes if c.kind == CAUSE_SCRIPT and c.test))
    for script in scripts[:SCRIPTS_MAX]:
        left = timeout - (time.monotonic() - started)
        if left < SCRIPT_MIN_S or (cancel is not None and cancel.is_set()) or (until and set(until) <= set(outcome.kernels())):
            break
        _merge(outcome, script, capture_command(lay.root, ["python", script], python=python, backend=backend,
                                                timeout=left, map_cuda=map_cuda, origin=f"python {script}",
                                                cancel=cancel))
    return outcome


def _merge(outcome: CaptureOutcome, script: str, ran: CaptureOutcome) -> None:
    """Add a test file's run as a script to the tests' capture: its launches, and its causes in
    place of the one that said the file is a script, once that run recorded launches."""
    outcome.recorded += ran.recorded
    outcome.outside += ran.outside
    outcome.kept = ran.kept or outcome.kept
    if ran.recorded:
        outcome.causes = [c for c in outcome.causes if not (c.kind == CAUSE_SCRIPT and c.test.startswith(f"{script}::"))]
    outcome.causes += ran.causes if ran.recorded or ran.cause is None else [ran.cause]
    if outcome.recorded:
        outcome.cause = outcome.reason = None
    elif ran.cause is not None:  # nothing from either: the script's own cause is the nearer one
        outcome.cause, outcome.reason = ran.cause, ran.cause.line
