"""Supervisor of worker processes: spawn, time out, kill, restart. Standard library only.

It runs on the client's machine (imported as tritonlens.profiling.worker.supervisor through
tritonlens.profiling.client) AND, copied as a plain file, on remote hosts: behind ssh (relay.py)
and in a Ray task (tritonlens.profiling.ray_task). Either way the same code decides what a
timeout, a crash or a cancellation looks like, so every backend reports them identically.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
try:  # imported as tritonlens.profiling.worker.supervisor
    from . import messages
except ImportError:  # a plain file beside messages.py (ssh relay, Ray task)
    sys.path.insert(0, HERE)
    try:
        import messages
    finally:
        sys.path.remove(HERE)
# Anything that looks like a credential stays out of the worker: it runs the user's (or an
# LLM's) code, which must not be able to read the editor's API keys.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
STDERR_KEEP = 64 * 1024
HELLO_TIMEOUT = 60.0

_live: weakref.WeakSet[Supervisor] = weakref.WeakSet()


def clean_env(base: dict | None = None, extra: dict | None = None) -> dict:
    env = dict(os.environ if base is None else base)
    env.update(extra or {})
    env = {k: v for k, v in env.items() if not SECRET_NAME.search(k)}
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def default_limits(timeout: float) -> dict:
    """Resource limits applied to each worker (issue 7 hardens these further).

    - nofile: torch + CUDA open a few dozen files; 4096 leaves room while stopping fd bombs.
    - cpu: CPU seconds over the worker's whole life. A worker serves many jobs, so it is generous
      (the wall-clock timeout is what stops a hung job); it only bounds a runaway busy loop that
      somehow escaped the wall-clock kill.
    - as: address space. CUDA reserves tens of GB of virtual memory at start, so on a host with
      a GPU any cap low enough to matter breaks GPU runs: off there. On a host without one the
      kernels run in Triton's interpreter (about 2 GB of address space is enough), and a runaway
      allocation must end as a MemoryError in the worker, not as the host's OOM killer choosing a
      victim: capped at 3/4 of physical memory (at least 4 GiB).
    """
    return {"nofile": 4096, "cpu": int(max(600, 20 * timeout)), "as": None if _has_gpu() else _interpreter_as_cap()}


def _has_gpu() -> bool:
    return any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd", "/dev/dxg"))


def _interpreter_as_cap() -> int | None:
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    return max(4 << 30, physical * 3 // 4)


def _preexec(limits: dict):
    def apply() -> None:
        import resource

        table = {"nofile": resource.RLIMIT_NOFILE, "cpu": resource.RLIMIT_CPU, "as": resource.RLIMIT_AS}
        for name, value in limits.items():
            if value is None or name not in table:
                continue
            soft, hard = resource.getrlimit(table[name])
            value = int(value)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(table[name], (value, hard))

    return apply


def describe_exit(code: int | None) -> str:
    if code is None:
        return "worker vanished"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        extra = {"SIGSEGV": " (segmentation fault)", "SIGKILL": " (killed: out of memory or a limit?)",
                 "SIGXCPU": " (CPU-time limit reached)", "SIGABRT": " (aborted)", "SIGBUS": " (bus error)"}
        return f"worker died from {name}{extra.get(name, '')}"
    return f"worker exited with status {code}"


_error = messages.Reply.failure


class Supervisor:
    """Runs jobs one at a time in a long-lived worker; replaces the worker after any failure.

    Thread-safe: `run` holds a lock, so concurrent callers queue up on one worker. Cancelling
    (`cancel`, a threading.Event) or a timeout kills the worker's whole process group.
    """

    def __init__(self, python: str | None = None, env: dict | None = None, cwd: str | None = None,
                 timeout: float = 120, worker_dir: str | None = None, limits: dict | None = None,
                 on_stderr=None, idle_exit: float | None = None):
        self.python = python or sys.executable
        self.extra_env = dict(env or {})
        self.cwd = cwd
        self.timeout = float(timeout)
        self.worker_dir = os.path.abspath(worker_dir or HERE)
        self.limits = default_limits(self.timeout) if limits is None else dict(limits)
        self.on_stderr = on_stderr
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue = queue.Queue()
        self._stderr = collections.deque()
        self._stderr_len = 0
        self._stderr_lock = threading.Lock()
        self._tmp: str | None = None
        self._ids = itertools.count(1)
        self.hello: messages.Hello | None = None
        self.spawned = 0
        # A worker holds Triton, torch and its caches (hundreds of MB): one with no job for
        # `idle_exit` seconds is stopped, and the next job starts a fresh one.
        self.idle_exit = idle_exit
        self.idle_exits = 0
        self._idle_since = time.monotonic()
        self._reaper: threading.Thread | None = None
        _live.add(self)

    # -- process management -------------------------------------------------------------
    def _spawn(self, deadline: float) -> messages.Reply | None:
        """Start a worker and wait for its hello; returns an error reply or None."""
        if self.cwd:
            workdir = self.cwd
        else:
            if self._tmp is None or not os.path.isdir(self._tmp):
                self._tmp = tempfile.mkdtemp(prefix="tritonlens-worker-")
            workdir = self._tmp
        self._lines = queue.Queue()
        with self._stderr_lock:
            self._stderr.clear()
            self._stderr_len = 0
        cmd = [self.python, "-u", os.path.join(self.worker_dir, "worker_main.py")]
        try:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=workdir, env=clean_env(extra=self.extra_env), start_new_session=True,
                preexec_fn=_preexec(self.limits), close_fds=True)
        except OSError as exc:
            return _error(None, "spawn", f"cannot start worker with {self.python!r}: {exc}")
        self._proc = proc
        self.spawned += 1
        threading.Thread(target=self._read_stdout, args=(proc, self._lines), daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(proc,), daemon=True).start()
        wait = min(HELLO_TIMEOUT, max(0.1, deadline - time.monotonic()))
        try:
            first = self._lines.get(timeout=wait)
        except queue.Empty:
            self._kill()
            return _error(None, "timeout", f"worker did not start within {wait:.0f} s")
        if first is None:
            code = proc.wait()
            self._proc = None
            return _error(None, "spawn", f"worker failed to start: {describe_exit(code)}",
                          stderr=self.stderr_tail())
        try:
            self.hello = messages.Hello.from_json(json.loads(first)["hello"])
        except (ValueError, KeyError, TypeError):  # MessageError is a ValueError
            self._kill()
            return _error(None, "protocol", f"worker did not greet: {first[:200]!r}", stderr=self.stderr_tail())
        return None

    @staticmethod
    def _read_stdout(proc, lines: queue.Queue) -> None:
        for raw in proc.stdout:
            lines.put(raw.decode("utf-8", "replace"))
        lines.put(None)

    def _read_stderr(self, proc) -> None:
        for raw in iter(lambda: proc.stderr.read1(65536), b""):
            if self.on_stderr is not None:
                try:
                    self.on_stderr(raw.decode("utf-8", "replace"))
                except Exception:
                    pass
            with self._stderr_lock:
                self._stderr.append(raw)
                self._stderr_len += len(raw)
                while self._stderr_len > STDERR_KEEP and len(self._stderr) > 1:
                    self._stderr_len -= len(self._stderr.popleft())

    def stderr_tail(self, limit: int = 4000) -> str:
        with self._stderr_lock:
            data = b"".join(self._stderr)
        return data[-limit:].decode("utf-8", "replace")

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _kill(self) -> int | None:
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                stream.close()
            except Exception:
                pass
        return code

    def _stop(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                proc.stdin.close()  # EOF: the worker leaves its loop
                proc.wait(timeout=2)
            except Exception:
                pass
        self._kill()

    def _watch_idle(self) -> None:
        """Started with each job's end while none watches; ends when the worker is gone."""
        if self.idle_exit is None or (self._reaper is not None and self._reaper.is_alive()):
            return
        self._reaper = threading.Thread(target=self._stop_when_idle, name="tritonlens-worker-idle", daemon=True)
        self._reaper.start()

    def _stop_when_idle(self) -> None:
        while True:
            with self._lock:  # held by a running job: the idle time counts from its end
                if not self.alive():
                    self._reaper = None
                    return
                left = self._idle_since + self.idle_exit - time.monotonic()
                if left <= 0:
                    self._stop()
                    self.idle_exits += 1
                    self._reaper = None
                    return
            time.sleep(left)

    def close(self) -> None:
        with self._lock:
            self._stop()
            if self._tmp:
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- jobs -----------------------------------------------------------------------------
    def run(self, job: messages.Job | dict, timeout: float | None = None,
            cancel: threading.Event | None = None) -> messages.Reply:
        """Run one job; always returns a reply (never raises for worker failures)."""
        limit = self.timeout if timeout is None else float(timeout)
        with self._lock:
            try:
                return self._run_locked(job, limit, cancel)
            finally:
                self._idle_since = time.monotonic()
                if self.alive():
                    self._watch_idle()

    def _run_locked(self, job: messages.Job | dict, limit: float, cancel: threading.Event | None) -> messages.Reply:
        if isinstance(job, dict):
            try:
                job = messages.job_from_json(job)
            except messages.MessageError as exc:
                return _error(job.get("id"), "bad_job", str(exc))
        if job.id is None:
            job = dataclasses.replace(job, id=f"j{next(self._ids)}")
        job_id = job.id
        deadline = time.monotonic() + limit
        if cancel is not None and cancel.is_set():
            return _error(job_id, "cancelled", "cancelled before start")
        if not self.alive():
            self._kill()
            err = self._spawn(deadline)
            if err is not None:
                err.id = job_id
                return err
        with self._stderr_lock:
            mark = self._stderr_len
        try:
            self._proc.stdin.write((json.dumps(job.to_json()) + "\n").encode())
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, TypeError, ValueError) as exc:
            if isinstance(exc, (TypeError, ValueError)):
                return _error(job_id, "bad_job", f"job is not JSON-serialisable: {exc}")
            code = self._kill()
            return _error(job_id, "crash", describe_exit(code), stderr=self.stderr_tail())
        while True:
            if cancel is not None and cancel.is_set():
                self._kill()
                return _error(job_id, "cancelled", "cancelled; worker killed")
            now = time.monotonic()
            if now >= deadline:
                self._kill()
                return _error(job_id, "timeout", f"job {job.kind!r} exceeded {limit:g} s; worker killed",
                              stderr=self.stderr_tail())
            try:
                line = self._lines.get(timeout=min(0.05, deadline - now))
            except queue.Empty:
                continue
            if line is None:
                code = self._kill()
                return _error(job_id, "crash", f"{describe_exit(code)} while running job {job.kind!r}",
                              stderr=self.stderr_tail(), exit_code=code)
            try:
                data = json.loads(line)
            except ValueError:
                self._kill()
                return _error(job_id, "protocol", f"unreadable reply: {line[:200]!r}")
            if not isinstance(data, dict) or data.get("id") != job_id:
                continue  # a stale reply from an earlier, abandoned job
            try:
                reply = messages.Reply.from_json(data)
            except messages.MessageError as exc:
                self._kill()
                return _error(job_id, "protocol", str(exc))
            if reply.fatal:
                self._kill()
            if not reply.ok:
                with self._stderr_lock:
                    produced = self._stderr_len - mark
                if reply.error is None:
                    reply.error = messages.WorkerError("exception", "the worker gave no reason")
                if reply.error.stderr is None:
                    reply.error.stderr = self.stderr_tail(min(4000, max(0, produced))) if produced > 0 else ""
            return reply


def _shutdown_all() -> None:
    for sup in list(_live):
        try:
            sup.close()
        except Exception:
            pass


import atexit

atexit.register(_shutdown_all)


# Job values naming a shipped file: the remote side resolves them into its copy of the bundle.
BUNDLE_PREFIX = "@bundle/"


def resolve_paths(job: dict, root: str) -> dict:
    """Rewrite "@bundle/..." string values of a job's JSON to paths under root."""
    out = {}
    for key, value in job.items():
        if isinstance(value, str) and value.startswith(BUNDLE_PREFIX):
            value = os.path.join(root, value[len(BUNDLE_PREFIX):])
        out[key] = value
    return out
