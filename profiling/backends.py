"""Where jobs run, behind one interface: `local`, `ssh://[user@]host[:port]`, `ray`, `ray://HOST:PORT`.

    backend = get_backend("ssh://gpu-box", python="/opt/venv/bin/python")
    reply = backend.run(LaunchJob("bench", path="/abs/kernel.py"), timeout=120, cancel=event)
    replies = backend.run_many([job1, job2])      # in parallel where the backend can (Ray)

Every backend returns the worker protocol's replies (worker/messages.py's Reply), with timeouts,
crashes and cancellations reported the same way: the same supervisor code decides them, here or
on the remote machine. Remote backends ship the worker folder plus the user's file (and the .py
files beside it, so sibling imports work, up to SIBLING_BUDGET bytes) and the harness file.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from tritonlens.profiling.client import WorkerClient
from tritonlens.profiling.worker.messages import (
    Job,
    Reply,
    job_from_json,
)

SIBLING_BUDGET = 2 << 20
# Seconds a remote reply may lag behind the job's own timeout (connection set-up, scheduling)
# before the client gives up on the remote side.
REMOTE_GRACE = 60.0


class BackendError(Exception):
    """The backend itself cannot be used (bad URL, unknown host key, no Ray): a clear message."""


def as_job(job: Job | dict) -> Job:
    """A job, from itself or its JSON (MessageError when that is not a job)."""
    return job if isinstance(job, Job) else job_from_json(job)


class Backend:
    name = "base"

    def run(self, job: Job, timeout: float | None = None, cancel: threading.Event | None = None) -> Reply:
        raise NotImplementedError

    def run_many(self, jobs: list[Job], timeout: float | None = None,
                 cancel: threading.Event | None = None) -> list[Reply]:
        return [self.run(job, timeout=timeout, cancel=cancel) for job in jobs]

    @property
    def parallel(self) -> bool:
        return False

    def close(self) -> None:
        pass


class LocalBackend(Backend):
    name = "local"

    def __init__(self, python: str | None = None, timeout: float = 120, env: dict | None = None):
        self.client = WorkerClient(python=python, timeout=timeout, env=env)

    def run(self, job, timeout=None, cancel=None):
        return self.client.run(job, timeout=timeout, cancel=cancel)

    def close(self):
        self.client.close()


# -- shipping user files -----------------------------------------------------------------
def ship_user_files(job: Job) -> tuple[dict, dict]:
    """The job's JSON with its local paths rewritten to "@bundle/user/...", and the files to ship."""
    data = job.to_json()
    files: dict[str, str] = {}
    path = data.get("path")
    if path:
        p = Path(path).resolve()
        files[f"user/{p.name}"] = p.read_text(encoding="utf-8")
        budget = SIBLING_BUDGET
        for sib in sorted(p.parent.glob("*.py")):
            if sib == p:
                continue
            size = sib.stat().st_size
            if size > budget:
                continue
            budget -= size
            try:
                files[f"user/{sib.name}"] = sib.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                pass
        data["path"] = f"@bundle/user/{p.name}"
    harness = data.get("harness")
    if harness:
        hfile, _, func = harness.rpartition("::")
        h = Path(hfile).resolve()
        if path and h == Path(path).resolve():
            data["harness"] = f"@bundle/user/{h.name}::{func}"
        else:
            files[f"harness/{h.name}"] = h.read_text(encoding="utf-8")
            data["harness"] = f"@bundle/harness/{h.name}::{func}"
    return data, files


# -- selection ---------------------------------------------------------------------------
_backends: dict = {}
_backends_lock = threading.Lock()


def make_backend(spec: str | None, python: str | None = None, timeout: float = 120, **options) -> Backend:
    spec = (spec or "local").strip()
    if spec == "local":
        return LocalBackend(python=python, timeout=timeout, env=options.get("env"))
    if spec.startswith("ssh://"):
        from tritonlens.profiling.backend_ssh import SSHBackend

        return SSHBackend(spec, python=python, timeout=timeout,
                          **{k: v for k, v in options.items() if k in ("known_hosts", "client_keys", "config")})
    if spec == "ray" or spec.startswith("ray://"):
        from tritonlens.profiling.backend_ray import RayBackend

        return RayBackend(None if spec == "ray" else spec, python=python, timeout=timeout, init_kwargs=options.get("ray_init"))
    raise BackendError(f"unknown backend {spec!r}: use local, ssh://[user@]host[:port], ray or ray://HOST:PORT")


def get_backend(spec: str | None, python: str | None = None, timeout: float = 120, **options) -> Backend:
    """A shared backend per (spec, python): workers and connections are reused across calls."""
    key = ((spec or "local").strip(), python or "", json.dumps(options, sort_keys=True, default=str))
    with _backends_lock:
        backend = _backends.get(key)
        if backend is None:
            backend = _backends[key] = make_backend(spec, python=python, timeout=timeout, **options)
        return backend


def close_all() -> None:
    with _backends_lock:
        items = list(_backends.values())
        _backends.clear()
    for backend in items:
        try:
            backend.close()
        except Exception:
            pass
