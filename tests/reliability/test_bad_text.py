"""Bad text: at least 10,000 random edits through a real stdio client; every request is answered
and the server never exits.

The edits come from a hypothesis strategy: documents opened with odd initial text (empty, CRLF,
tabs, a 10,000-character line, lone surrogates, non-kernel Python, truncated or mutated
examples), then batches of incremental and whole-document didChange notifications sent without
waiting, then a burst of requests (hover, codeLens, codeAction, documentSymbol, inlay hints,
completion, diagnostic pull) that must all come back.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from rel_client import REPO, LiveServer

pytestmark = pytest.mark.slow

EXAMPLES = {p.name: p.read_text() for p in sorted((REPO / "examples").glob("*.py"))}
NON_KERNEL = '''import json, os\n\nclass Config:\n    """Not a kernel."""\n    def load(self, p):\n        return json.load(open(p))\n\nasync def main():\n    await asyncio.sleep(1)\n'''
SNIPPETS = [
    "", "x", "\n", "\r\n", "\r", "\t", "\t\t", "    ", "\ud800", "\udfff", "\ud83d", "é", "😀", "\x00", "\u2028",
    "x" * 10_000, "a = 1\r\n" * 50, "@triton.jit\ndef k(", "tl.load(", "tl.store(p, ", "tl.dot(a, b)",
    "BLOCK: tl.constexpr", "pid = tl.program_id(0)\n", ")", "]]]", ":", "def", "'''", '"""', "#", "\\",
    "import triton\nimport triton.language as tl\n", "grid = lambda META: (triton.cdiv(n, META['BLOCK']),)\n",
    "k[grid](x, BLOCK=4)\n", "\n\n\n\n", "\t\tif x:\n\t  return\n",
]

bases = st.one_of(
    st.sampled_from(sorted(EXAMPLES.values())),
    st.builds(lambda t, k: t[:k], st.sampled_from(sorted(EXAMPLES.values())), st.integers(0, 4000)),
    st.sampled_from(["", NON_KERNEL, "\t" + "\n\t".join(EXAMPLES["vector_add.py"].splitlines()),
                     EXAMPLES["softmax.py"].replace("\n", "\r\n"), "y = '" + "z" * 10_000 + "'\n",
                     EXAMPLES["matmul.py"].replace("a_ptr", "\ud800a_ptr"), "\ud800\udfff" * 10]),
    st.text(max_size=300),
)
snippet = st.one_of(st.sampled_from(SNIPPETS), st.text(max_size=40))
position = st.tuples(st.integers(0, 200), st.integers(0, 12_000))
edit = st.one_of(
    st.tuples(st.just("insert"), position, snippet),
    st.tuples(st.just("delete"), position, position),
    st.tuples(st.just("replace"), position, position, snippet),
    st.tuples(st.just("whole"), bases),
    st.tuples(st.just("truncate"), st.integers(0, 5000)),
)
request = st.sampled_from(["hover", "codeLens", "codeAction", "documentSymbol", "diagnostic", "inlayHint",
                           "completion"])
batch = st.fixed_dictionaries({
    "base": bases,
    "edits": st.lists(st.lists(edit, min_size=1, max_size=3), min_size=100, max_size=130),
    "requests": st.lists(st.tuples(request, position), min_size=6, max_size=12),
    "close": st.booleans(),
})

EXAMPLES_BUDGET = 100  # x >= 100 notifications each: >= 10,000 edits


def _pos(p) -> types.Position:
    return types.Position(line=p[0], character=p[1])


def _clamp(text: str, p) -> int:
    lines = text.split("\n")
    line = min(p[0], len(lines) - 1)
    return sum(len(ln) + 1 for ln in lines[:line]) + min(p[1], len(lines[line]))


def _position_of(text: str, index: int) -> types.Position:
    line = text.count("\n", 0, index)
    return types.Position(line=line, character=index - (text.rfind("\n", 0, index) + 1))


def _change(text: str, op) -> tuple[str, types.TextDocumentContentChangeEvent]:
    """Apply op to the client's copy; most ranges are valid, raw ones may point past the end."""
    kind = op[0]
    if kind == "whole":
        return op[1], types.TextDocumentContentChangeWholeDocument(text=op[1])
    if kind == "truncate":
        new = text[:op[1]]
        return new, types.TextDocumentContentChangeWholeDocument(text=new)
    start, end, new = {"insert": (op[1], op[1], op[-1]), "delete": (op[1], op[2], ""),
                       "replace": (op[1], op[2], op[-1])}[kind]
    a, b = sorted((_clamp(text, start), _clamp(text, end)))
    if (start[0] + start[1]) % 7 == 0:  # unclamped: a range past the end of the document
        rng = types.Range(start=_pos(start), end=_pos(max(start, end)))
        return text, types.TextDocumentContentChangePartial(range=rng, text=new)  # server decides
    rng = types.Range(start=_position_of(text, a), end=_position_of(text, b))
    return text[:a] + new + text[b:], types.TextDocumentContentChangePartial(range=rng, text=new)


async def _request(client, uri: str, kind: str, p):
    doc = types.TextDocumentIdentifier(uri=uri)
    rng = types.Range(start=types.Position(line=0, character=0), end=_pos(p))
    if kind == "hover":
        return await client.text_document_hover_async(types.HoverParams(text_document=doc, position=_pos(p)))
    if kind == "codeLens":
        return await client.text_document_code_lens_async(types.CodeLensParams(text_document=doc))
    if kind == "codeAction":
        return await client.text_document_code_action_async(types.CodeActionParams(
            text_document=doc, range=rng, context=types.CodeActionContext(diagnostics=[])))
    if kind == "documentSymbol":
        return await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc))
    if kind == "diagnostic":
        return await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=doc))
    if kind == "inlayHint":
        return await client.text_document_inlay_hint_async(types.InlayHintParams(text_document=doc, range=rng))
    if kind == "completion":
        return await client.text_document_completion_async(types.CompletionParams(text_document=doc,
                                                                                  position=_pos(p)))
    raise AssertionError(kind)


class Tally:
    def __init__(self):
        self.edits = self.requests = self.answered = self.errors = self.docs = 0
        self.internal: list[str] = []


async def _one_example(server: LiveServer, data: dict, tally: Tally) -> None:
    client = server.client
    tally.docs += 1
    uri = (server.root / f"doc{tally.docs}.py").as_uri()
    text, version = data["base"], 1
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))
    for ops in data["edits"]:
        changes = []
        for op in ops:
            text, change = _change(text, op)
            changes.append(change)
        version += 1
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=changes))
        tally.edits += 1
    kinds = [k for k in data["requests"] if k[0] != "diagnostic" or server.pulls]
    tally.requests += len(kinds)
    outcomes = await asyncio.wait_for(
        asyncio.gather(*(_request(client, uri, k, p) for k, p in kinds), return_exceptions=True), 60)
    for (kind, _p), out in zip(kinds, outcomes):
        if isinstance(out, JsonRpcInternalError):
            tally.internal.append(f"{kind}: {out}")
        elif isinstance(out, JsonRpcException):
            tally.errors += 1
        elif isinstance(out, BaseException):
            raise out
        tally.answered += 1
    if data["close"]:
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))


def test_ten_thousand_random_edits(tmp_path):
    # neovim's profile counts positions in UTF-8, the harder encoding; it takes no diagnostic
    # refresh, so the server pushes its diagnostics and offers it no pull
    server = LiveServer("neovim", tmp_path, {"debounceMs": 0})
    server.pulls = server.init_result.capabilities.diagnostic_provider is not None
    tally = Tally()
    try:
        @settings(max_examples=EXAMPLES_BUDGET, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(batch)
        def run(data):
            assert server.alive(), "the server exited"
            server.call(_one_example(server, data, tally), timeout=120)

        run()
        assert server.alive(), "the server exited"
        # and it still does its job: a kernel file gets its diagnostics
        doc = server.root / "final.py"
        doc.write_text(EXAMPLES["matmul.py"])
        server.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=doc.as_uri(), language_id="python", version=1, text=EXAMPLES["matmul.py"])))
        if server.pulls:
            report = server.call(server.client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=doc.as_uri()))))
            assert report.items is not None
        else:
            deadline = time.monotonic() + 60
            while doc.as_uri() not in server.client.diagnostics and time.monotonic() < deadline:
                time.sleep(0.1)
            assert doc.as_uri() in server.client.diagnostics, "no diagnostics pushed for a kernel file"
    finally:
        summary = {"edits": tally.edits, "requests": tally.requests, "answered": tally.answered,
                   "jsonrpc_errors": tally.errors, "internal_errors": len(tally.internal)}
        print(json.dumps(summary))
        errs = [m.message for m in server.client.log_messages if m.type == types.MessageType.Error]
        server.close()
    assert tally.edits >= 10_000, summary
    assert tally.answered == tally.requests, summary
    assert not tally.internal, tally.internal[:5]
    assert not errs, errs[:3]  # an exception the server swallowed is still a defect
