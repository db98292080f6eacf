"""The ssh backend: jobs run by a relay (worker/relay.py) in one ssh session."""

from __future__ import annotations

import asyncio
import json
import logging
import shlex
import threading
import time
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from tritonlens.profiling.backends import (
    REMOTE_GRACE,
    Backend,
    BackendError,
    as_job,
    ship_user_files,
)
from tritonlens.profiling.client import worker_bundle
from tritonlens.profiling.worker.messages import RelayHello, Reply

log = logging.getLogger(__name__)


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
import relay
sys.exit(relay.relay_main(root, python=sys.executable))
'''


@dataclass(frozen=True)
class SSHTarget:
    """ssh://[user@]host[:port][?python=PATH]; what the URL leaves out, ~/.ssh/config decides."""

    host: str
    port: int | None = None
    username: str | None = None
    python: str | None = None


def parse_ssh_url(url: str) -> SSHTarget:
    parts = urlsplit(url)
    if parts.scheme != "ssh" or not parts.hostname:
        raise BackendError(f"not an ssh URL: {url!r} (expected ssh://[user@]host[:port])")
    try:
        port = parts.port
    except ValueError as exc:
        raise BackendError(f"bad port in {url!r}") from exc
    query = parse_qs(parts.query)
    return SSHTarget(parts.hostname, port, parts.username, (query.get("python") or [None])[0])


class SSHBackend(Backend):
    """Jobs run by a relay (worker/relay.py) in one ssh session on the host.

    Authentication and host settings come from the user's ssh config, agent and keys (asyncssh
    reads ~/.ssh/config, SSH_AUTH_SOCK and ~/.ssh/id_* by default). Host keys are checked against
    known_hosts; an unknown or changed key is refused, never accepted silently.
    """

    name = "ssh"

    def __init__(self, url: str, python: str | None = None, timeout: float = 120,
                 known_hosts=(), client_keys=None, config=None, connect_timeout: float = 20):
        info = parse_ssh_url(url)
        self.url = url
        self.host, self.port, self.username = info.host, info.port, info.username
        self.python = python or info.python or "python3"
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
            hello = RelayHello.from_json(json.loads(line)["hello"])
        except (ValueError, KeyError, TypeError):  # MessageError is a ValueError
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
        try:
            return Reply.from_json(json.loads(reply))
        except ValueError as exc:  # MessageError too
            raise BackendError(f"ssh: the relay's reply is unreadable: {exc}") from None

    async def _drop(self):
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.stdin.write_eof()  # the relay kills the running worker on EOF
            proc.close()

    def run(self, job, timeout=None, cancel=None):
        limit = self.timeout if timeout is None else float(timeout)
        job = as_job(job)
        job_id = job.id or "ssh-job"
        try:
            shipped, files = ship_user_files(job)
        except OSError as exc:
            return Reply.failure(job_id, "bad_job", f"cannot read: {exc}")
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
                    return Reply.failure(job_id, "backend", message)
                break
            if outcome in ("cancelled", "timeout"):
                self._call(self._drop(), 10, None)
                message = "cancelled; remote worker killed" if outcome == "cancelled" else \
                    f"no reply from {self.host} within {limit + REMOTE_GRACE:g} s; remote worker killed"
                return Reply.failure(job_id, outcome, message)
            outcome.host = outcome.host or self.host
            if dropped:
                outcome.retried = {"after": dropped}
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
