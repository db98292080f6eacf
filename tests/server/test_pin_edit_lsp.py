"""A pin comment edited in place and saved is compiled as it now reads. The kernel under it is the
same text, so the analysis keeps its model from before the edit; the pin must still be read from the
document as it is now (it once read the pin of the text the model was built from, and the save
compiled the old configuration again)."""

from __future__ import annotations

import asyncio
import shutil

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import CONFIG, REPO, init_params
from lsp_helpers import Doc, position_of

FIXTURE = REPO / "tests" / "vscode" / "data" / "row_norm_ops.py"
KERNEL = "_block_row_norm_forward_kernel"
PIN = "# tritonlens: BLOCK_SIZE=256 num_warps=4"
WAIT = 150  # seconds: cold cross-compiles on a busy 2-core machine


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path):
    lsp_client.init_result = await lsp_client.initialize_session(
        init_params("neovim", tmp_path, {"debounceMs": 20, "compileOnSave": True, "select": ["ALL"]}))
    lsp_client.root = tmp_path
    yield
    await lsp_client.shutdown_session()


async def card(doc: Doc) -> str:
    pos = position_of(doc.text, f"def {KERNEL}", doc.encoding)
    hover = await doc.hover(pos.line, pos.character + 5)
    return hover.contents.value if hover is not None else ""


async def until(doc: Doc, want, why: str):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while loop.time() < deadline:
        diags, text = await doc.diagnostics(), await card(doc)
        if want(diags, text):
            return diags, text
        await asyncio.sleep(0.5)
    raise AssertionError(f"timed out waiting for {why}: {[d.message for d in diags]}\n{text}")


@pytest.mark.asyncio
async def test_a_pin_edited_in_place_is_compiled_as_it_now_reads(client):
    path = client.root / FIXTURE.name
    shutil.copy(FIXTURE, path)
    doc = Doc(client, path).open()
    _, before = await until(doc, lambda _, c: "registers" in c and "before the last edit" not in c,
                            "the first compile")
    assert "num_warps=4" in doc.text

    doc.replace(doc.text.replace(PIN, PIN[:-1] + "1"))
    doc.save()
    diags, after = await until(doc, lambda ds, c: any("1 warps" in d.message for d in ds) and "registers" in c,
                               "the compile with num_warps=1")
    (note,) = [d for d in diags if "1 warps" in d.message]
    assert note.code == "TL102" and note.data["kernel"] == KERNEL, note
    assert note.severity != types.DiagnosticSeverity.Error
    assert not note.message.startswith("assuming"), note.message  # pinned, not assumed
    assert after != before
