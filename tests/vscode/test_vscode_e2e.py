"""End to end inside a real VS Code: code-server 4.100.3 (VS Code 1.100) with the packaged .vsix,
driven in headless Chromium. The extension's self test (TRITONLENS_SELFTEST_OUT) acts through the
editor's own API and commands; drive.js checks the rendered hover card and takes the screenshot.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from code_server import API_KEY_ENV, prepare, run_code_server
from vscode_env import OUTPUT, REPO

pytestmark = pytest.mark.slow

EXAMPLE = REPO / "examples" / "vector_add.py"
KERNEL = "add_kernel"
# A second kernel whose finding (TL003: max over lanes padded with 0.0) outlives the first kernel's fix.
SECOND_KERNEL = """

@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.max(x, axis=0))


def row_max(x):
    out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
    row_max_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out
"""


@pytest.fixture
def code_server_env(tmp_path, vsix):
    return prepare(tmp_path, vsix, [EXAMPLE])


@pytest.fixture
def bare_python(tmp_path) -> Path:
    """A Python without tritonlens (a fresh venv of the base interpreter, no site packages)."""
    venv = tmp_path / "bare-venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import tritonlens"], check=False, capture_output=True, cwd=tmp_path)
    assert probe.returncode != 0, "the bare venv must not see tritonlens"
    return python


@pytest.fixture
def fake_install_python(tmp_path, bare_python) -> tuple[Path, Path]:
    """An interpreter that lacks tritonlens until "pip install" runs through it: pip is simulated
    (no package index here) by recording its arguments; after that it is the test's own Python."""
    marker = tmp_path / "pip-args.txt"
    script = tmp_path / "py with space" / "python"
    script.parent.mkdir()
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then printf "%s\\n" "$@" > "{marker}"; exit 0; fi\n'
        f'if [ -f "{marker}" ]; then exec "{sys.executable}" "$@"; fi\n'
        f'exec "{bare_python}" "$@"\n'
    )
    script.chmod(0o755)
    return script, marker


def test_extension_in_code_server(code_server_env, fake_install_python, tmp_path):
    env_ = code_server_env
    OUTPUT.mkdir(parents=True, exist_ok=True)
    result, ui = tmp_path / "selftest.json", tmp_path / "ui.json"
    shot, shot_install = OUTPUT / "vscode-e2e.png", OUTPUT / "vscode-install-prompt.png"
    kernel_file = env_["workspace"] / EXAMPLE.name
    kernel_file.write_text(kernel_file.read_text() + SECOND_KERNEL)
    original = kernel_file.read_text()
    api_key = f"tl-e2e-{os.getpid()}-{time.time_ns()}"
    fake_python, pip_args = fake_install_python
    drive, total_s = run_code_server(
        env_, tmp_path,
        extra_env={
            "TRITONLENS_SELFTEST_OUT": str(result),
            "TRITONLENS_SELFTEST_FILE": str(kernel_file),
            "TRITONLENS_SELFTEST_KERNEL": KERNEL,
            # TL015's fix (a 1024 block) also ends TL009; the second kernel's TL003 stays for the
            # settings and restart steps.
            "TRITONLENS_SELFTEST_FIX_RULE": "TL015",
            "TRITONLENS_SELFTEST_BARE_PYTHON": str(fake_python),
            "TRITON_INTERPRET": "1",  # no GPU here: the profile runs the kernel in Triton's interpreter
        },
        drive_env={"RESULT": str(result), "UI_OUT": str(ui), "SHOT": str(shot), "SHOT_INSTALL": str(shot_install),
                   "KERNEL": KERNEL, "TIMEOUT_MS": "200000", "API_KEY": api_key, "CLICK_INSTALL": "1"},
    )
    phase2, phase3 = Path(str(result) + ".phase2.json"), Path(str(result) + ".phase3.json")
    # Everything a person debugging a failure needs: results, settings and the extension's logs.
    logs = sorted(env_["user"].glob("logs/**/*tritonlens*.log"))
    for f in (result, phase2, phase3, ui, tmp_path / "code-server.log", env_["user"] / "Machine" / "settings.json", *logs):
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
        assert d["href"], d
        assert d["href"].startswith("file://"), d
        assert d["href"].endswith(f"{d['code']}.md"), d
    assert res["ruleDoc"] == diags[0]["href"], res.get("ruleDoc")

    # The hover card on the kernel name: from the provider, and rendered in the page.
    # (the provider's markdown escapes the name's underscores; the page renders them)
    assert any(KERNEL.replace("_", "\\_") in h for h in res["hoverKernel"]), res["hoverKernel"]
    assert seen["hoverVisible"], seen
    assert KERNEL in seen["hoverText"], seen

    # A rule's quick fix, previewed in a diff editor, then applied through the editor and saved.
    assert res["appliedTitle"].startswith("tritonlens (TL015): "), res["appliedTitle"]
    assert res["preview"]["diffTabOpen"], res["preview"]
    assert res["preview"]["title"] == res["appliedTitle"], res["preview"]
    assert res["applied"], res
    assert res["saved"], res
    assert res["fileChanged"], res
    on_disk = kernel_file.read_text()
    assert on_disk != original
    assert on_disk == res["fileAfter"]
    assert res["preview"]["after"] == on_disk, "the preview shows exactly what the fix does"

    # Settings reach the running server without a restart; the restart command starts a new one.
    assert res["configChange"] == {"ignored": res["diagnosticsAfter"][0]["code"], "hidden": True,
                                   "sameServer": True, "shownAgain": True}, res["configChange"]
    assert res["restart"] == {"newServer": True, "diagnosticsBack": True}, res["restart"]

    # Backend and device: the target GPU until a profile ran, then the device it ran on.
    # No device before the first profile names one: the estimates' target GPU is not shown as one.
    assert "tritonlens: local · profiling" in res["statusDuringProfile"], res["statusDuringProfile"]
    assert "tritonlens: local · cpu (triton interpreter)" in seen["statusBar"], seen
    assert shot.exists()
    assert shot.stat().st_size > 20_000

    # The output channel carries the client's notes and the server's log.
    channel = OUTPUT / "1-tritonlens.log"
    assert channel.exists(), sorted(p.name for p in OUTPUT.iterdir())
    log_text = channel.read_text()
    assert f"[client] interpreter: {sys.executable} (from setting)" in log_text, log_text[-3000:]
    assert "initializing for code-server" in log_text, log_text[-3000:]
    # The server's $/progress appears as VS Code progress while profiling and optimizing.
    # The page is sampled every ~200 ms: an interpreter-mode profile on a warm worker can begin and
    # end between two samples, while optimizing lasts seconds. Either one shows the path works;
    # the profile's running work is checked through the status bar just below.
    assert any(t.startswith(("tritonlens: profiling", "tritonlens: optimizing")) for t in seen["progressSeen"]), \
        seen["progressSeen"]
    # Running work shows in the status bar.
    assert "profiling add_kernel" in (res.get("statusDuringProfile") or ""), res.get("statusDuringProfile")

    # The API key typed into "Set LLM API key" reaches the restarted server's environment under the
    # configured name; it is in no settings file and not on the command line.
    missing = json.loads(phase2.read_text())
    assert missing.get("apiKey") == {"envName": API_KEY_ENV, "value": api_key, "inCommandLine": False}, missing
    for f in env_["user"].rglob("*.json"):
        assert api_key not in f.read_text(errors="replace"), f

    # No tritonlens in the chosen Python: no server, and the exact pip command with an Install button.
    pip = f"'{fake_python}' -m pip install 'tritonlens[all]'"  # the path has a space: quoted
    assert missing["interpreter"] == {"path": str(fake_python), "source": "setting"}, missing
    assert missing["check"]["reason"] == "not-installed", missing
    assert missing["serverRunning"] is False, missing
    assert "not installed" in missing["statusText"], missing
    assert pip in seen["installToast"], seen
    assert "Install" in seen["installButtons"], seen
    # Install ran that command in a terminal (the shell's quoting gave pip exactly these arguments),
    # and the server started once it succeeded.
    assert pip_args.read_text().split("\n")[:5] == ["-m", "pip", "install", "tritonlens[all]", ""], pip_args.read_text()
    installed = json.loads(phase3.read_text())
    assert installed["serverRunning"] is True, installed
    assert installed["check"]["ok"] is True, installed
    assert "not installed" not in installed["statusText"], installed

    # TTIR of the kernel in a virtual document, the lines of the source's tl.load highlighted.
    ir = res["showIr"]
    assert isinstance(ir, dict), ir
    assert ir.get("visible"), ir
    assert ir["line"] == ir["loadLine"], ir
    assert ir["marked"], ir
    assert all(0 <= n < ir["lineCount"] for n in ir["marked"]), ir
    assert any("tt.load" in t for t in ir["markedText"]), ir

    # Profile in interpreter mode completes.
    profile = res["profile"]
    assert isinstance(profile, dict), profile
    assert profile.get("ok") is True, profile
    assert profile["report"]["mode"] == "interpreter", profile
    assert [k["name"] for k in profile["report"]["kernels"]] == [KERNEL], profile
    assert res["report"]["markdown"].startswith("# Profile of vector_add.py"), res["report"]

    # Optimize in interpreter mode: candidates proposed and verified for correctness (no timing).
    opt = res["optimize"]
    assert opt["ok"] is True, opt
    assert opt["mode"] == "interpreter", opt
    assert any(c["accepted"] for c in opt["candidates"]), opt
    # Rewrite quick fixes, once the server offers them, come with a working "Preview: …" action.
    if any(t.startswith("Preview: ") for t in res["rewriteActions"]):
        assert res["rewritePreview"]["changed"], res["rewritePreview"]
        assert res["rewritePreview"]["evidence"], res["rewritePreview"]


def test_untrusted_workspace(code_server_env, tmp_path):
    """Trust denied in the real dialog: analysis only; profile/optimize refused before the server."""
    env_ = code_server_env
    OUTPUT.mkdir(parents=True, exist_ok=True)
    settings = env_["user"] / "User" / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "security.workspace.trust.enabled": True}))
    result, ui, shot = tmp_path / "untrusted.json", tmp_path / "ui-untrusted.json", OUTPUT / "vscode-untrusted.png"
    kernel_file = env_["workspace"] / EXAMPLE.name
    # A folder that tries to run code when the server starts: a package shadowing tritonlens.
    pwned = tmp_path / "pwned"
    (env_["workspace"] / "tritonlens").mkdir()
    (env_["workspace"] / "tritonlens" / "__init__.py").write_text(
        f"open({str(pwned)!r}, 'w').write('imported from the untrusted folder')\n")
    drive, _ = run_code_server(
        env_, tmp_path, trust=True,
        extra_env={"TRITONLENS_SELFTEST_OUT": str(result), "TRITONLENS_SELFTEST_FILE": str(kernel_file)},
        drive_env={"RESULT": str(result), "UI_OUT": str(ui), "SHOT": str(shot), "TRUST": "deny", "TIMEOUT_MS": "120000"},
    )
    for f in (result, ui):
        if f.exists():
            shutil.copy(f, OUTPUT / f.name)
    assert drive.returncode == 0, drive.stdout + drive.stderr
    res = json.loads(result.read_text())
    assert "error" not in res, res["error"]
    assert res["trusted"] is False
    # The user-level interpreter setting still applies (only workspace values are restricted).
    assert res["interpreter"] == {"path": sys.executable, "source": "setting"}, res
    assert res["serverRunning"], res
    assert res["serverConfig"]["trusted"] is False, res["serverConfig"]
    assert res["serverConfig"]["profileOnSave"] is False, res["serverConfig"]
    assert res["serverConfig"]["compileOnSave"] is False, res["serverConfig"]
    assert res["diagnostics"], "static analysis still runs in restricted mode"
    for key in ("profile", "optimize"):
        assert "trust the workspace" in res[key]["error"], res[key]
    assert res["serverProfile"] is None, res["serverProfile"]
    assert res["fileUnchanged"]
    assert not pwned.exists(), "the untrusted folder's tritonlens/ was imported"
    assert res["serverProcesses"], res
    for p in res["serverProcesses"]:
        assert p["cwd"] != str(env_["workspace"]), p
        assert p["safePath"] == "1", p
    assert "(restricted)" in res["statusText"], res["statusText"]
