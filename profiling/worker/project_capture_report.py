"""The "project_capture" job and its answer: run a command of the user's project (its tests under
pytest, a script) in a worker and record every Triton launch it makes.

The job type lives here rather than in messages.py's `job_from_json` table: the worker reads a
job of this kind as a bare `Job` and job_project_capture.py reads it again as `ProjectCaptureJob`,
so both ends still exchange this typed shape. Standard library only, beside messages.py.
"""

from __future__ import annotations

from dataclasses import dataclass

try:  # imported as tritonlens.profiling.worker.project_capture_report
    from .json_message import NONE, OPT_STR, Message, json_field
    from .messages import Job, LaunchDescriptor
except ImportError:  # a plain file beside messages.py
    from json_message import NONE, OPT_STR, Message, json_field
    from messages import Job, LaunchDescriptor

KIND = "project_capture"


@dataclass
class ProjectCaptureJob(Job):
    """Run `argv` with the project root as working directory and `sys_path` (relative to the root)
    importable. argv is `pytest ARGS...`, `python -m pytest ARGS...`, `python FILE ARGS...`,
    `python -m MODULE ARGS...` or `python -c CODE`: it runs in the worker process itself, under
    the capture hook.

    `project_files` ({relative path: text}) ships the project to a remote host: the job writes
    them into its own folder and uses that as the root. `progress_file`, when set, is rewritten
    with the launches seen so far after each test and each new launch, so a worker killed by the
    timeout still leaves them. `map_cuda`: on a host without a GPU, run Triton's interpreter with
    device "cuda" mapped to the CPU (cuda_on_cpu.py). `until` ("file::kernel", the file relative
    to the root): under pytest, stop after the test in which the last of them got its first record,
    or after pytest_capture.PATIENCE tests in a row that recorded none of them (empty: run every test)."""

    kind: str = json_field(str, KIND)
    root: str = json_field(str, "")
    argv: list = json_field(list, factory=list)
    sys_path: list = json_field(list, factory=list)
    project_files: dict | None = json_field((dict, NONE), None)
    progress_file: str | None = json_field(OPT_STR, None)
    map_cuda: bool = json_field(bool, True)
    until: list = json_field(list, factory=list)


@dataclass
class ProjectLaunch(Message):
    """One distinct launch: the kernel's file relative to the project root (its absolute path
    when it lies outside the project), whether it lies inside, and the pytest node that first
    made it (None outside pytest)."""

    file: str = json_field(str)
    launch: LaunchDescriptor = json_field(of=LaunchDescriptor)
    inside: bool = json_field(bool, True)
    test: str | None = json_field(OPT_STR, None)


# Why a capture recorded less than it could, one kind each; the editor picks its button by kind.
CAUSE_MISSING_MODULE = "missing_module"  # the project (or its conftest) imports a module this interpreter lacks
CAUSE_INTERPRETER_LIMIT = "interpreter_limit"  # Triton's CPU interpreter cannot run what the kernel does
CAUSE_TEST_FAILED = "test_failed"  # the tests ran and failed for a reason of their own
CAUSE_SCRIPT = "script"  # a test_ file pytest cannot call (its arguments are no fixtures): a script
CAUSE_NO_TEST_RAN = "no_test_ran"  # pytest collected or selected nothing
CAUSE_NO_TEST_FOUND = "no_test_found"  # no test of the project reaches the file
CAUSE_NO_LAUNCH = "no_launch"  # the command ran and launched no Triton kernel of the project
CAUSE_OUTSIDE_ONLY = "outside_only"  # it launched kernels, none of them in the project
CAUSE_WORKER_FAILED = "worker_failed"  # the worker died, timed out or could not start


@dataclass
class CaptureCause(Message):
    """Why a capture recorded nothing (or less than it could), for a person: `line` is the cause in
    one line with its fix and no internal exception class; `fix` the command that fixes it when
    there is one (`/env/bin/python -m pip install transformers`); `module` the missing module;
    `python` the interpreter that ran the command; `test` the first failing test's node;
    `exception` that test's exception as `Type: message`, as Python printed it."""

    kind: str = json_field(str)
    line: str = json_field(str)
    fix: str | None = json_field(OPT_STR, None)
    module: str | None = json_field(OPT_STR, None)
    python: str | None = json_field(OPT_STR, None)
    test: str | None = json_field(OPT_STR, None)
    exception: str | None = json_field(OPT_STR, None)


def causes_file(progress_file: str) -> str:
    """Where the worker keeps the causes seen so far (a JSON list of CaptureCause), beside the
    launches' progress file, for a run the timeout ends."""
    return f"{progress_file}.causes"


@dataclass
class ProjectCaptureResult(Message):
    """What the command did and the launches it made. `exit_code`: pytest's exit code or the
    script's SystemExit code (None when it raised); `error`: its exception in one line; `stopped`:
    why pytest stopped before its last test when the job's `until` kernels were all recorded."""

    mode: str = json_field(str)  # gpu | interpreter
    command: str = json_field(str, "")
    exit_code: int | None = json_field((int, NONE), None)
    error: str | None = json_field(OPT_STR, None)
    passed: int = json_field(int, 0)
    failed: int = json_field(int, 0)
    skipped: int = json_field(int, 0)
    first_failure: str | None = json_field(OPT_STR, None)  # "test node: Type: message" of its exception
    first_skip: str | None = json_field(OPT_STR, None)  # "test node: the reason it was skipped"
    stopped: str | None = json_field(OPT_STR, None)
    total_launches: int = json_field(int, 0)
    launches: list = json_field(of=ProjectLaunch, many=True, factory=list)
    capture_errors: list = json_field(list, factory=list)
    causes: list = json_field(of=CaptureCause, many=True, factory=list)  # what the worker saw go wrong, first first
