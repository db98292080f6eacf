"""Client-side helpers for the end-to-end tests: open documents, collect diagnostics in push or
pull mode, apply edits the way an editor does (in the negotiated position encoding)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

TIMEOUT = 20


def encoding_of(client) -> str:
    caps = client.capabilities
    encs = (caps.general.position_encodings if caps and caps.general else None) or ["utf-16"]
    for e in encs:  # pygls takes the client's first supported preference
        if e in ("utf-8", "utf-16", "utf-32"):
            return e
    return "utf-16"


def pulls(client) -> bool:
    """Whether the server offers this client pull diagnostics: only when it can also be told to
    pull again (workspace/diagnostic/refresh); others, such as Neovim 0.11, get them pushed."""
    caps = client.capabilities
    refresh = bool(caps and caps.workspace and caps.workspace.diagnostics and caps.workspace.diagnostics.refresh_support)
    return bool(caps and caps.text_document and caps.text_document.diagnostic is not None) and refresh


def _units_to_index(line: str, units: int, encoding: str) -> int:
    if encoding == "utf-32":
        return min(units, len(line))
    count = 0
    for i, ch in enumerate(line):
        if count >= units:
            return i
        if encoding == "utf-8":
            count += len(ch.encode("utf-8"))
        else:
            count += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def offset(text: str, pos: types.Position, encoding: str) -> int:
    lines = text.split("\n")
    if pos.line >= len(lines):
        return len(text)
    start = sum(len(ln) + 1 for ln in lines[: pos.line])
    return start + _units_to_index(lines[pos.line], pos.character, encoding)


def apply_text_edits(text: str, edits, encoding: str) -> str:
    spans = sorted(((offset(text, e.range.start, encoding), offset(text, e.range.end, encoding), e.new_text)
                    for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edits_of(edit: types.WorkspaceEdit, uri: str, version: int | None = None) -> list[types.TextEdit]:
    if edit.document_changes:
        out = []
        for dc in edit.document_changes:
            assert isinstance(dc, types.TextDocumentEdit), dc
            assert dc.text_document.uri == uri
            if version is not None:
                assert dc.text_document.version == version, (dc.text_document.version, version)
            out.extend(dc.edits)
        return out
    return list((edit.changes or {}).get(uri, []))


class Doc:
    """An open document the test edits, tracking its version like an editor."""

    def __init__(self, client, path: Path, text: str | None = None):
        self.client = client
        self.path = path
        self.uri = path.resolve().as_uri()
        self.text = path.read_text() if text is None else text
        self.version = 1
        self.encoding = encoding_of(client)

    def open(self) -> Doc:
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=self.uri, language_id="python", version=self.version, text=self.text)))
        return self

    def replace(self, text: str) -> None:
        self.version += 1
        self.text = text
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))

    def apply(self, edit: types.WorkspaceEdit) -> str:
        edits = edits_of(edit, self.uri, self.version)
        self.replace(apply_text_edits(self.text, edits, self.encoding))
        return self.text

    def save(self) -> None:
        self.path.write_text(self.text)
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri)))

    async def diagnostics(self, previous: str | None = None, timeout: float = TIMEOUT) -> list[types.Diagnostic]:
        """Diagnostics for the current version: pulled, or waited for until pushed for it."""
        if pulls(self.client):
            report = await asyncio.wait_for(self.client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=self.uri),
                                               previous_result_id=previous)), timeout)
            self.last_report = report
            return list(getattr(report, "items", None) or [])
        return await self.pushed(timeout)

    async def pushed(self, timeout: float = TIMEOUT) -> list[types.Diagnostic]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            got = self.client.published.get(self.uri)
            if got is not None and got.version == self.version:
                return list(got.diagnostics)
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"no diagnostics for v{self.version} of {self.uri}; last: {got and got.version}")
            try:
                await asyncio.wait_for(self.client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS),
                                       min(remaining, 1.0))
            except (asyncio.TimeoutError, TimeoutError):
                pass

    async def settled(self, timeout: float = 90) -> list[types.Diagnostic]:
        """Diagnostics of the current version once no error waits for Triton's front end."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            seen = len(self.client.publications)
            diags = await self.diagnostics(timeout=max(1.0, deadline - loop.time()))
            if not any("being confirmed" in ((d.data or {}).get("unconfirmed") or "") for d in diags):
                return diags
            if loop.time() > deadline:
                raise TimeoutError(f"errors of v{self.version} of {self.uri} still unconfirmed")
            if pulls(self.client):
                await asyncio.sleep(0.2)
            else:
                while len(self.client.publications) == seen and loop.time() < deadline:
                    await asyncio.sleep(0.05)

    async def code_actions(self, diagnostics, only=None, rng: types.Range | None = None):
        rng = rng or (diagnostics[0].range if diagnostics else types.Range(start=types.Position(line=0, character=0),
                                                                           end=types.Position(line=0, character=0)))
        return await self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri), range=rng,
            context=types.CodeActionContext(diagnostics=list(diagnostics), only=only)))

    async def resolved_edit(self, action: types.CodeAction) -> types.WorkspaceEdit:
        if action.edit is None:
            action = await self.client.code_action_resolve_async(action)
        assert action.edit is not None, action
        return action.edit

    async def hover(self, line: int, character: int):
        return await self.client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri),
            position=types.Position(line=line, character=character)))


def position_of(text: str, needle: str, encoding: str, nth: int = 0) -> types.Position:
    """Client position of the start of the nth occurrence of `needle`."""
    idx = -1
    for _ in range(nth + 1):
        idx = text.index(needle, idx + 1)
    line = text.count("\n", 0, idx)
    col = idx - (text.rfind("\n", 0, idx) + 1)
    line_text = text.split("\n")[line][:col]
    if encoding == "utf-8":
        units = len(line_text.encode())
    elif encoding == "utf-32":
        units = len(line_text)
    else:
        units = len(line_text.encode("utf-16-le")) // 2
    return types.Position(line=line, character=units)
