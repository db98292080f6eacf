"""Remote profiling over ssh against the real sshd on loopback (the fixture of
tests/profiling/test_backend_ssh.py): unknown and changed host keys are refused, a connection
dropped mid-job gives an error and one retry, and no secret reaches any log, even at DEBUG."""

from __future__ import annotations

import importlib.util
import io
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from rel_client import REPO

pytestmark = pytest.mark.slow
DATA = Path(__file__).parent / "data"
FAKE_KEY = "sk-reliability-FAKE-9f8e7d6c5b4a"


def _ssh_tests():
    spec = importlib.util.spec_from_file_location("tritonlens_ssh_tests", REPO / "tests/profiling/test_backend_ssh.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_ssh = _ssh_tests()
sshd = _ssh.sshd  # the same real sshd fixture, reused
_backend = _ssh._backend


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def test_unknown_and_changed_host_keys_are_refused(sshd, tmp_path):
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    kind, body = other.with_suffix(".pub").read_text().split()[:2]
    (sshd["dir"] / "changed_known_hosts").write_text(f"[127.0.0.1]:{sshd['port']} {kind} {body}\n")
    for known in ("empty_known_hosts", "changed_known_hosts"):
        backend = _backend(sshd, known_hosts=known)
        try:
            reply = backend.run({"kind": "info"})
            assert reply.ok is False and reply.error.type == "backend", reply
            assert "Refusing to connect" in reply.error.message, reply
        finally:
            backend.close()


def _session_pids(sshd_pid: int) -> list[int]:
    """Per-connection processes forked by our own sshd (its direct children)."""
    out = []
    for task in Path(f"/proc/{sshd_pid}/task").iterdir():
        children = (task / "children").read_text().split()
        out += [int(c) for c in children]
    return out


def _sshd_pid(sshd) -> int:
    # The fixture's sshd is a child of this process, listening on the fixture's port.
    for child in Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split():
        cmd = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        if any(b"sshd" in part for part in cmd[:1]) and str(sshd["dir"]).encode() in b" ".join(cmd):
            return int(child)
    raise AssertionError("cannot find the fixture's sshd")


def test_dropped_connection_mid_job_is_retried_once(sshd):
    backend = _backend(sshd)
    sshd_pid = _sshd_pid(sshd)
    try:
        assert backend.run({"kind": "info"}).ok
        sessions = set(_session_pids(sshd_pid))
        assert sessions, "no ssh session to cut"

        def cut():
            time.sleep(2.5)  # the job is running: its harness sleeps 6 s
            for pid in _session_pids(sshd_pid):
                os.kill(pid, 9)

        threading.Thread(target=cut, daemon=True).start()
        t0 = time.monotonic()
        reply = backend.run({"kind": "bench", "path": str(DATA / "slow_ok.py")}, timeout=60)
        assert reply.ok, reply
        assert "connection closed" in reply.retried["after"], reply
        assert time.monotonic() - t0 > 6  # it really ran twice
        assert reply.result["launches"][0]["kernel"] == "fill_kernel"
    finally:
        backend.close()


def test_no_secret_in_any_log(sshd, tmp_path, monkeypatch):
    import asyncssh

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    key_text = (sshd["dir"] / "user_key").read_text()
    key_lines = [ln for ln in key_text.splitlines() if ln and not ln.startswith("-----")]
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    asyncssh.set_debug_level(2)
    stderr_seen: list[str] = []
    try:
        from tritonlens.profiling.api import profile_file

        backend = _backend(sshd)
        try:
            assert backend.run({"kind": "info"}).ok
            reply = backend.run({"kind": "bench", "path": str(REPO / "examples" / "vector_add.py")})
            assert reply.ok, reply
        finally:
            backend.close()
        # the local path logs too: the server's profile entry point with its worker's stderr
        from tritonlens.profiling.client import WorkerClient

        with WorkerClient(timeout=120, on_stderr=stderr_seen.append) as worker:
            assert worker.run({"kind": "info"}).ok
        report = profile_file(str(REPO / "examples" / "vector_add.py"))
        assert report.error is None, report
        server_log = tmp_path / "server.log"
        proc = subprocess.run([sys.executable, "-m", "tritonlens", "serve", "--log-file", str(server_log),
                               "--log-level", "DEBUG"], check=False, input=b"", capture_output=True, timeout=60,
                              env={**os.environ, "OPENAI_API_KEY": FAKE_KEY})
        logs = buf.getvalue() + "".join(stderr_seen) + server_log.read_text() + proc.stderr.decode(errors="replace")
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        asyncssh.set_debug_level(1)
    assert "asyncssh" in logs.lower() or "ssh" in logs.lower()  # DEBUG logging really captured the ssh session
    assert len(logs) > 1000, logs
    assert FAKE_KEY not in logs
    for line in key_lines:
        assert line not in logs, "private key material in the logs"
