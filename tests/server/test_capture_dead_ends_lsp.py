"""Capture and profile dead ends, through a real server over stdio: a capture whose conftest imports
a module the server's interpreter lacks says its cause once, as a message with buttons (the
project's own environment, which has the module, offered as tritonlens.python); setting it runs the
capture again with that interpreter; a kernel file no test reaches gets buttons at Profile instead
of a command-line hint."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import CONFIG, init_params
from lsp_helpers import Doc

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "normpkg"
MISSING = "tl_dead_end_dep"  # provided by the project's .venv only
WAIT = 180


def project_venv(root: Path) -> Path:
    """root/.venv: the server's packages visible through a .pth, plus the module it lacks."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    site = next((root / ".venv" / "lib").glob("python*/site-packages"))
    (site / "server_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (site / f"{MISSING}.py").write_text("VALUE = 1\n")
    return root / ".venv" / "bin" / "python"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dead_ends") / "normpkg"
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns(".tritonlens", "__pycache__"))
    (root / "tests" / "conftest.py").write_text(f"import {MISSING}  # the project's environment has it\n")
    project_venv(root)
    return root


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient, project):
    lsp_client.asked = []  # (params, the title answered)
    lsp_client.answer = {}  # message substring -> title to pick

    @lsp_client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def _ask(params: types.ShowMessageRequestParams):
        pick = next((t for key, t in lsp_client.answer.items() if key in params.message), None)
        lsp_client.asked.append((params, pick))
        return types.MessageActionItem(title=pick) if pick else None

    params = init_params("visual-studio-code", project, {"debounceMs": 20, "compileOnSave": False,
                                                         "captureTests": True})
    params.capabilities.experimental = {"tritonlens": {"messageCommands": True}}
    lsp_client.init_result = await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def _until(check, timeout: float = WAIT):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (got := check()):
        if loop.time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.3)
    return got


def _asked(client, needle: str):
    return [p for p, _ in client.asked if needle in p.message]


async def test_a_capture_missing_a_module_says_so_once_and_offers_the_projects_environment(client, project):
    kernel_file = project / "src" / "normpkg" / "ops" / "rmsnorm.py"
    doc = Doc(client, kernel_file).open()
    await _until(lambda: _asked(client, "rmsnorm.py"))
    [notice] = _asked(client, "rmsnorm.py")
    assert notice.type == types.MessageType.Warning
    assert MISSING in notice.message, notice.message
    assert "tritonlens: tritonlens:" not in notice.message and "Error:" not in notice.message, notice.message
    titles = [a.title for a in notice.actions]
    assert titles[0] == "Set tritonlens.python" and "Open log" in titles, titles
    venv_python = str(project / ".venv" / "bin" / "python")
    assert venv_python in notice.message
    # Once per file per session: a save does not say it again.
    doc.save()
    await asyncio.sleep(3)
    assert len(_asked(client, "rmsnorm.py")) == 1

    # What the button writes: the server captures again, with that interpreter, and records.
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"tritonlens": {"debounceMs": 20, "compileOnSave": False, "captureTests": True,
                                 "python": venv_python}}))
    records = project / ".tritonlens" / "launches.jsonl"
    await _until(lambda: records.exists() and any("recorded" in m.message for m in client.messages))
    recorded = [m.message for m in client.messages if "recorded" in m.message]
    assert recorded[0].startswith("tritonlens: recorded ") and "tritonlens: tritonlens:" not in recorded[0]


async def test_profile_of_a_file_no_test_reaches_offers_its_ways_out(client, project):
    lone = project / "src" / "normpkg" / "ops" / "lone.py"
    lone.write_text((project / "src" / "normpkg" / "ops" / "rmsnorm.py").read_text())
    doc = Doc(client, lone).open()
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.profile", arguments=[doc.uri, "_rms_norm_fwd_kernel"]))
    assert result["ok"] is False and "no recorded launch reaches it" in result["error"], result
    await _until(lambda: _asked(client, "Nothing to profile"))
    [notice] = _asked(client, "Nothing to profile")
    assert "tritonlens capture" not in notice.message, notice.message  # a button, not a CLI to find
    titles = [a.title for a in notice.actions]
    assert titles == ["Pick a harness", "Record a command"], titles


async def test_a_recorded_command_that_fails_says_its_cause_and_the_server_command_runs_it(client, project):
    lone = project / "src" / "normpkg" / "ops" / "lone.py"
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.captureCommand", arguments=[lone.as_uri(), "python -c pass"]))
    assert result["ok"] is False and result["error"].startswith("`python -c pass`"), result
    await _until(lambda: _asked(client, "lone.py: nothing recorded"))
    [notice] = _asked(client, "lone.py: nothing recorded")
    assert [a.title for a in notice.actions][:2] == ["Pick a harness", "Record a command"]
