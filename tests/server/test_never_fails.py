"""The server never fails a request an editor sends in the background, on any text.

Mid-edit text is broken most of the time; every request (hints, hover, lenses, symbols,
completion, signature help, resolve) gets an answer, never an error the editor shows as a toast.
A handler that does fail answers with what is known and logs why.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from conftest import CONFIG
from lsp_helpers import Doc, pulls
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

pytestmark = pytest.mark.asyncio(loop_scope="module")

DATA = Path(__file__).parent / "data"
SCALE = (DATA / "scale.py").read_text()
LOAD = "    x = tl.load(x_ptr + offs, mask=offs < n)\n"

BROKEN = {
    # a stray character typed after a subscript's closing bracket
    "stray_after_none": SCALE.replace(LOAD, LOAD + "    y = x[:, None]q\n    z = y * 2\n"),
    "unterminated_brackets": SCALE.replace(LOAD, LOAD + "    y = tl.where(x > 0, (x, [1, 2\n"),
    "lone_decorator": SCALE + "\n\n@triton.jit\n",
    "tl_dot_at_eof": SCALE + "\n\n@triton.jit\ndef half_kernel(x_ptr):\n    a = tl.",
    "tl_dot_mid_kernel": SCALE.replace(LOAD, LOAD + "    w = tl.\n"),
    "unterminated_string": SCALE.replace(LOAD, LOAD + '    s = "abc\n'),
}

# Nested far deeper than Python's recursion limit: the shape interpreter's recursion fails on it.
DEEP = SCALE.replace(LOAD, LOAD + "    y = " + "(" * 1500 + "x" + ")" * 1500 + "\n")

GUARD_LOG = "answered with"


@pytest.fixture(scope="module")
def client(module_client):
    return module_client


def guard_logs(client, since: int) -> list[str]:
    return [m.message for m in client.log_messages[since:] if GUARD_LOG in m.message]


def whole(doc: Doc) -> types.Range:
    lines = doc.text.split("\n")
    return types.Range(start=types.Position(line=0, character=0),
                       end=types.Position(line=len(lines) - 1, character=len(lines[-1])))


async def every_request(doc: Doc) -> dict[str, object]:
    """Each background request an editor sends for a document, at every line of it."""
    c, ident = doc.client, types.TextDocumentIdentifier(uri=doc.uri)
    lines = doc.text.split("\n")
    out: dict[str, object] = {
        "inlay": await c.text_document_inlay_hint_async(types.InlayHintParams(text_document=ident, range=whole(doc))),
        "lens": await c.text_document_code_lens_async(types.CodeLensParams(text_document=ident)),
        "symbols": await c.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=ident)),
        "actions": await doc.code_actions([], rng=whole(doc)),
    }
    for line, text in enumerate(lines):
        for col in sorted({len(text) - len(text.lstrip()), len(text) // 2, len(text)}):
            pos = types.Position(line=line, character=col)
            out[f"hover {line}:{col}"] = await c.text_document_hover_async(
                types.HoverParams(text_document=ident, position=pos))
    end = types.Position(line=len(lines) - 1, character=len(lines[-1]))
    out["completion"] = await c.text_document_completion_async(types.CompletionParams(text_document=ident, position=end))
    out["signature"] = await c.text_document_signature_help_async(
        types.SignatureHelpParams(text_document=ident, position=end))
    return out


@pytest.mark.parametrize("name", sorted(BROKEN))
async def test_broken_text_gets_an_answer_to_every_request(client, tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(SCALE)
    doc = Doc(client, path).open()
    await doc.diagnostics()
    since = len(client.log_messages)
    doc.replace(BROKEN[name])  # typed into an open document: the tree is re-parsed incrementally
    await doc.diagnostics()
    answers = await asyncio.wait_for(every_request(doc), 120)
    assert isinstance(answers["inlay"], (list, tuple))
    assert isinstance(answers["symbols"], (list, tuple)) and answers["symbols"], "the kernel's symbol is gone"
    # Answered by the handlers themselves: no failure was caught on the way.
    assert guard_logs(client, since) == []


async def test_a_handler_that_fails_still_answers_and_says_why_in_the_log(client, tmp_path):
    path = tmp_path / "deep.py"
    path.write_text(SCALE)
    doc = Doc(client, path).open()
    await doc.diagnostics()
    since = len(client.log_messages)
    doc.replace(DEEP)
    hints = await asyncio.wait_for(client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri), range=whole(doc))), 60)
    assert list(hints) == []
    # still answering after the failure
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri)))
    assert symbols is not None
    logged = guard_logs(client, since)
    assert any(m.startswith("textDocument/inlayHint failed for " + doc.uri) for m in logged), logged
    assert any("RecursionError" in m for m in logged), logged


async def test_resolving_an_action_the_client_made_answers_it_unchanged(client, tmp_path):
    """VS Code's "Preview" beside a rewrite is the client's own action: resolving it, with no data
    or data this server did not write, answers the action as it came."""
    if not client.capabilities.text_document.code_action.resolve_support:
        pytest.skip("client does not resolve code actions")
    path = tmp_path / "k.py"
    path.write_text(SCALE)
    doc = Doc(client, path).open()
    await doc.diagnostics()
    since = len(client.log_messages)
    for data in (None, {"action": "rewrite", "uri": None, "version": 1, "kernel": "scale_kernel", "index": 0},
                 {"action": "rewrite", "kernel": "scale_kernel", "index": 0},
                 {"action": "explode", "uri": doc.uri, "version": 1},
                 {"action": "fixAll", "uri": (tmp_path / "closed.py").as_uri(), "version": 1}, [1, 2]):
        item = types.CodeAction(title="Preview: tritonlens: unroll", kind="quickfix.preview", data=data)
        back = await client.code_action_resolve_async(item)
        assert back.title == item.title and back.edit is None and back.data == data
    assert guard_logs(client, since) == []


async def test_every_action_names_its_document_for_a_later_resolve(client, tmp_path):
    path = tmp_path / "k.py"
    path.write_text(SCALE)
    doc = Doc(client, path).open()
    diag = next(d for d in await doc.diagnostics() if d.code == "TL001")
    actions = await doc.code_actions([diag])
    assert actions
    for a in actions:
        assert a.data["uri"] == doc.uri and a.data["version"] == doc.version, a
        if client.capabilities.text_document.code_action.resolve_support:
            assert (await client.code_action_resolve_async(a)).edit is not None


async def test_typing_never_blanks_the_pushed_diagnostics(client, tmp_path):
    if pulls(client):
        pytest.skip("pushed diagnostics only")
    path = tmp_path / "typed.py"
    path.write_text(SCALE)
    doc = Doc(client, path).open()
    assert [d.code for d in await doc.diagnostics()].count("TL001") == 1
    start = len(client.publications)
    typed = ""
    for ch in "    y = x[:, None]q * 2":
        typed += ch
        doc.replace(SCALE.replace(LOAD, LOAD + typed + "\n"))
        await asyncio.sleep(0.03)
    assert [d.code for d in await doc.diagnostics()].count("TL001") == 1
    await asyncio.sleep(0.3)  # any late publication
    mine = [p for p in client.publications[start:] if p.uri == doc.uri]
    assert mine, "nothing was published while typing"
    assert all(p.diagnostics for p in mine), [(p.version, len(p.diagnostics)) for p in mine]


# -- VS Code as it really is: it pulls, takes a refresh, and cancels a pull still running ----------


def vscode_pulling() -> types.ClientCapabilities:
    caps = client_capabilities("visual-studio-code")
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(dynamic_registration=False,
                                                                       related_document_support=False)
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    return caps


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def vscode(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("vscode")
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=vscode_pulling(), root_uri=root.as_uri(), initialization_options={"debounceMs": 20},
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))
    yield
    await lsp_client.shutdown_session()


def many_kernels(n: int) -> str:
    """`n` copies of the scale kernel and its launch: enough that re-checking every kernel after
    a line moves them all takes longer than a keystroke."""
    head, _, kernel = SCALE.partition("@triton.jit")
    return head + "".join(("@triton.jit" + kernel).replace("scale_kernel", f"scale_kernel_{i}")
                          .replace("def scale(", f"def scale_{i}(") + "\n\n" for i in range(n))


async def test_typing_never_blanks_the_pulled_diagnostics(vscode, tmp_path):
    """vscode-languageclient 9 cancels a pull still running at the next keystroke and shows an
    empty list for it until a later pull answers. Keystrokes come at a fast typist's pace (150 ms),
    faster than the analysis of each version: every pull must have answered before the next one."""
    client = vscode
    assert client.init_result.capabilities.diagnostic_provider is not None
    path = tmp_path / "many.py"
    path.write_text(many_kernels(80))
    doc = Doc(client, path).open()
    ident = types.TextDocumentIdentifier(uri=doc.uri)

    def pull(previous):
        return asyncio.ensure_future(client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=ident, previous_result_id=previous)))

    first = await asyncio.wait_for(pull(None), 60)
    shown, rid = len(first.items), first.result_id
    assert shown >= 80
    blanks: list[str] = []
    refreshes = client.diagnostic_refreshes
    running = None
    for _ in range(8):
        if running is not None:
            if not running.done():  # the client would cancel it; its answer is dropped here
                blanks.append(f"the pull of v{doc.version} was still running at the next keystroke")
            elif isinstance(running.result(), types.RelatedFullDocumentDiagnosticReport):
                if not running.result().items:
                    blanks.append(f"v{doc.version} answered an empty list")
                rid = running.result().result_id
        doc.replace("\n" + doc.text)  # Enter at the top: every kernel moves
        running = pull(rid)
        await asyncio.sleep(0.15)
    last = await asyncio.wait_for(running, 60)
    assert not isinstance(last, types.RelatedFullDocumentDiagnosticReport) or last.items
    if isinstance(last, types.RelatedFullDocumentDiagnosticReport):
        rid = last.result_id
    assert blanks == []
    # Once the last version is analyzed the server asks for a pull, which gets its report.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while client.diagnostic_refreshes == refreshes and loop.time() < deadline:
        await asyncio.sleep(0.05)
    assert client.diagnostic_refreshes > refreshes, "no workspace/diagnostic/refresh after the analysis"
    final = await asyncio.wait_for(pull(rid), 60)
    assert isinstance(final, types.RelatedFullDocumentDiagnosticReport) and len(final.items) == shown
    assert min(d.range.start.line for d in final.items) == min(d.range.start.line for d in first.items) + 8
