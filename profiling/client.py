"""Client side of the worker protocol: `WorkerClient` runs jobs in a killable worker process.

    with WorkerClient(python="/path/to/project/venv/bin/python", timeout=60) as client:
        reply = client.run(Job("info"))     # a messages.Reply: reply.ok, reply.result, reply.error.type

The process logic itself lives in the standalone worker/supervisor.py so that remote hosts (ssh
relay, Ray tasks) behave exactly the same; the messages are worker/messages.py's.
"""

from __future__ import annotations

from pathlib import Path

from tritonlens.profiling.worker.supervisor import Supervisor, clean_env, default_limits

WORKER_DIR = Path(__file__).resolve().parent / "worker"

__all__ = ["WORKER_DIR", "WorkerClient", "clean_env", "default_limits", "worker_bundle"]


class WorkerClient(Supervisor):
    """A `Supervisor` whose defaults suit the local machine.

    python: the project's interpreter (needs torch + triton only); default sys.executable.
    env: extra environment variables (credentials are dropped whatever their source).
    cwd: the worker's working directory; default a private temporary folder.
    timeout: seconds per job (default 120); `run(job, timeout=...)` overrides it per job.
    limits: {"nofile", "cpu", "as"} resource limits; None means `default_limits(timeout)`.
    """

    def __init__(self, python: str | None = None, env: dict | None = None, cwd: str | None = None,
                 timeout: float = 120, limits: dict | None = None, on_stderr=None):
        super().__init__(python=python, env=env, cwd=cwd, timeout=timeout,
                         worker_dir=str(WORKER_DIR), limits=limits, on_stderr=on_stderr)


def worker_bundle() -> dict[str, str]:
    """The worker folder as {"worker/<name>": text}: what remote backends ship."""
    files = {}
    for path in sorted(WORKER_DIR.iterdir()):
        if path.suffix == ".py" or path.name == "README.md":
            files[f"worker/{path.name}"] = path.read_text(encoding="utf-8")
    return files
