"""Bad kernels under profiling, through the language server: an infinite loop (killed at the
`timeoutS` setting), a segfault / illegal memory access in the worker, an exception in the
harness, a compile error, memory exhaustion past the worker's address-space limit. Each ends as
a clear error on the kernel (the Profile command's result and a showMessage), the server stays
up, and the next job works."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from rel_client import REPO, LiveServer

pytestmark = pytest.mark.slow
DATA = Path(__file__).parent / "data"
TIMEOUT_S = 15  # includes starting a fresh worker (importing torch) on a busy 2-core runner

# file, kernel, what the error must say
BAD = [
    ("spin_kernel.py", "spin_kernel", f"exceeded {TIMEOUT_S} s; worker killed"),
    ("segfault_kernel.py", "poke_kernel", "SIGSEGV (segmentation fault)"),
    ("raising_harness.py", "fill_kernel", "RuntimeError: the harness is broken on purpose"),
    ("compile_error_kernel.py", "bad_kernel", "arange's range must be a power of 2"),
    ("memory_hog.py", "fill_kernel", "MemoryError"),
]


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # no GPU here: the worker runs the interpreter
    for f in DATA.glob("*.py"):
        shutil.copy(f, tmp_path / f.name)
    shutil.copy(REPO / "examples" / "vector_add.py", tmp_path / "vector_add.py")
    srv = LiveServer("visual-studio-code", tmp_path, {"debounceMs": 0, "timeoutS": TIMEOUT_S})
    yield srv
    srv.close()


def _profile(server: LiveServer, name: str, kernel: str) -> dict:
    uri = (server.root / name).as_uri()
    return server.call(server.client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.profile", arguments=[uri, kernel])), timeout=TIMEOUT_S * 4 + 60)


def _kernel_error(result: dict, kernel: str) -> str:
    report = result.get("report") or {}
    parts = [str((report.get("error") or {}).get("message", "")), str(result.get("error", ""))]
    parts += [str(k.get("error") or "") for k in report.get("kernels") or [] if k.get("name") == kernel]
    return " | ".join(p for p in parts if p)


def test_bad_kernels_give_clear_errors_and_the_next_job_works(server):
    good = _profile(server, "vector_add.py", "add_kernel")
    assert good["ok"], good
    for name, kernel, expected in BAD:
        shown = len(server.client.messages)
        result = _profile(server, name, kernel)
        assert server.alive(), f"the server died on {name}"
        err = _kernel_error(result, kernel)
        assert expected in err, (name, result)
        if name not in ("compile_error_kernel.py", "memory_hog.py"):  # whole-job failures
            assert result["ok"] is False, (name, result)
            msgs = [m.message for m in server.client.messages[shown:]]
            assert any(expected in m for m in msgs), (name, msgs)
        # the next job gets a working worker
        again = _profile(server, "vector_add.py", "add_kernel")
        assert again["ok"] and again["report"]["kernels"][0]["launches"], (name, again)
    # a per-case failure still reaches the editor: the report the server keeps says what failed
    rep = server.call(server.client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.report", arguments=[(server.root / "vector_add.py").as_uri(), "add_kernel"])))
    assert rep["json"]["mode"] == "interpreter"


def test_untrusted_workspace_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    shutil.copy(REPO / "examples" / "vector_add.py", tmp_path / "vector_add.py")
    marker = tmp_path / "ran.txt"
    (tmp_path / "vector_add.py").write_text((tmp_path / "vector_add.py").read_text()
                                            + f"\nopen({str(marker)!r}, 'w').write('ran')\n")
    srv = LiveServer("visual-studio-code", tmp_path, {"trusted": False, "profileOnSave": True, "debounceMs": 0})
    try:
        uri = (tmp_path / "vector_add.py").as_uri()
        assert not [m for m in srv.client.messages if m.type == types.MessageType.Error], srv.client.messages
        for command in ("tritonlens.server.profile", "tritonlens.server.optimize", "tritonlens.server.showIr"):
            res = srv.call(srv.client.workspace_execute_command_async(types.ExecuteCommandParams(
                command=command, arguments=[uri, "add_kernel"])), timeout=60)
            assert res["ok"] is False and "untrusted workspace" in res["error"], (command, res)
        # profile on save is refused too
        srv.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=(tmp_path / "vector_add.py").read_text())))
        srv.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        srv.call(asyncio.sleep(3))
        assert not marker.exists(), "the workspace's code ran in an untrusted workspace"
        assert not srv.client.progress_reports, srv.client.progress_reports
    finally:
        srv.close()
