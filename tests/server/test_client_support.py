"""The client's capabilities, resolved once at initialize, drive what the server sends: a client
that reads only plain text gets plain-text hovers, completion and signature docs; one without
related-information support gets diagnostics without it."""

from __future__ import annotations

import attrs
import pytest_lsp
from conftest import CONFIG
from lsp_helpers import Doc, position_of
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from test_diagnostics import copy

PLAIN = [types.MarkupKind.PlainText]


def plaintext_capabilities() -> types.ClientCapabilities:
    """Neovim's capabilities, with markdown taken out of every documentation format and
    related information switched off."""
    caps = client_capabilities("neovim")
    td = caps.text_document
    item = attrs.evolve(td.completion.completion_item, documentation_format=PLAIN)
    sig = attrs.evolve(td.signature_help.signature_information, documentation_format=PLAIN)
    td = attrs.evolve(
        td,
        hover=attrs.evolve(td.hover, content_format=PLAIN),
        completion=attrs.evolve(td.completion, completion_item=item),
        signature_help=attrs.evolve(td.signature_help, signature_information=sig),
        publish_diagnostics=attrs.evolve(td.publish_diagnostics, related_information=False),
    )
    return attrs.evolve(caps, text_document=td)


@pytest_lsp.fixture(config=CONFIG)
async def plain_client(lsp_client: LanguageClient, tmp_path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=plaintext_capabilities(), root_uri=tmp_path.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name=tmp_path.name)],
        initialization_options={"debounceMs": 20}))
    lsp_client.root = tmp_path
    yield
    await lsp_client.shutdown_session()


async def test_plaintext_client_gets_plaintext(plain_client, tmp_path):
    doc = Doc(plain_client, copy(tmp_path, "scale.py")).open()
    diags = [d for d in await doc.diagnostics() if d.code == "TL001"]
    assert diags and not diags[0].related_information  # the markdown client gets the launch site

    pos = position_of(doc.text, "scale_kernel(x_ptr", doc.encoding)
    hover = await doc.hover(pos.line, pos.character + 3)
    assert hover.contents.kind == types.MarkupKind.PlainText
    assert hover.contents.value.startswith("scale_kernel · Triton kernel\n")
    assert "```" not in hover.contents.value and "**" not in hover.contents.value and "\\_" not in hover.contents.value

    pos = position_of(doc.text, "tl.load(", doc.encoding)
    got = await plain_client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri),
        position=types.Position(line=pos.line, character=pos.character + len("tl."))))
    load = next(i for i in got.items if i.label == "load")
    assert load.documentation.kind == types.MarkupKind.PlainText
    assert "_Triton" not in load.documentation.value and "Triton" in load.documentation.value

    pos = position_of(doc.text, "tl.load(", doc.encoding)
    sig = await plain_client.text_document_signature_help_async(types.SignatureHelpParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri),
        position=types.Position(line=pos.line, character=pos.character + len("tl.load("))))
    assert sig.signatures[0].documentation.kind == types.MarkupKind.PlainText


def test_plain_keeps_names_and_drops_markdown():
    from server.markup import plain

    md = "### `k` in `x_ptr`\n\n```python\nk(x_ptr, BLOCK_M: tl.constexpr)\n```\n\n---\n\n**Findings**: _Triton 3.9 (snapshot)_"
    assert plain(md) == "k in x_ptr\n\nk(x_ptr, BLOCK_M: tl.constexpr)\n\nFindings: Triton 3.9 (snapshot)"
