"""The ssh backend against a real OpenSSH server on 127.0.0.1 with throwaway keys."""

import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest
from tritonlens.profiling.backend_ssh import SSHBackend
from tritonlens.profiling.backends import BackendError

SSHD = "/usr/sbin/sshd"
DATA = os.path.join(os.path.dirname(__file__), "data")
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")

pytestmark = pytest.mark.slow


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    if not os.path.exists(SSHD) or shutil.which("ssh-keygen") is None:
        pytest.skip("openssh-server is not installed (scripts/setup.d/20-sshd.sh installs it)")
    if os.geteuid() != 0:
        pytest.skip("sshd with its own config needs root here")
    d = tmp_path_factory.mktemp("sshd")
    for name in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / name)], check=True)
    (d / "authorized_keys").write_text((d / "user_key.pub").read_text())
    os.chmod(d / "authorized_keys", 0o600)
    port = _free_port()
    cfg = d / "sshd_config"
    cfg.write_text(f"""Port {port}
ListenAddress 127.0.0.1
HostKey {d}/host_key
PidFile {d}/sshd.pid
AuthorizedKeysFile {d}/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
""")
    os.makedirs("/run/sshd", exist_ok=True)
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(cfg)], stderr=subprocess.PIPE)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"sshd did not start: {proc.stderr.read().decode()}")
            time.sleep(0.1)
    host_pub = (d / "host_key.pub").read_text().split()
    (d / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
    (d / "empty_known_hosts").write_text("")
    yield {"port": port, "dir": d, "user": os.environ.get("USER") or "root"}
    proc.terminate()
    proc.wait(timeout=10)


def _backend(sshd, known_hosts="known_hosts", **kw):
    return SSHBackend(f"ssh://root@127.0.0.1:{sshd['port']}", python=sys.executable, timeout=90,
                      known_hosts=str(sshd["dir"] / known_hosts), client_keys=[str(sshd["dir"] / "user_key")], **kw)


def test_profile_example_through_ssh(sshd):
    backend = _backend(sshd)
    try:
        reply = backend.run({"kind": "bench", "path": os.path.abspath(os.path.join(EXAMPLES, "vector_add.py"))})
        assert reply.ok, reply
        res = reply.result
        assert res["mode"] == "interpreter" and res["device"]["cuda"] is False
        assert res["launches"][0]["kernel"] == "add_kernel" and res["launches"][0]["time_ms"] is None
        # the remote worker ran on the shipped copy, not on our file
        assert "tritonlens-ssh-" in res["descriptors"][0]["file"]
        # per-line sampling is shipped too; here it stops where this host has no Nsight Compute
        reply = backend.run({"kind": "lines", "path": os.path.abspath(os.path.join(EXAMPLES, "vector_add.py")),
                             "kernel": "add_kernel"})
        assert not reply.ok and "ncu (Nsight Compute) is not on PATH" in reply.error.message
        # a second job reuses the session; the relay enforces the timeout remotely
        reply = backend.run({"kind": "capture", "path": os.path.join(DATA, "zero_config.py")})
        assert reply.ok and len(reply.result["launches"]) == 2
        hang = os.path.join(DATA, "hang.py")
        reply = backend.run({"kind": "capture", "path": hang}, timeout=3)
        assert reply.error.type == "timeout"
        cancel = threading.Event()
        threading.Timer(2.0, cancel.set).start()
        t0 = time.monotonic()
        reply = backend.run({"kind": "capture", "path": hang}, timeout=60, cancel=cancel)
        assert reply.error.type == "cancelled" and time.monotonic() - t0 < 20
        assert backend.run({"kind": "info"}).ok  # a fresh relay after the cancel
    finally:
        backend.close()


def test_unknown_host_key_is_refused(sshd):
    backend = _backend(sshd, known_hosts="empty_known_hosts")
    try:
        reply = backend.run({"kind": "info"})
        assert reply.ok is False and reply.error.type == "backend"
        assert "known_hosts" in reply.error.message and "Refusing" in reply.error.message
    finally:
        backend.close()


def test_bad_url():
    with pytest.raises(BackendError):
        SSHBackend("ssh://")
