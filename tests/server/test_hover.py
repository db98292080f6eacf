"""Hover cards: on a kernel name (definition and launch site) and on tl.load / tl.store."""

from __future__ import annotations

import pytest
from lsp_helpers import Doc, position_of
from lsprotocol import types
from test_diagnostics import copy

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def client(module_client):
    """This module's tests share one server per client profile."""
    return module_client


async def test_kernel_card(client, tmp_path):
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    await doc.diagnostics()
    pos = position_of(doc.text, "scale_kernel(x_ptr", doc.encoding)
    h = await doc.hover(pos.line, pos.character + 3)
    md = h.contents.value
    assert h.contents.kind == "markdown"
    assert md.startswith("**scale\\_kernel** · Triton kernel"), md
    assert "**TL001** line" in md  # the top finding in this kernel
    assert len(md.splitlines()) <= 6 and "[Full report](command:tritonlens.showReport?" in md
    assert h.range.start == pos
    # the same card from the launch site
    launch = position_of(doc.text, "scale_kernel[", doc.encoding)
    h2 = await doc.hover(launch.line, launch.character + 1)
    assert h2 is not None and h2.contents.value.startswith("**scale\\_kernel** · Triton kernel")
    # What the card leaves out is in the kernel's full report: the signature, the resolved
    # constexpr per launch site, every finding.
    rep = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.report", arguments=[doc.uri, "scale_kernel"]))
    full = rep["markdown"]
    assert "scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr)" in full
    assert "| the launch at line 17 | 100 | 4 (default) | 3 (default) |" in full
    assert "**TL001**" in full and rep["json"] is None


async def test_memory_access_card(client, tmp_path):
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    await doc.diagnostics()
    pos = position_of(doc.text, "tl.load(", doc.encoding)
    h = await doc.hover(pos.line, pos.character + 4)
    assert h is not None
    md = h.contents.value
    assert md.startswith("**tl.load** in **scale\\_kernel**")
    assert "x_ptr + offs" in md


async def test_no_card_elsewhere(client, tmp_path):
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    await doc.diagnostics()
    pos = position_of(doc.text, "out = torch.empty_like", doc.encoding)
    assert await doc.hover(pos.line, pos.character + 1) is None


async def test_memory_access_card_after_an_edit_above(client, tmp_path):
    """A kernel whose text and lines did not change keeps its cached model, whose nodes point into
    the text it was built from: the card must quote the call from that text, not from the edited
    document at the same byte offsets (the docstring above grew by a few words)."""
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    await doc.diagnostics()
    doc.replace(doc.text.replace("A kernel launched", "A small elementwise kernel, launched", 1))
    await doc.diagnostics()
    pos = position_of(doc.text, "tl.load(", doc.encoding)
    h = await doc.hover(pos.line, pos.character + 4)
    assert h is not None
    md = h.contents.value
    assert md.startswith("**tl.load** in **scale\\_kernel**")
    assert "x = tl.load" not in md and "tl.load(x_ptr + offs, mask=offs < n)" in md
