"""The server's workers exit when idle and come back for the next job: a real server with a short
idle limit, its real compile worker, and a save after the worker has gone."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest_lsp
from conftest import REPO, SERVER, init_params, make_client
from lsp_helpers import Doc
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

IDLE_S = 2
CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client,
                            server_env={**os.environ, "TRITONLENS_WORKER_IDLE_S": str(IDLE_S)})


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path):
    lsp_client.init_result = await lsp_client.initialize_session(
        init_params("visual-studio-code", tmp_path, {"debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def workers() -> set[int]:
    """The worker processes of this test's server (the server is this process's child)."""
    servers = [p for p in children(os.getpid()) if "tritonlens serve" in cmdline(p)]
    return {w for s in servers for w in children(s) if "worker_main.py" in cmdline(w)}


async def until(predicate, what: str, timeout: float = 180) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


def compiled_logs(client) -> list[str]:
    return [m.message for m in client.log_messages if "compiled vector_add.py for sm_90" in m.message]


async def test_an_idle_compile_worker_exits_and_the_next_save_compiles(client, tmp_path):
    path = tmp_path / "vector_add.py"
    shutil.copy(REPO / "examples" / "vector_add.py", path)
    doc = Doc(client, path).open()
    await until(lambda: compiled_logs(client), "the compile on open")
    first = workers()
    assert first, "no worker compiled the file"
    await until(lambda: not workers(), f"the workers to exit after {IDLE_S} s idle")

    # A new specialisation needs a compile: a new worker runs it.
    doc.replace(doc.text.replace("BLOCK_SIZE = 64", "BLOCK_SIZE = 128"))
    doc.save()
    seen: set[int] = set()

    def compiled_again() -> bool:
        seen.update(workers())
        return len(compiled_logs(client)) >= 2

    await until(compiled_again, "the compile after the save")
    again = compiled_logs(client)[-1]
    assert "(cached)" not in again and "error" not in again, again
    assert seen and not seen & first, (seen, first)
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri)))
