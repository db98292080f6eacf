"""Typing that moves lines, through a real client: after range edits inserting and removing
lines (above a kernel, inside one, a top-level comment), the diagnostics are those a fresh open of
the same text gives in a fresh server, field by field. The edited document's server serves
cached kernels' findings moved to their new lines; the fresh server has nothing cached, so what
moved must be exactly what a cold analysis finds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import CONFIG, init_params
from lsp_helpers import Doc
from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from gen_kernels import generate

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def client(module_client):
    """This module's tests share one server per client profile."""
    return module_client


def edit_lines(doc: Doc, line: int, remove: int, insert: str) -> None:
    """Replace `remove` whole lines at `line` with `insert`, as one range edit (columns are 0, so
    the position encoding does not matter)."""
    lines = doc.text.split("\n")
    doc.text = "\n".join(lines[:line] + ([insert[:-1]] if insert else []) + lines[line + remove:])
    doc.version += 1
    rng = types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line + remove, character=0))
    doc.client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version),
        content_changes=[types.TextDocumentContentChangePartial(range=rng, text=insert)]))


def comparable(diags: list[types.Diagnostic], uri: str) -> list:
    out = []
    for d in diags:
        related = [(r.location.uri == uri, r.location.range, r.message) for r in d.related_information or []]
        out.append((d.code, d.severity, d.range, d.message, related, d.data))
    return sorted(out, key=repr)


async def test_line_insertions_give_the_diagnostics_of_a_fresh_open(client, tmp_path):
    text = generate(6)
    path = tmp_path / "typed.py"
    path.write_text(text)
    doc = Doc(client, path).open()
    first = await doc.diagnostics()
    assert any(d.data and d.data.get("fix") for d in first), "the file should carry fixes to move"
    lines = text.split("\n")
    kernel_1 = lines.index("def matmul_1(a_ptr, b_ptr, c_ptr, M, N, K,") - 1  # its decorator
    kernel_4 = next(i for i, ln in enumerate(lines) if ln.startswith("def scale_add_4("))
    edits = [
        (kernel_1, 0, "\n"),  # a blank line above a kernel
        (kernel_1, 0, "# the matmul kernels\n"),  # a top-level comment
        (kernel_4 + 4, 0, "    extra = pid + 1\n"),  # a line typed inside a later kernel
        (kernel_1 + 4, 0, "    unused = 0\n"),  # one inside an earlier kernel: everything below moves
        (kernel_1 + 4, 1, ""),  # and removed again
    ]
    for line, remove, insert in edits:
        edit_lines(doc, line, remove, insert)
        await doc.diagnostics()
    moved = await doc.diagnostics()
    assert doc.text.count("\n") == text.count("\n") + 3

    fresh_path = tmp_path / "fresh.py"
    fresh_path.write_text(doc.text)
    fresh = await CONFIG.start()
    try:
        await fresh.initialize_session(init_params(client.profile_name, tmp_path, {"debounceMs": 20}))
        fresh_doc = Doc(fresh, fresh_path).open()
        cold = await fresh_doc.diagnostics()
        await fresh.shutdown_session()
    finally:
        await fresh.stop()
    assert comparable(moved, doc.uri) == comparable(cold, fresh_doc.uri)
