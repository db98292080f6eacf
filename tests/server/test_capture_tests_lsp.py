"""Opening a kernel file with no launch record runs the project's tests that reach it once, records
their launches, and compiles the file again from them (real server over stdio, real pytest run in a
worker under Triton's interpreter, real sm_90 cross-compiles)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import CONFIG, init_params
from lsp_helpers import Doc, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "normpkg"
WAIT = 180  # seconds: the fixture's tests under the interpreter, then two cold compiles, on 2 cores


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("capture") / "normpkg"
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns(".tritonlens", "__pycache__"))
    return root


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient, project):
    lsp_client.init_result = await lsp_client.initialize_session(
        init_params("visual-studio-code", project, {"debounceMs": 20, "compileOnSave": True, "captureTests": True}))
    yield
    await lsp_client.shutdown_session()


async def _until(check, timeout: float = WAIT):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        got = await check()
        if got:
            return got
        if loop.time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.5)


async def test_opening_a_kernel_file_records_its_tests_launches_and_compiles_from_them(client, project):
    kernel_file = project / "src" / "normpkg" / "ops" / "rmsnorm.py"
    records = project / ".tritonlens" / "launches.jsonl"
    assert not records.exists()
    doc = Doc(client, kernel_file).open()
    pos = position_of(doc.text, "_rms_norm_fwd_kernel", "utf-16")

    async def captured_hover():
        hover = await doc.hover(pos.line, pos.character + 3)
        text = hover.contents.value if hover is not None else ""
        return text if records.exists() and "recorded launches" in text else None

    await _until(captured_hover)
    # The card names where its configurations came from; the full report has their values.
    rep = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.report", arguments=[doc.uri, "_rms_norm_fwd_kernel"]))
    md = rep["markdown"]
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert {r["launch"]["kernel"] for r in lines} == {"_rms_norm_fwd_kernel"}
    assert all(r["file"] == "src/normpkg/ops/rmsnorm.py" and r["origin"].startswith("pytest ") for r in lines)
    # The hover's compile section now shows what the tests launched (the helper's 4096-wide tile).
    assert "BLOCK_SIZE=4096" in md and "assumed" not in md.split("Compiled for", 1)[1].split("\n\n")[0]
    assert any(m.type == types.MessageType.Info and "recorded" in m.message for m in client.messages)

    # Once per file per session: a save does not run the tests again.
    before = records.stat().st_mtime_ns
    doc.save()
    await asyncio.sleep(3)
    assert records.stat().st_mtime_ns == before
