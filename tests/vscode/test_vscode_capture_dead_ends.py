"""VS Code (code-server in Chromium) on a project whose conftest imports a module the server's
Python lacks, while the project's own .venv has it (a venv made here with --system-site-packages,
the server's packages through a .pth, and a tiny local package pip-installed into it with
--no-index). The capture's warning names the module; its "Set tritonlens.python" button writes the
setting; the launches are then recorded with that interpreter and Profile runs on the CPU.
Screenshots: tests/output/vscode/dead_ends/.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from code_server import prepare, run_code_server
from vscode_env import OUTPUT

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "normpkg"
MODULE = "tl_e2e_dep"
SHOTS = OUTPUT / "dead_ends"


def local_wheel(folder: Path) -> Path:
    """A one-module wheel of MODULE, written by hand (no build backend needed)."""
    folder.mkdir(parents=True)
    wheel = folder / f"{MODULE}-1.0-py3-none-any.whl"
    info = f"{MODULE}-1.0.dist-info"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"{MODULE}.py", "VALUE = 1\n")
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {MODULE}\nVersion: 1.0\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return wheel


def project_venv(root: Path, wheels: Path) -> Path:
    venv = root / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python*/site-packages"))
    # The server's python is itself a venv: its packages (torch, triton) reach the new one this way.
    (site / "server_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index",
                    "--find-links", str(wheels), MODULE], check=True, capture_output=True)
    return python


@pytest.fixture(scope="module")
def seen(tmp_path_factory, vsix) -> dict:
    root = tmp_path_factory.mktemp("dead_ends")
    env_ = prepare(root, vsix, [])
    ws = env_["workspace"]
    shutil.copytree(PROJECT, ws, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".tritonlens", "__pycache__"))
    (ws / "tests" / "conftest.py").write_text(f"import {MODULE}  # the project's environment has it\n")
    python = project_venv(ws, local_wheel(root / "wheels"))
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    ui = root / "ui.json"
    drive, _ = run_code_server(env_, root, driver="drive_dead_ends.js", timeout=560, extra_env={}, drive_env={
        "UI_OUT": str(ui), "SHOTS": str(SHOTS), "FILE": "rmsnorm.py", "MODULE": MODULE, "WAIT_MS": "240000"})
    for f in (ui, root / "code-server.log"):
        if f.exists():
            shutil.copy(f, SHOTS / f.name)
    assert drive.returncode == 0, drive.stdout + drive.stderr
    out = json.loads(ui.read_text())
    settings = ws / ".vscode" / "settings.json"
    out["settings"] = json.loads(settings.read_text()) if settings.exists() else {}
    out["python"] = str(python)
    out["records"] = (ws / ".tritonlens" / "launches.jsonl").exists()
    return out


def test_the_warning_names_the_missing_module_and_no_doubled_prefix(seen):
    warning = next(t for t in seen["toasts"] if MODULE in t)
    assert "tritonlens: tritonlens:" not in warning and "Error" not in warning.split(":")[1], warning


def test_the_button_sets_tritonlens_python_for_the_workspace(seen):
    assert seen["settings"].get("tritonlens.python") == seen["python"], seen["settings"]


def test_profile_then_runs_from_the_recorded_launches(seen):
    assert seen["records"]
    assert any("ran in the interpreter" in lens for lens in seen["lenses"]), seen["lenses"]
