"""code-server for the end-to-end tests: a user data folder with the packaged extension installed,
and one code-server run on a free port with a drive script (playwright-core in Chromium) against it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from vscode_env import CACHE, require

API_KEY_ENV = "TL_E2E_LLM_KEY"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"code-server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{url} did not answer in {seconds} s")


def prepare(root: Path, vsix: Path, files: list[Path]) -> dict:
    """A workspace holding copies of `files`, user settings, and the .vsix installed."""
    entry = CACHE / "code-server" / "out" / "node" / "entry.js"
    require(entry.exists(), "code-server is not installed")
    require((CACHE / "node_modules" / "playwright-core").exists(), "playwright-core is not installed")
    require(Path("/usr/bin/chromium").exists(), "chromium is not installed")
    node = shutil.which("node")
    require(node is not None, "node is not installed")

    workspace, user, extensions = root / "ws", root / "user", root / "ext"
    workspace.mkdir()
    for f in files:
        shutil.copy(f, workspace / f.name)
    # Editor settings are the browser's user settings; tritonlens' go into the server-side user
    # settings (Machine/), where code-server writes ConfigurationTarget.Global updates: a value
    # left in the browser's file is dropped from the extension host's view after such an update.
    (user / "User").mkdir(parents=True)
    (user / "User" / "settings.json").write_text(json.dumps({
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "telemetry.telemetryLevel": "off",
        "security.workspace.trust.enabled": False,
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "editor.hover.delay": 150,
        "files.autoSave": "off",
    }))
    (user / "Machine").mkdir(parents=True)
    (user / "Machine" / "settings.json").write_text(json.dumps({
        "tritonlens.interpreter": sys.executable,
        "tritonlens.llm.apiKeyEnv": API_KEY_ENV,
    }))
    t0 = time.monotonic()
    install = subprocess.run(
        [node, str(entry), "--user-data-dir", str(user), "--extensions-dir", str(extensions),
         "--install-extension", str(vsix)],
        check=False, capture_output=True, text=True, timeout=180,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    assert "was successfully installed" in install.stdout, install.stdout
    install_s = time.monotonic() - t0
    return {"node": node, "entry": entry, "workspace": workspace, "user": user, "extensions": extensions,
            "install_s": install_s}


def run_code_server(env_, tmp_path, extra_env, drive_env, trust=False, driver="drive.js",
                    timeout=280) -> tuple[subprocess.CompletedProcess, float]:
    """Starts code-server on a free port, runs the drive script against it, stops it; returns the
    drive's run. trust=True keeps workspace trust on (the start-up dialog asks); otherwise it is off."""
    with one_browser_at_a_time():
        return _run_code_server(env_, tmp_path, extra_env, drive_env, trust, driver, timeout)


@contextlib.contextmanager
def one_browser_at_a_time():
    """One code-server session on the machine at a time, across the test run's workers: two
    browsers driving two code-servers on two cores leave the drivers' waits too little time."""
    with open(os.path.join(tempfile.gettempdir(), "tritonlens-code-server.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run_code_server(env_, tmp_path, extra_env, drive_env, trust, driver, timeout):
    port = free_port()
    config = tmp_path / "config.yaml"
    config.write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n")
    t0 = time.monotonic()
    with open(tmp_path / "code-server.log", "w") as log:
        proc = subprocess.Popen(
            [env_["node"], str(env_["entry"]), "--config", str(config), "--user-data-dir", str(env_["user"]),
             "--extensions-dir", str(env_["extensions"]), "--disable-telemetry", "--disable-update-check",
             *([] if trust else ["--disable-workspace-trust"]), "--disable-getting-started-override",
             str(env_["workspace"])],
            env={**os.environ, **extra_env}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        try:
            wait_healthy(f"http://127.0.0.1:{port}/healthz", proc, 60)
            drive = subprocess.run(
                [env_["node"], str(Path(__file__).with_name(driver))],
                env={**os.environ, "NODE_PATH": str(CACHE / "node_modules"),
                     "CS_URL": f"http://127.0.0.1:{port}/?folder={env_['workspace']}", **drive_env},
                check=False, capture_output=True, text=True, timeout=timeout,
            )
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
    return drive, time.monotonic() - t0
