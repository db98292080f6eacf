"""A pin comment read by the language server as `tritonlens compile` reads it: a compile finding
from assumed values arrives as a hint that names them and offers the pin as a quick fix; applying
it and saving recompiles with the pinned values, and the finding no longer rests on a guess."""

from __future__ import annotations

import asyncio

import pytest
from lsp_helpers import Doc, position_of
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_OPTIONS = {"select": ["ALL"]}  # the compile rules are off by default

TEXT = '''import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, bound, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < bound)
    tl.store(out_ptr + offs, x * 2, mask=offs < bound)


def scale(x, out, BLOCK):
    scale_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, out, x.numel(), BLOCK=BLOCK)
'''
WAIT = 150  # seconds: a cold cross-compile on a busy 2-core machine


@pytest.fixture(scope="module")
def client(module_client):
    return module_client


async def _compile_finding(doc: Doc, deadline: float):
    loop = asyncio.get_running_loop()
    while loop.time() < deadline:
        found = [d for d in await doc.diagnostics() if str(d.code).startswith("TL10")]
        if found:
            return found
        await asyncio.sleep(1)
    raise AssertionError("no compile finding arrived")


async def _card(doc: Doc) -> str:
    pos = position_of(doc.text, "def scale_kernel", doc.encoding)
    hover = await doc.hover(pos.line, pos.character + 6)
    return hover.contents.value if hover is not None else ""


async def test_the_pin_a_hint_offers_is_honoured_by_the_server_after_a_save(client, tmp_path):
    path = tmp_path / "scale.py"
    path.write_text(TEXT)
    doc = Doc(client, path).open()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    found = await _compile_finding(doc, deadline)
    hint = next(d for d in found if d.message.startswith("assuming BLOCK=1024"))
    assert hint.severity is not None and hint.severity.value >= 2, hint  # never an error
    actions = await doc.code_actions([hint])
    pin = next(a for a in actions if "pin BLOCK=1024 above the kernel" in a.title)
    text = doc.apply(pin.edit if pin.edit is not None else await doc.resolved_edit(pin))
    assert "# tritonlens: BLOCK=1024\n@triton.jit\ndef scale_kernel" in text
    doc.save()
    while loop.time() < deadline:  # the recompile after the save: the same fact, no longer a guess
        found = [d for d in await doc.diagnostics() if str(d.code).startswith("TL10")]
        card = await _card(doc)
        if found and not any(d.message.startswith("assuming") for d in found) and "registers" in card:
            break
        await asyncio.sleep(1)
    else:
        raise AssertionError(f"the pin was not honoured: {[d.message for d in found]}")
    assert "assumed BLOCK" not in card, card
    assert "pinned BLOCK=1024" in card, card  # the card says the value is the user's, not the text's
    # The compile's pointers were fp32 stand-ins: type hints do not present them as what the tensors are.
    line = position_of(doc.text, "x = tl.load(", doc.encoding).line
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri),
        range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line + 1, character=0))))
    labels = [h.label if isinstance(h.label, str) else "".join(p.value for p in h.label) for h in hints or []]
    assert labels and not any("fp32" in lb for lb in labels), labels
