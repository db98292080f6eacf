"""Where jobs run, behind one interface: `local`, `ssh://[user@]host[:port]`, `ray`, `ray://HOST:PORT`.

    backend = get_backend("ssh://gpu-box", python="/opt/venv/bin/python")
    reply = backend.run({"kind": "bench", "path": "/abs/kernel.py"}, timeout=120, cancel=event)
    replies = backend.run_many([job1, job2])      # in parallel where the backend can (Ray)

Every backend returns the worker protocol's replies (profiling/worker/README.md), with timeouts,
crashes and cancellations reported the same way: the same supervisor code decides them, here or
on the remote machine. Remote backends ship the worker folder plus the user's file (and the .py
files beside it, so sibling imports work, up to SIBLING_BUDGET bytes) and the harness file.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shlex
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tritonlens.profiling import ray_task
from tritonlens.profiling.client import WorkerClient, worker_bundle

log = logging.getLogger(__name__)

SIBLING_BUDGET = 2 << 20
# Seconds a remote reply may lag behind the job's own timeout (connection set-up, scheduling)
# before the client gives up on the remote side.
REMOTE_GRACE = 60.0


class BackendError(Exception):
    """The backend itself cannot be used (bad URL, unknown host key, no Ray): a clear message."""


class Backend:
    name = "base"

    def run(self, job: dict, timeout: float | None = None, cancel: threading.Event | None = None) -> dict:
        raise NotImplementedError

    def run_many(self, jobs: list[dict], timeout: float | None = None,
                 cancel: threading.Event | None = None) -> list[dict]:
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
def ship_user_files(job: dict) -> tuple[dict, dict]:
    """Rewrite the job's local paths to "@bundle/user/..." and return (job, files to ship)."""
    job = dict(job)
    files: dict[str, str] = {}
    path = job.get("path")
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
        job["path"] = f"@bundle/user/{p.name}"
    harness = job.get("harness")
    if harness:
        hfile, _, func = harness.rpartition("::")
        h = Path(hfile).resolve()
        if path and h == Path(path).resolve():
            job["harness"] = f"@bundle/user/{h.name}::{func}"
        else:
            files[f"harness/{h.name}"] = h.read_text(encoding="utf-8")
            job["harness"] = f"@bundle/harness/{h.name}::{func}"
    return job, files


# -- ssh ---------------------------------------------------------------------------------
_BOOTSTRAP = r'''
import json, os, sys, tempfile
bundle = json.loads(sys.stdin.readline())
root = tempfile.mkdtemp(prefix="tritonlens-ssh-")
real = os.path.realpath(root)
for rel, text in bundle.items():
    dest = os.path.realpath(os.path.join(real, rel))
    if not dest.startswith(real + os.sep):
        sys.exit("tritonlens: refusing bundle path " + rel)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w", encoding="utf-8") as fh:
        fh.write(text)
sys.path.insert(0, os.path.join(root, "worker"))
import supervisor
sys.exit(supervisor.relay_main(root, python=sys.executable))
'''


def parse_ssh_url(url: str) -> dict:
    parts = urlsplit(url)
    if parts.scheme != "ssh" or not parts.hostname:
        raise BackendError(f"not an ssh URL: {url!r} (expected ssh://[user@]host[:port])")
    try:
        port = parts.port
    except ValueError as exc:
        raise BackendError(f"bad port in {url!r}") from exc
    query = parse_qs(parts.query)
    return {"host": parts.hostname, "port": port, "username": parts.username,
            "python": (query.get("python") or [None])[0]}


class SSHBackend(Backend):
    """Jobs run by a relay (worker/supervisor.py relay_main) in one ssh session on the host.

    Authentication and host settings come from the user's ssh config, agent and keys (asyncssh
    reads ~/.ssh/config, SSH_AUTH_SOCK and ~/.ssh/id_* by default). Host keys are checked against
    known_hosts; an unknown or changed key is refused, never accepted silently.
    """

    name = "ssh"

    def __init__(self, url: str, python: str | None = None, timeout: float = 120,
                 known_hosts=(), client_keys=None, config=None, connect_timeout: float = 20):
        info = parse_ssh_url(url)
        self.url = url
        self.host, self.port, self.username = info["host"], info["port"], info["username"]
        self.python = python or info["python"] or "python3"
        self.timeout = float(timeout)
        self.known_hosts = known_hosts  # () = asyncssh's default (~/.ssh/known_hosts)
        self.client_keys = client_keys
        self.config = config
        self.connect_timeout = connect_timeout
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tritonlens-ssh", daemon=True)
        self._thread.start()
        self._lock = threading.Lock()
        self._conn = None
        self._proc = None

    def _call(self, coro, timeout: float | None, cancel: threading.Event | None):
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                return future.result(timeout=0.1)
            except TimeoutError:
                pass
            except Exception as exc:  # concurrent.futures.TimeoutError is TimeoutError on 3.11+
                if type(exc).__name__ != "TimeoutError":
                    raise
            if cancel is not None and cancel.is_set():
                future.cancel()
                return "cancelled"
            if deadline is not None and time.monotonic() > deadline:
                future.cancel()
                return "timeout"

    async def _connect(self):
        import asyncssh

        # port / user left out unless the URL names them, so ~/.ssh/config (Port, User) applies
        kwargs: dict = {"connect_timeout": self.connect_timeout}
        if self.port is not None:
            kwargs["port"] = self.port
        if self.username is not None:
            kwargs["username"] = self.username
        if self.known_hosts != ():
            kwargs["known_hosts"] = self.known_hosts
        if self.client_keys is not None:
            kwargs["client_keys"] = self.client_keys
        if self.config is not None:
            kwargs["config"] = self.config
        try:
            return await asyncssh.connect(self.host, **kwargs)
        except asyncssh.HostKeyNotVerifiable as exc:
            raise BackendError(
                f"ssh: the host key of {self.host} is not in your known_hosts (or has changed): {exc}. "
                f"Refusing to connect; run `ssh {self.host}` once to check and accept its key.") from None
        except asyncssh.PermissionDenied as exc:
            raise BackendError(f"ssh: {self.host} refused our keys: {exc}") from None
        except (OSError, asyncssh.Error) as exc:
            raise BackendError(f"ssh: cannot connect to {self.host}: {exc}") from None

    async def _start_relay(self):
        if self._conn is None:
            self._conn = await self._connect()
        cmd = f"{shlex.quote(self.python)} -c {shlex.quote(_BOOTSTRAP)}"
        proc = await self._conn.create_process(cmd, encoding="utf-8")
        proc.stdin.write(json.dumps(worker_bundle()) + "\n")
        line = await proc.stdout.readline()
        try:
            hello = json.loads(line)["hello"]
        except (ValueError, KeyError, TypeError):
            err = ""
            try:
                err = await asyncio.wait_for(proc.stderr.read(4000), 5)
            except Exception:
                pass
            proc.close()
            raise BackendError(f"ssh: the remote relay did not start with {self.python!r}: "
                               f"{(line or '').strip()[:200]} {err.strip()[-1500:]}")
        self._proc = proc
        return hello

    async def _job(self, line: str):
        if self._proc is None:
            await self._start_relay()
        import asyncssh

        try:
            self._proc.stdin.write(line + "\n")
            reply = await self._proc.stdout.readline()
        except (asyncssh.Error, OSError, asyncio.IncompleteReadError) as exc:  # e.g. ConnectionLost
            self._proc = None
            raise BackendError(f"ssh: the connection closed while a job ran ({type(exc).__name__}: {exc})") from None
        if not reply:
            self._proc = None
            raise BackendError("ssh: the connection closed while a job ran")
        return json.loads(reply)

    async def _drop(self):
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.stdin.write_eof()  # the relay kills the running worker on EOF
            proc.close()

    def run(self, job, timeout=None, cancel=None):
        limit = self.timeout if timeout is None else float(timeout)
        job_id = job.get("id") or "ssh-job"
        try:
            shipped, files = ship_user_files(job)
        except OSError as exc:
            return {"id": job_id, "ok": False, "error": {"type": "bad_job", "message": f"cannot read: {exc}"}}
        shipped.update({"id": job_id, "timeout": limit, "files": files})
        with self._lock:
            dropped = None
            for attempt in (1, 2):  # a connection dropped mid-job is retried once, on a new one
                try:
                    outcome = self._call(self._job(json.dumps(shipped)), limit + REMOTE_GRACE, cancel)
                except BackendError as exc:
                    self._call(self._drop(), 10, None)
                    lost = "connection closed" in str(exc)
                    if lost:
                        self._conn = None
                    if lost and attempt == 1 and not (cancel is not None and cancel.is_set()):
                        dropped = str(exc)
                        log.warning("%s; retrying the job once on a new connection", exc)
                        continue
                    message = f"{exc} (after one retry; first attempt: {dropped})" if dropped else str(exc)
                    return {"id": job_id, "ok": False, "error": {"type": "backend", "message": message}}
                break
            if outcome in ("cancelled", "timeout"):
                self._call(self._drop(), 10, None)
                message = "cancelled; remote worker killed" if outcome == "cancelled" else \
                    f"no reply from {self.host} within {limit + REMOTE_GRACE:g} s; remote worker killed"
                return {"id": job_id, "ok": False, "error": {"type": outcome, "message": message}}
            outcome.setdefault("host", self.host)
            if dropped:
                outcome["retried"] = {"after": dropped}
            return outcome

    def close(self):
        async def shutdown():
            await self._drop()
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        try:
            self._call(shutdown(), 10, None)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)


# -- ray ---------------------------------------------------------------------------------
class RayBackend(Backend):
    """Each job is one Ray task (num_gpus=1 when the cluster has GPUs); run_many runs them in parallel."""

    name = "ray"

    def __init__(self, address: str | None = None, python: str | None = None, timeout: float = 120,
                 init_kwargs: dict | None = None):
        try:
            import ray
        except ImportError as exc:
            raise BackendError("the ray backend needs Ray: pip install 'tritonlens[cluster]'") from exc
        self.ray = ray
        self.address = address
        self.python = python
        self.timeout = float(timeout)
        if not ray.is_initialized():
            kwargs = dict(init_kwargs or {})
            kwargs.setdefault("ignore_reinit_error", True)
            kwargs.setdefault("include_dashboard", False)
            kwargs.setdefault("log_to_driver", False)
            try:
                ray.init(address=address, **kwargs)
            except Exception as exc:
                raise BackendError(f"ray: cannot connect to {address or 'a local cluster'}: {exc}") from exc
        self.gpus = float(ray.cluster_resources().get("GPU", 0))
        # by value: the cluster's nodes need not have tritonlens installed
        ray.cloudpickle.register_pickle_by_value(ray_task)
        self._remote = ray.remote(num_gpus=1 if self.gpus >= 1 else 0, max_retries=0)(ray_task.run_job)

    @property
    def parallel(self) -> bool:
        return True

    def _submit(self, job, timeout):
        shipped, files = ship_user_files(job)
        bundle = dict(worker_bundle())
        bundle.update(files)
        return self._remote.remote(bundle, shipped, timeout, self.python, None)

    def run_many(self, jobs, timeout=None, cancel=None):
        limit = self.timeout if timeout is None else float(timeout)
        refs = []
        replies: list = [None] * len(jobs)
        for i, job in enumerate(jobs):
            try:
                refs.append((i, self._submit(job, limit)))
            except OSError as exc:
                replies[i] = {"id": job.get("id"), "ok": False, "error": {"type": "bad_job", "message": str(exc)}}
        pending = dict((ref, i) for i, ref in refs)
        deadline = time.monotonic() + limit + REMOTE_GRACE
        while pending:
            if cancel is not None and cancel.is_set():
                for ref, i in pending.items():
                    self.ray.cancel(ref)  # KeyboardInterrupt in the task: its supervisor kills the worker
                    replies[i] = {"id": jobs[i].get("id"), "ok": False,
                                  "error": {"type": "cancelled", "message": "cancelled; Ray task cancelled"}}
                break
            if time.monotonic() > deadline:
                for ref, i in pending.items():
                    self.ray.cancel(ref)
                    replies[i] = {"id": jobs[i].get("id"), "ok": False,
                                  "error": {"type": "timeout", "message": "Ray task did not finish in time"}}
                break
            done, _ = self.ray.wait(list(pending), num_returns=1, timeout=0.2)
            for ref in done:
                i = pending.pop(ref)
                try:
                    replies[i] = self.ray.get(ref)
                    replies[i]["id"] = jobs[i].get("id", replies[i].get("id"))
                except Exception as exc:
                    replies[i] = {"id": jobs[i].get("id"), "ok": False,
                                  "error": {"type": "crash", "message": f"Ray task failed: {exc}"}}
        return replies

    def run(self, job, timeout=None, cancel=None):
        return self.run_many([job], timeout=timeout, cancel=cancel)[0]


# -- selection ---------------------------------------------------------------------------
_backends: dict = {}
_backends_lock = threading.Lock()


def make_backend(spec: str | None, python: str | None = None, timeout: float = 120, **options) -> Backend:
    spec = (spec or "local").strip()
    if spec == "local":
        return LocalBackend(python=python, timeout=timeout, env=options.get("env"))
    if spec.startswith("ssh://"):
        return SSHBackend(spec, python=python, timeout=timeout,
                          **{k: v for k, v in options.items() if k in ("known_hosts", "client_keys", "config")})
    if spec == "ray":
        return RayBackend(None, python=python, timeout=timeout, init_kwargs=options.get("ray_init"))
    if spec.startswith("ray://"):
        return RayBackend(spec, python=python, timeout=timeout, init_kwargs=options.get("ray_init"))
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
