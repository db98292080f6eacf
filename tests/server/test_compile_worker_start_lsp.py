"""The compile worker starts with the first document that has a kernel, not with the server, and the
compile's progress names the kernels it compiles, not the device helpers they call."""

from __future__ import annotations

import shutil

import pytest_lsp
from conftest import CONFIG, REPO, init_params
from lsp_helpers import Doc
from lsprotocol import types
from pytest_lsp import LanguageClient
from test_worker_idle_lsp import until, workers

FIXTURE = REPO / "tests" / "vscode" / "data" / "fused_gelu_scale.py"


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path):
    lsp_client.init_result = await lsp_client.initialize_session(
        init_params("visual-studio-code", tmp_path, {"debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


def titles(client) -> list[str]:
    return [v[0].title for v in client.progress_reports.values()
            if v and isinstance(v[0], types.WorkDoneProgressBegin)]


def logged(client, text: str) -> bool:
    return any(text in m.message for m in client.log_messages)


async def test_worker_waits_for_a_kernel_and_progress_names_kernels_only(client, tmp_path):
    plain = tmp_path / "plain.py"
    plain.write_text("def add(a, b):\n    return a + b\n")
    await Doc(client, plain).open().diagnostics()
    assert not workers(), "a compile worker started for a window with no Triton file"

    # Unsaved text with kernels cannot compile yet (the harness runs the file on disk), but the
    # worker starts, so that the save pays only for its compile.
    path = tmp_path / FIXTURE.name
    shutil.copy(FIXTURE, path)
    doc = Doc(client, path, FIXTURE.read_text() + "\n# edited\n").open()
    await until(lambda: logged(client, "compile worker ready"), "the worker started for the kernel file")
    starts = [m.message for m in client.log_messages if "compile worker starting" in m.message]
    assert starts == [f"compile worker starting for {path.name}"], starts
    assert workers()
    assert not logged(client, f"compiled {path.name}")

    doc.save()
    await until(lambda: logged(client, f"compiled {path.name} for sm_90"), "the compile after the save")
    (title,) = [t for t in titles(client) if "compiling" in t]
    assert title == "tritonlens: compiling gelu_gate_fwd_kernel, row_shift_kernel for sm_90", title
