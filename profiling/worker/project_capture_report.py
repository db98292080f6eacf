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
    device "cuda" mapped to the CPU (cuda_on_cpu.py)."""

    kind: str = json_field(str, KIND)
    root: str = json_field(str, "")
    argv: list = json_field(list, factory=list)
    sys_path: list = json_field(list, factory=list)
    project_files: dict | None = json_field((dict, NONE), None)
    progress_file: str | None = json_field(OPT_STR, None)
    map_cuda: bool = json_field(bool, True)


@dataclass
class ProjectLaunch(Message):
    """One distinct launch: the kernel's file relative to the project root (its absolute path
    when it lies outside the project), whether it lies inside, and the pytest node that first
    made it (None outside pytest)."""

    file: str = json_field(str)
    launch: LaunchDescriptor = json_field(of=LaunchDescriptor)
    inside: bool = json_field(bool, True)
    test: str | None = json_field(OPT_STR, None)


@dataclass
class ProjectCaptureResult(Message):
    """What the command did and the launches it made. `exit_code`: pytest's exit code or the
    script's SystemExit code (None when it raised); `error`: its exception in one line."""

    mode: str = json_field(str)  # gpu | interpreter
    command: str = json_field(str, "")
    exit_code: int | None = json_field((int, NONE), None)
    error: str | None = json_field(OPT_STR, None)
    passed: int = json_field(int, 0)
    failed: int = json_field(int, 0)
    skipped: int = json_field(int, 0)
    first_failure: str | None = json_field(OPT_STR, None)  # "test node: the last line of its error"
    total_launches: int = json_field(int, 0)
    launches: list = json_field(of=ProjectLaunch, many=True, factory=list)
    capture_errors: list = json_field(list, factory=list)
