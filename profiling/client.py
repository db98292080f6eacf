"""Client side of the worker protocol: `WorkerClient` runs jobs in a killable worker process.

    with WorkerClient(python="/path/to/project/venv/bin/python", timeout=60) as client:
        reply = client.run(Job("info"))     # a messages.Reply: reply.ok, reply.result, reply.error.type

The process logic itself lives in the standalone worker/supervisor.py so that remote hosts (ssh
relay, Ray tasks) behave exactly the same; the messages are worker/messages.py's.
"""

from __future__ import annotations

import os
from pathlib import Path

from tritonlens.profiling.worker.supervisor import Supervisor, clean_env, default_limits

WORKER_DIR = Path(__file__).resolve().parent / "worker"
# Seconds a local worker may sit without a job before it exits (the next job starts another):
# an idle worker still holds Triton and torch, a few hundred MB per editor window.
IDLE_EXIT_S = 120.0
IDLE_EXIT_ENV = "TRITONLENS_WORKER_IDLE_S"

__all__ = ["IDLE_EXIT_S", "WORKER_DIR", "WorkerClient", "clean_env", "default_limits", "idle_exit_s", "worker_bundle"]


class WorkerClient(Supervisor):
    """A `Supervisor` whose defaults suit the local machine.

    python: the project's interpreter (needs torch + triton only); default sys.executable.
    env: extra environment variables (credentials are dropped whatever their source).
    cwd: the worker's working directory; default a private temporary folder.
    timeout: seconds per job (default 120); `run(job, timeout=...)` overrides it per job.
    limits: {"nofile", "cpu", "as"} resource limits; None means `default_limits(timeout)`.
    idle_exit: seconds without a job after which the worker exits; None means `idle_exit_s()`.
    """

    def __init__(self, python: str | None = None, env: dict | None = None, cwd: str | None = None,
                 timeout: float = 120, limits: dict | None = None, on_stderr=None,
                 idle_exit: float | None = None):
        super().__init__(python=python, env=env, cwd=cwd, timeout=timeout,
                         worker_dir=str(WORKER_DIR), limits=limits, on_stderr=on_stderr,
                         idle_exit=idle_exit_s() if idle_exit is None else idle_exit)


def idle_exit_s() -> float:
    """IDLE_EXIT_S, or the TRITONLENS_WORKER_IDLE_S environment variable when it is a positive number."""
    try:
        value = float(os.environ.get(IDLE_EXIT_ENV, ""))
    except ValueError:
        return IDLE_EXIT_S
    return value if value > 0 else IDLE_EXIT_S


def worker_bundle() -> dict[str, str]:
    """The worker folder as {"worker/<name>": text}: what remote backends ship."""
    files = {}
    for path in sorted(WORKER_DIR.iterdir()):
        if path.suffix == ".py" or path.name == "README.md":
            files[f"worker/{path.name}"] = path.read_text(encoding="utf-8")
    return files
