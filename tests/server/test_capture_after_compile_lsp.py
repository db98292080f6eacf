"""Opening a kernel file of a project with tests: the file is compiled from its text first, and the
project's tests are run to record launches only once that compile is done. Side by side on two
cores, the tests' worker (importing the project, running its tests) held back the first kernel's
facts by seconds (liger-kernel's rms_norm.py: 7.7-10.7 s instead of 4.3-5.0 s)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import CONFIG, init_params
from lsp_helpers import Doc

PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "normpkg"
WAIT = 180  # seconds: a cold compile, then the fixture's tests under the interpreter, on 2 cores


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path):
    root = tmp_path / "normpkg"
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns(".tritonlens", "__pycache__"))
    lsp_client.init_result = await lsp_client.initialize_session(
        init_params("neovim", root, {"debounceMs": 20, "compileOnSave": True, "captureTests": True}))
    lsp_client.root = root
    yield
    await lsp_client.shutdown_session()


def token(client, title: str):
    return next((t for t, v in client.progress_reports.items()
                 if v and isinstance(v[0], types.WorkDoneProgressBegin) and title in v[0].title), None)


def ended(client, t) -> bool:
    return t is not None and isinstance(client.progress_reports[t][-1], types.WorkDoneProgressEnd)


@pytest.mark.asyncio
async def test_the_tests_are_recorded_once_the_compile_from_the_text_is_done(client):
    Doc(client, client.root / "src" / "normpkg" / "ops" / "rmsnorm.py").open()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    compiled_when_recording = None
    while loop.time() < deadline:
        compiling, recording = token(client, "compiling"), token(client, "recording launches")
        if recording is not None and compiled_when_recording is None:
            # Noted the moment recording shows: the compile must have ended before it began.
            compiled_when_recording = compiling is not None and ended(client, compiling)
        if ended(client, recording):
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError(f"no recording of the tests finished: {list(client.progress_reports.values())}")
    assert compiled_when_recording, "the tests were run while the file's first compile was still running"
