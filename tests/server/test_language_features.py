"""Language features end to end over stdio (VS Code and Neovim capability profiles): completion,
signature help, inlay hints, hover on Triton API names and on kernel variables, document symbols."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from lsp_helpers import Doc, position_of

DATA = Path(__file__).parent / "data" / "language_features.py"


async def _open(client, text: str | None = None) -> Doc:
    path = client.root / "kernels.py"
    path.write_text(text if text is not None else DATA.read_text())
    doc = Doc(client, path).open()
    await doc.diagnostics()
    return doc


def _at(doc: Doc, needle: str, offset: int = 0, nth: int = 0) -> types.Position:
    p = position_of(doc.text, needle, doc.encoding, nth)
    return types.Position(line=p.line, character=p.character + offset)


def _ident(doc):
    return types.TextDocumentIdentifier(uri=doc.uri)


def _value(hover) -> str:
    assert hover is not None
    c = hover.contents
    return c.value if hasattr(c, "value") else str(c)


async def test_completion_after_tl_dot(client):
    text = DATA.read_text().replace("    row = tl.sum(acc, axis=1)\n", "    row = tl.su\n")
    doc = await _open(client, text)
    pos = _at(doc, "tl.su\n", len("tl.su"))
    got = await client.text_document_completion_async(types.CompletionParams(text_document=_ident(doc), position=pos))
    items = {i.label: i for i in got.items}
    assert {"sum", "load", "store", "dot", "arange", "float16"} <= set(items)
    assert items["sum"].detail == "tl.sum(input, axis=None, keep_dims=False, dtype=None)"
    assert "Triton 3.9" in items["sum"].documentation.value
    assert "maximum" in items and "advance" not in items  # tl.advance is gone from 3.9's namespace


async def test_completion_libdevice_triton_and_keywords(client):
    doc = await _open(client, DATA.read_text().replace("    y = libdevice.exp(acc)\n", "    y = libdevice.\n"))
    got = await client.text_document_completion_async(types.CompletionParams(
        text_document=_ident(doc), position=_at(doc, "libdevice.\n", len("libdevice."))))
    assert {"exp", "rsqrt", "fast_expf"} <= {i.label for i in got.items}

    doc2 = await _open(client, DATA.read_text().replace("mask=mask, other=0.0)\n    acc", "mask=mask, )\n    acc"))
    got = await client.text_document_completion_async(types.CompletionParams(
        text_document=_ident(doc2), position=_at(doc2, "mask=mask, )", len("mask=mask, "))))
    labels = {i.label for i in got.items}
    assert {"other=", "cache_modifier=", "eviction_policy="} <= labels and "mask=" not in labels
    assert {"BLOCK_M", "BLOCK_N"} <= labels  # constexpr parameters of the kernel

    got = await client.text_document_completion_async(types.CompletionParams(
        text_document=_ident(doc2), position=_at(doc2, "Config({", len("Config({"))))
    assert {'"BLOCK_M"', '"BLOCK_N"'} <= {i.label for i in got.items}
    got = await client.text_document_completion_async(types.CompletionParams(
        text_document=_ident(doc2), position=_at(doc2, "triton.Config", len("triton."))))
    items = {i.label: i for i in got.items}
    assert {"jit", "autotune", "Config", "cdiv", "heuristics", "testing"} <= set(items)
    assert "num_warps=4" in items["Config"].detail


async def test_signature_help_tl_and_jit_helper(client):
    doc = await _open(client)
    pos = _at(doc, "mask=mask, other=0.0)", len("mask=mask, oth"))
    got = await client.text_document_signature_help_async(types.SignatureHelpParams(text_document=_ident(doc), position=pos))
    sig = got.signatures[0]
    assert sig.label.startswith("tl.load(pointer, mask=None, other=None")
    start, end = sig.parameters[got.active_parameter].label
    assert sig.label[start:end] == "other=None"

    pos = _at(doc, "_scale(x.to(tl.float32), 2)", len("_scale(x.to(tl.float32), "))
    got = await client.text_document_signature_help_async(types.SignatureHelpParams(text_document=_ident(doc), position=pos))
    sig = got.signatures[0]
    assert sig.label == "_scale(x, FACTOR: tl.constexpr)"
    start, end = sig.parameters[got.active_parameter].label
    assert sig.label[start:end] == "FACTOR: tl.constexpr"


async def test_inlay_hints_shapes_and_constexprs(client):
    doc = await _open(client)
    n = len(doc.text.split("\n"))
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=_ident(doc), range=types.Range(start=types.Position(line=0, character=0),
                                                     end=types.Position(line=n, character=0))))
    lines = doc.text.split("\n")
    by_var = {}
    for h in hints:
        label = h.label if isinstance(h.label, str) else "".join(p.value for p in h.label)
        word = lines[h.position.line][:h.position.character].split()[-1]
        by_var[word] = label
    assert by_var["offs_n"] == ": [64] int32"  # the same in both autotune configs
    assert by_var["offs_m"] == ": [BLOCK_M] int32"  # 64 or 128: shown symbolically
    assert by_var["mask"] == ": [BLOCK_M, 64] int1"
    assert by_var["acc"] == ": [BLOCK_M, 64] fp32"  # through the @triton.jit helper
    assert by_var["row"] == ": [BLOCK_M] fp32"
    at = {(h.position.line, h.position.character): (h.label if isinstance(h.label, str) else "") for h in hints}
    assert at[_tuple(_at(doc, "BLOCK_M: tl.constexpr", len("BLOCK_M: tl.constexpr")))] == " = 64 | 128"
    assert at[_tuple(_at(doc, "BLOCK_N: tl.constexpr", len("BLOCK_N: tl.constexpr")))] == " = 64"



async def test_no_inlay_hint_on_an_annotated_constexpr_local(client):
    """`HALF: tl.constexpr = 0.5` states its value and type; a hint after the name would repeat them
    and split the name from its annotation. The plain assignment beside it keeps its hint."""
    doc = await _open(client, (
        "import triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef halve_kernel(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    HALF: tl.constexpr = 0.5\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * HALF, mask=offs < n)\n\n\n"
        "def halve(x):\n    halve_kernel[(1,)](x, x.numel(), BLOCK=128)\n"))
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=_ident(doc), range=types.Range(start=types.Position(line=0, character=0),
                                                     end=types.Position(line=14, character=0))))
    lines = {h.position.line for h in hints}
    assert _at(doc, "offs =").line in lines
    assert _at(doc, "HALF:").line not in lines

def _tuple(p):
    return p.line, p.character


async def _hints_until(client, doc, shown: bool) -> list[types.InlayHint]:
    """Inlay hints once the last setting took effect (a notification: it may land after the next request)."""
    rng = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=40, character=0))
    for _ in range(100):
        hints = await client.text_document_inlay_hint_async(types.InlayHintParams(text_document=_ident(doc), range=rng))
        if bool(hints) == shown:
            break
        await asyncio.sleep(0.05)
    return hints


def _set_inlay_hints(client, on: bool) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"tritonlens": {"inlayHints": on}}))


async def test_inlay_hints_off_by_setting(client):
    doc = await _open(client)
    hints = await _hints_until(client, doc, shown=True)
    assert ": [BLOCK_M, 64] fp32" in [h.label for h in hints]
    refreshes = client.inlay_refreshes
    _set_inlay_hints(client, False)
    assert not await _hints_until(client, doc, shown=False)
    _set_inlay_hints(client, True)
    hints = await _hints_until(client, doc, shown=True)
    assert ": [BLOCK_M, 64] fp32" in [h.label for h in hints]
    if client.profile_name == "neovim":  # it supports workspace/inlayHint/refresh: asked on each change
        for _ in range(100):
            if client.inlay_refreshes >= refreshes + 2:
                break
            await asyncio.sleep(0.05)
        assert client.inlay_refreshes >= refreshes + 2


async def test_hover_api_and_variables(client):
    doc = await _open(client)
    got = await doc.hover(*_pos(doc, "tl.arange", 4))
    text = _value(got)
    assert "tl.arange(start, end)" in text and "Triton 3.9" in text
    text = _value(await doc.hover(*_pos(doc, "libdevice.exp", len("libdevice.e"))))
    assert "libdevice.exp(arg0)" in text
    text = _value(await doc.hover(*_pos(doc, "triton.cdiv", len("triton.c"))))
    assert "triton.cdiv(x, y)" in text
    # a tl.load keeps the server's access card and gains the API section
    text = _value(await doc.hover(*_pos(doc, "tl.load", 4)))
    assert "tl.load(pointer, mask=None" in text
    # a variable: its shape per configuration
    text = _value(await doc.hover(*_pos(doc, "row = ", 0)))
    assert "`[BLOCK_M] fp32`" in text and "`[64] fp32`" in text and "`[128] fp32`" in text
    assert "autotune config #2" in text


def _pos(doc, needle, offset):
    p = _at(doc, needle, offset)
    return p.line, p.character


async def test_document_symbols(client):
    doc = await _open(client)
    got = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=_ident(doc)))
    names = [s.name for s in got]
    assert names == ["_scale", "tile_kernel", "tile"]
    if isinstance(got[0], types.DocumentSymbol):
        kernel = got[1]
        assert "autotuned" in kernel.detail
        assert [c.name for c in kernel.children] == ["tile_kernel[…](…)"]
        assert got[2].detail == "launches tile_kernel"
    else:
        assert any(s.container_name == "tile_kernel" for s in got)
