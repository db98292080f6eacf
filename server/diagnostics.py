"""Findings → LSP diagnostics, and their delivery: pushed with the document version, or pulled.

A diagnostic carries in `data` what its quick fix needs (ruff-lsp style): the fix title and its
edits already in client units for the version it was computed on, so the code action handler can
answer without re-analyzing when the version still matches.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import replace
from functools import cache
from importlib.resources import files

from lsprotocol import types
from tritonlens.analysis.findings import Finding, Severity
from tritonlens.analysis.message_text import plain_quotes
from tritonlens.analysis.relocate import moved, shift_map

from .capabilities import ClientSupport
from .documents import DocumentState, Snapshot, snapshot_of
from .held_findings import hold_while_broken
from .lsp_data import DiagnosticData, DiagnosticFix, to_json
from .protocol import PreSerialized

log = logging.getLogger(__name__)

SOURCE = "tritonlens"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


@cache
def rule_doc_uri(code: str) -> str | None:
    """File URI of the rule's page shipped with the package (tritonlens.docs), if it exists."""
    try:
        path = files("tritonlens.docs").joinpath("rules", f"{code}.md")
        if path.is_file():
            from pathlib import Path

            return Path(str(path)).resolve().as_uri()
    except (ModuleNotFoundError, OSError):
        pass
    return None


def kernel_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]


def fix_payload(finding: Finding, snap: Snapshot) -> DiagnosticFix | None:
    if finding.fix is None or not finding.fix.edits:
        return None
    return DiagnosticFix(finding.fix.title,
                         [types.TextEdit(range=snap.range(e.range), new_text=e.new_text) for e in finding.fix.edits])


def to_diagnostic(finding: Finding, snap: Snapshot, support: ClientSupport = ClientSupport()) -> types.Diagnostic:
    href = rule_doc_uri(finding.code) if support.code_description else None
    data = DiagnosticData(kernel=finding.kernel, fix=fix_payload(finding, snap),
                          unconfirmed=finding.data.get("unconfirmed") if isinstance(finding.data, dict) else None)
    related = None
    if finding.related and support.related_information:
        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=snap.uri, range=snap.range(r.range)), message=plain_quotes(r.message)
            )
            for r in finding.related
        ]
    return types.Diagnostic(
        range=snap.range(finding.range),
        message=finding.message,
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        related_information=related,
        data=data,
    )


def same_diagnostic(a: types.Diagnostic, b: types.Diagnostic) -> bool:
    """Match a diagnostic the client echoes back (maybe without data) to one of ours."""
    return a.code == b.code and a.range == b.range and (a.message == b.message or not a.message or not b.message)


# -- findings anchored to a kernel, from producers other than the static analysis -----------------


class AnchoredFinding:
    """A finding computed on an older snapshot, valid while its kernel's source is unchanged.

    Profiling and compiling take seconds; by the time they finish the user may have typed above
    the kernel. The finding moves with its kernel and disappears when the kernel itself changes.
    """

    __slots__ = ("finding", "kernel", "kernel_hash", "kernel_line")

    def __init__(self, finding: Finding, kernel: str, kernel_hash: str, kernel_line: int):
        self.finding = finding
        self.kernel = kernel
        self.kernel_hash = kernel_hash
        self.kernel_line = kernel_line

    def placed(self, module) -> Finding | None:
        if module is None:
            return None
        k = module.kernel(self.kernel)
        if k is None or kernel_hash(k.text) != self.kernel_hash:
            return None
        delta = k.range.start.line - self.kernel_line
        if delta == 0:
            return self.finding
        # An edit computed on another version is never replayed.
        return replace(moved(self.finding, shift_map(delta)), fix=None)


def findings_for(st: DocumentState, result) -> list[Finding]:
    """Static findings of `result` plus the anchored findings of every other producer."""
    out = list(getattr(result, "findings", None) or [])
    module = getattr(result, "module", None)
    for producer in sorted(st.extra):
        for anchored in st.extra[producer]:
            placed = anchored.placed(module)
            if placed is not None:
                out.append(placed)
    return out


def shown_findings(ls, st: DocumentState, snap: Snapshot, result) -> list[Finding]:
    """The findings as the user sees them: error findings as Triton's front end judged them
    (refuted ones gone), so a quick fix is only ever offered for a finding that is shown."""
    from tritonlens.analysis.rules import ALL_RULES, is_selected

    findings = findings_for(st, result)
    # Other producers' findings were selected when they were made: settings changed since apply too.
    settings = ls.settings.for_uri(snap.uri)
    static = {id(f) for f in getattr(result, "findings", None) or ()}
    findings = [f for f in findings if id(f) in static or f.code not in ALL_RULES
                or is_selected(f.code, settings.select, settings.ignore)]
    confirming = getattr(ls, "confirm_errors", None)
    if confirming is not None:
        findings = confirming.present(snap, result, findings)
    return hold_while_broken(st.held, getattr(result, "module", None), findings)


def _lines_key(f: Finding, snap: Snapshot) -> tuple:
    """The text of every line a finding's positions sit on: conversion depends on nothing else."""
    rows = {f.range.start.line, f.range.end.line}
    rows.update(r.range.start.line for r in f.related)
    rows.update(r.range.end.line for r in f.related)
    if f.fix:
        for e in f.fix.edits:
            rows.update((e.range.start.line, e.range.end.line))
    n = len(snap.lines)
    return tuple(snap.lines[r] if r < n else None for r in sorted(rows))


def build_json(ls, st: DocumentState, snap: Snapshot, result) -> list[dict]:
    """Diagnostics for `result`, JSON-ready. The engine hands back the same Finding objects for
    kernels an edit did not touch; their conversion is reused while the lines they sit on are
    unchanged, so a one-kernel edit converts one kernel's findings."""
    support = ls.client_support
    old = st.diag_cache if st.diag_cache_uri == (snap.uri, snap.encoding) else {}
    cache: dict[int, tuple] = {}
    out = []
    for f in shown_findings(ls, st, snap, result):
        key = _lines_key(f, snap)
        hit = old.get(id(f))
        if hit is not None and hit[0] is f and hit[1] == key:
            js = hit[2]
        else:
            js = to_json(to_diagnostic(f, snap, support))
        cache[id(f)] = (f, key, js)
        out.append(js)
    st.diag_cache, st.diag_cache_uri = cache, (snap.uri, snap.encoding)
    return out


# -- delivery ---------------------------------------------------------------------------------------


async def publish(ls, uri: str) -> bool:
    """Analyze the current version of `uri` and push its diagnostics, unless it went stale.

    Returns True when something was published.
    """
    snap = snapshot_of(ls, uri)
    if snap is None:
        return False
    settings = ls.settings.for_uri(uri)
    result = await ls.analysis.analyze(snap, settings)
    current = snapshot_of(ls, uri)
    if current is None or current.version != snap.version:
        log.debug("dropping diagnostics for %s v%s: document is at v%s", uri, snap.version,
                  current.version if current else None)
        return False
    if ls.settings.for_uri(uri).analysis_key() != settings.analysis_key():
        # The settings changed while this ran; their change scheduled a publication of its own.
        log.debug("dropping diagnostics for %s v%s: settings changed", uri, snap.version)
        return False
    st = ls.analysis.state(uri)
    diagnostics = build_json(ls, st, snap, result)
    st.published_version = snap.version
    ls.protocol.notify_json(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
                            {"uri": uri, "diagnostics": diagnostics, "version": snap.version})
    ls.notify_published(uri, snap.version, len(diagnostics))
    return True


def clear(ls, uri: str) -> None:
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def result_id(st: DocumentState, snap: Snapshot, settings) -> str:
    return f"{snap.version}:{st.generation}:{hash(settings.analysis_key()) & 0xFFFFFFFF:x}"


async def pull(ls, params: types.DocumentDiagnosticParams):
    uri = params.text_document.uri
    snap = snapshot_of(ls, uri)
    if snap is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    settings = ls.settings.for_uri(uri)
    st = ls.analysis.state(uri)
    if params.previous_result_id and not st.current_for(snap, settings.analysis_key()):
        # VS Code's client (vscode-languageclient 9) cancels a pull still running when the next
        # keystroke comes, and shows an empty list for it until its next pull answers: the problems
        # blinked out for the length of an analysis on every keystroke. So a pull that would wait
        # answers at once that the client's report stands; the refresh once this version is
        # analyzed makes it pull the new one.
        ls.spawn(_refresh_when_analyzed(ls, snap, settings))
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=params.previous_result_id)
    result = await ls.analysis.analyze(snap, settings)
    rid = result_id(st, snap, settings)
    if params.previous_result_id == rid:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
    items = build_json(ls, st, snap, result)
    st.published_version = snap.version
    ls.notify_published(uri, snap.version, len(items))
    return PreSerialized({"kind": "full", "resultId": rid, "items": items})


async def _refresh_when_analyzed(ls, snap: Snapshot, settings) -> None:
    def current() -> bool:  # otherwise a newer version's pull asked for its own refresh
        now = snapshot_of(ls, snap.uri)
        return now is not None and now.version == snap.version

    if not current():
        return
    try:
        await ls.analysis.analyze(snap, settings)
    except Exception:
        log.exception("analysis of %s v%s failed; the client keeps its diagnostics", snap.uri, snap.version)
        return
    if current():
        ls.workspace_diagnostic_refresh(None)


def register(ls) -> None:
    """Pull diagnostics are offered only to clients that pull and can be told to pull again
    (ClientSupport.pull_diagnostics): the others get them pushed."""
    if not ls.client_support.pull_diagnostics:
        return

    @ls.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=False, workspace_diagnostics=False),
    )
    async def _pull(params: types.DocumentDiagnosticParams):
        return await pull(ls, params)
