"""Bad protocol: malformed params for every request method the server registers, unknown methods,
broken frames and bodies, unopened documents, positions past the end. Each request gets a proper
JSON-RPC error or an empty result; the server never exits and keeps working afterwards.

Frames are written raw (raw_rpc.RawServer): a client library would refuse to send most of these.
"""

from __future__ import annotations

import pytest
from lsprotocol import types
from raw_rpc import RawServer, pygls_capabilities
from rel_client import REPO

pytestmark = pytest.mark.slow

INVALID_PARAMS, METHOD_NOT_FOUND, INVALID_REQUEST, PARSE_ERROR = -32602, -32601, -32600, -32700
BAD_PARAMS = [
    {"textDocument": {"uri": 5}, "position": "nowhere"},
    "garbage",
    [1, 2, 3],
    None,
    {},
    {"textDocument": {"uri": "file:///x.py"}, "position": {"line": -1, "character": 2**40},
     "range": {"start": {}, "end": None}, "context": 7, "command": 3, "arguments": "no"},
]


def registered_requests(profile: str) -> list[str]:
    """Every request method the server handles once initialized for `profile` (read in-process:
    features are registered at initialize, from the client's capabilities)."""
    from pytest_lsp import client_capabilities
    from tritonlens.server.app import create_server

    server = create_server()
    server.protocol.client_capabilities = client_capabilities(profile)
    server.protocol.fm.features[types.INITIALIZE](types.InitializeParams(capabilities=client_capabilities(profile)))
    methods = [m for m in server.protocol.fm.features
               if types.METHOD_TO_TYPES.get(m, (None, None))[1] is not None and m not in ("initialize", "shutdown")]
    return sorted(set(methods) | {types.WORKSPACE_EXECUTE_COMMAND})


def _is_error_or_empty(reply: dict) -> bool:
    if "error" in reply:
        return isinstance(reply["error"].get("code"), int) and isinstance(reply["error"].get("message"), str)
    return reply.get("result") in (None, [], {}) or _empty_report(reply["result"])


def _empty_report(result) -> bool:
    return isinstance(result, dict) and result.get("items") == [] and result.get("kind") == "full"


def _still_works(server: RawServer, uri: str) -> None:
    reply = server.call("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
    assert reply.get("result"), reply
    assert server.alive()


@pytest.fixture(params=["neovim", "visual-studio-code"])
def server(request, tmp_path):
    srv = RawServer()
    srv.profile = request.param
    reply = srv.initialize(pygls_capabilities(request.param), {"debounceMs": 0}, tmp_path.as_uri())
    assert "result" in reply, reply
    doc = tmp_path / "vector_add.py"
    doc.write_text((REPO / "examples" / "vector_add.py").read_text())
    srv.uri = doc.as_uri()
    srv.notify("textDocument/didOpen", {"textDocument": {"uri": srv.uri, "languageId": "python", "version": 1,
                                                         "text": doc.read_text()}})
    yield srv
    code = srv.close()
    assert code == 0, bytes(srv.stderr[-3000:]).decode(errors="replace")


def test_malformed_params_for_every_request_method(server):
    methods = registered_requests(server.profile)
    assert {"textDocument/hover", "textDocument/codeAction", "textDocument/codeLens",
            "workspace/executeCommand"} <= set(methods)
    failures = []
    for method in methods:
        for params in BAD_PARAMS:
            reply = server.call(method, params)
            if not _is_error_or_empty(reply):
                failures.append((method, params, reply))
        reply = server.call(method, omit_params=True)
        if not _is_error_or_empty(reply):
            failures.append((method, "<no params>", reply))
    assert not failures, failures[:5]
    _still_works(server, server.uri)


def test_unknown_methods_and_broken_messages(server):
    reply = server.call("tritonlens/noSuchMethod", {"a": 1})
    assert reply["error"]["code"] == METHOD_NOT_FOUND, reply
    reply = server.call("textDocument/notARealRequest", None)
    assert reply["error"]["code"] == METHOD_NOT_FOUND, reply
    server.notify("tritonlens/noSuchNotification", {"a": 1})
    server.notify("$/someClientThing", None)
    server.notify("textDocument/didChange", {"textDocument": "nope"})  # malformed notification
    server.notify("textDocument/didOpen", {"textDocument": {"uri": None}})
    # bodies that are not JSON-RPC at all
    for body in (b"{not json", b"\xff\xfe\xfd invalid utf-8", b"[]", b"42", b'"text"', b"null",
                 b'{"jsonrpc": "2.0"}', b'{"jsonrpc": "2.0", "id": {"odd": 1}, "method": "textDocument/hover"}',
                 b'{"id": 77, "method": "textDocument/hover", "params": {}}'):
        server.frame(body)
        _still_works(server, server.uri)
    # a header the server does not know, and a frame whose body arrives in pieces
    server.write_bytes(b"X-Whatever: 1\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n")
    body = b'{"jsonrpc": "2.0", "id": "split", "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "%s"}}}' % server.uri.encode()
    server.write_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body[:20])
    server.write_bytes(body[20:])
    assert "result" in server.wait("split")
    # a request id reused while the first is in flight, and a cancel for an id that never existed
    server.notify("$/cancelRequest", {"id": 987654})
    _still_works(server, server.uri)


def test_unopened_documents_and_positions_past_the_end(server, tmp_path):
    ghost = (tmp_path / "never_opened.py").as_uri()
    elsewhere = "untitled:Untitled-1"
    far = {"line": 10**6, "character": 10**6}
    rng = {"start": {"line": 0, "character": 0}, "end": far}
    checks = []
    for uri in (ghost, elsewhere, server.uri):
        doc = {"textDocument": {"uri": uri}}
        checks += [
            ("textDocument/hover", {**doc, "position": far}),
            ("textDocument/hover", {**doc, "position": {"line": 3, "character": 10**6}}),
            ("textDocument/codeLens", doc),
            ("textDocument/documentSymbol", doc),
            ("textDocument/codeAction", {**doc, "range": rng, "context": {"diagnostics": []}}),
            ("textDocument/inlayHint", {**doc, "range": rng}),
            ("textDocument/completion", {**doc, "position": far}),
            ("textDocument/signatureHelp", {**doc, "position": far}),
        ]
        if server.profile == "neovim":
            checks.append(("textDocument/diagnostic", doc))
        checks += [("workspace/executeCommand", {"command": c, "arguments": [uri, "nope"]})
                   for c in ("tritonlens.server.report", "tritonlens.server.profile", "tritonlens.server.showIr",
                             "tritonlens.server.optimize")]
    for method, params in checks:
        reply = server.call(method, params, timeout=60)
        assert "result" in reply or isinstance(reply.get("error", {}).get("code"), int), (method, params, reply)
        if "error" in reply:
            assert reply["error"]["code"] != -32603, (method, reply)  # bad input is not an internal error
    # an edit whose range lies past the end of the document is applied or refused, never fatal
    server.notify("textDocument/didChange", {"textDocument": {"uri": server.uri, "version": 2},
                                             "contentChanges": [{"range": rng, "text": "x = 1\n"}]})
    server.notify("textDocument/didChange", {"textDocument": {"uri": ghost, "version": 2},
                                             "contentChanges": [{"range": rng, "text": "x = 1\n"}]})
    server.notify("textDocument/didClose", {"textDocument": {"uri": ghost}})
    # the range ran to the end, so the document is now "x = 1": it has no kernel any more
    reply = server.call("textDocument/codeLens", {"textDocument": {"uri": server.uri}})
    assert reply.get("result") in (None, []), reply
    server.notify("textDocument/didChange", {"textDocument": {"uri": server.uri, "version": 3},
                                             "contentChanges": [{"text": (REPO / "examples" / "vector_add.py").read_text()}]})
    _still_works(server, server.uri)
