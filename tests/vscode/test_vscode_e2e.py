"""End to end inside a real VS Code: code-server 4.100.3 (VS Code 1.100) with the packaged .vsix,
driven in headless Chromium. The extension's self test (TRITONLENS_SELFTEST_OUT) acts through the
editor's own API and commands; drive.js checks the rendered hover card and takes the screenshot.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from vscode_env import CACHE, OUTPUT, REPO, require

pytestmark = pytest.mark.slow

EXAMPLE = REPO / "examples" / "vector_add.py"
KERNEL = "add_kernel"


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


@pytest.fixture
def code_server_env(tmp_path, vsix):
    entry = CACHE / "code-server" / "out" / "node" / "entry.js"
    require(entry.exists(), "code-server is not installed")
    require((CACHE / "node_modules" / "playwright-core").exists(), "playwright-core is not installed")
    require(Path("/usr/bin/chromium").exists(), "chromium is not installed")
    node = shutil.which("node")
    require(node is not None, "node is not installed")

    workspace, user, extensions = tmp_path / "ws", tmp_path / "user", tmp_path / "ext"
    workspace.mkdir()
    shutil.copy(EXAMPLE, workspace / EXAMPLE.name)
    (user / "User").mkdir(parents=True)
    (user / "User" / "settings.json").write_text(json.dumps({
        "tritonlens.interpreter": sys.executable,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "telemetry.telemetryLevel": "off",
        "security.workspace.trust.enabled": False,
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "editor.hover.delay": 150,
        "files.autoSave": "off",
    }))
    t0 = time.monotonic()
    install = subprocess.run(
        [node, str(entry), "--user-data-dir", str(user), "--extensions-dir", str(extensions),
         "--install-extension", str(vsix)],
        capture_output=True, text=True, timeout=180,
    )
    assert install.returncode == 0 and "was successfully installed" in install.stdout, install.stdout + install.stderr
    install_s = time.monotonic() - t0
    return {"node": node, "entry": entry, "workspace": workspace, "user": user, "extensions": extensions,
            "install_s": install_s}


def test_extension_in_code_server(code_server_env, tmp_path):
    env_ = code_server_env
    OUTPUT.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = tmp_path / "config.yaml"
    config.write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n")
    result, ui, shot = tmp_path / "selftest.json", tmp_path / "ui.json", OUTPUT / "vscode-e2e.png"
    kernel_file = env_["workspace"] / EXAMPLE.name
    original = kernel_file.read_text()
    server_env = {
        **os.environ,
        "TRITONLENS_SELFTEST_OUT": str(result),
        "TRITONLENS_SELFTEST_FILE": str(kernel_file),
        "TRITONLENS_SELFTEST_KERNEL": KERNEL,
        "TRITON_INTERPRET": "1",  # no GPU here: the profile runs the kernel in Triton's interpreter
    }
    log = open(tmp_path / "code-server.log", "w")
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [env_["node"], str(env_["entry"]), "--config", str(config), "--user-data-dir", str(env_["user"]),
         "--extensions-dir", str(env_["extensions"]), "--disable-telemetry", "--disable-update-check",
         "--disable-workspace-trust", "--disable-getting-started-override", str(env_["workspace"])],
        env=server_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}/healthz", proc, 60)
        drive = subprocess.run(
            [env_["node"], str(Path(__file__).with_name("drive.js"))],
            env={**os.environ, "NODE_PATH": str(CACHE / "node_modules"),
                 "CS_URL": f"http://127.0.0.1:{port}/?folder={env_['workspace']}",
                 "RESULT": str(result), "UI_OUT": str(ui), "SHOT": str(shot), "KERNEL": KERNEL,
                 "TIMEOUT_MS": "200000"},
            capture_output=True, text=True, timeout=280,
        )
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
    total_s = time.monotonic() - t0
    for f in (result, ui, tmp_path / "code-server.log"):
        if f.exists():
            shutil.copy(f, OUTPUT / f.name)
    assert drive.returncode == 0, drive.stdout + drive.stderr
    res = json.loads(result.read_text())
    seen = json.loads(ui.read_text())
    (OUTPUT / "timings.json").write_text(json.dumps(
        {"install_s": round(env_["install_s"], 1), "total_s": round(total_s, 1),
         "workbench_ms": seen.get("workbenchMs"), "selftest_ms": seen.get("resultMs"), "steps_ms": res["steps"]},
        indent=2))

    assert res["vscode"].startswith("1.100"), res["vscode"]
    assert res["serverRunning"], res
    assert res["interpreter"] == {"path": sys.executable, "source": "setting"}
    assert res["errors"] == [], "\n".join(res["errors"])

    # Diagnostics with TL codes and a link to each rule's page.
    diags = res["diagnostics"]
    assert diags, res
    for d in diags:
        assert re.fullmatch(r"TL\d{3}", d["code"]), d
        assert d["href"] and d["href"].startswith("file://") and d["href"].endswith(f"{d['code']}.md"), d

    # The hover card on the kernel name: from the provider, and rendered in the page.
    assert any(KERNEL in h for h in res["hoverKernel"]), res["hoverKernel"]
    assert seen["hoverVisible"] and KERNEL in seen["hoverText"], seen

    # A rule's quick fix applied through the editor and saved: the file on disk changed.
    assert re.match(r"tritonlens \(TL\d{3}\): ", res["appliedTitle"]), res["appliedTitle"]
    assert res["applied"] and res["saved"] and res["fileChanged"], res
    on_disk = kernel_file.read_text()
    assert on_disk != original and on_disk == res["fileAfter"]

    assert "tritonlens:" in seen["statusBar"], seen
    assert shot.exists() and shot.stat().st_size > 20_000

    # Profile in interpreter mode completes (or the server says clearly that it cannot).
    profile = res["profile"]
    assert isinstance(profile, dict), profile
    if profile.get("ok") is False and "not available" in str(profile.get("error")):
        pytest.xfail(f"profiling engine not installed yet: {profile['error']}")
    assert profile.get("ok") is True, profile
    assert profile["report"]["kernels"], profile
    assert res["report"]["markdown"], res["report"]

