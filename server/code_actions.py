"""Quick fixes, "Ignore TLxxx on this line" and `source.fixAll.tritonlens`.

Edits are versioned TextDocumentEdits (when the client takes documentChanges) computed on the
analyzed snapshot of the current version. Clients that resolve `edit` get the list of actions
first and each edit on `codeAction/resolve`.
"""

from __future__ import annotations

import logging
import re

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from tritonlens.analysis.findings import Applicability, Finding
from tritonlens.analysis.suppress import ignore_comment_edit

from . import kernel_results
from .command_ids import APPLY_EDIT
from .diagnostics import SOURCE, shown_findings, to_diagnostic
from .documents import Snapshot, snapshot_of
from .lsp_data import (
    CodeActionData,
    FixAll,
    Rewrite,
    RuleFix,
    RuleIgnore,
    from_json,
    preview_of,
    to_json,
)

log = logging.getLogger(__name__)

FIX_ALL = "source.fixAll.tritonlens"
RULE_CODE = re.compile(r"^TL\d{3}$")  # rule findings; measurements ("profile") have nothing to fix
QUICKFIX = types.CodeActionKind.QuickFix


def kind_wanted(kind: str, only: list[str] | None) -> bool:
    if not only:
        return kind != FIX_ALL  # fix-all is a source action: only on request, never in the light bulb
    return any(kind == o or kind.startswith(o + ".") for o in only)


def workspace_edit(ls, snap: Snapshot, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    if ls.client_support.document_changes:
        return types.WorkspaceEdit(document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=snap.uri, version=snap.version),
                edits=edits,
            )
        ])
    return types.WorkspaceEdit(changes={snap.uri: edits})


def fix_edits(f: Finding, snap: Snapshot) -> list[types.TextEdit]:
    return [types.TextEdit(range=snap.range(e.range), new_text=e.new_text) for e in f.fix.edits] if f.fix else []


def ignore_edits(f: Finding, snap: Snapshot) -> list[types.TextEdit]:
    line = f.range.start.line
    text = snap.lines[line] if line < len(snap.lines) else ""
    new = ignore_comment_edit(text, f.code)
    if new == text:
        return []
    from tritonlens.analysis.findings import Range

    return [types.TextEdit(range=snap.range(Range.of(line, 0, line, len(text))), new_text=new)]


def _edits_key(edits) -> tuple:
    """What a fix changes, independent of the finding that offers it."""
    return tuple(sorted((e.range, e.new_text) for e in edits))


def fix_all_edits(findings: list[Finding], snap: Snapshot) -> list[types.TextEdit]:
    """Every safe fix (as `check --fix` applies them), dropping any that overlaps one taken before it."""
    spans = []
    for f in findings:
        if f.fix is None or not f.fix.applicability.applies():
            continue
        edits = sorted(f.fix.edits, key=lambda e: (e.range.start, e.range.end))
        spans.append((edits[0].range.start, edits[-1].range.end, f))
    spans.sort(key=lambda s: (s[0], s[1]))
    out: list[types.TextEdit] = []
    taken: list[tuple] = []
    for start, end, f in spans:
        if any(not (end <= a or start >= b) or (start == a and end == b) for a, b in taken):
            continue
        taken.append((start, end))
        out.extend(fix_edits(f, snap))
    return out


def rewrite_edits(snap: Snapshot, new_text: str) -> list[types.TextEdit]:
    """The minimal line edits turning the document into a verified rewrite."""
    import difflib

    from tritonlens.analysis.findings import Position

    old = snap.text.splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)

    def at(i: int) -> types.Position:
        if i < len(old):
            return types.Position(line=i, character=0)
        last = len(snap.lines) - 1
        return snap.position(Position(last, len(snap.lines[last])))

    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            out.append(types.TextEdit(range=types.Range(start=at(i1), end=at(i2)), new_text="".join(new[j1:j2])))
    return out


def _rewrites(ls, snap: Snapshot, module, rng: types.Range | None):
    """(kernel, index, candidate) for the proven rewrite of each kernel in `rng`, still valid for this text."""
    if module is None:
        return
    lo, hi = (rng.start.line, rng.end.line) if rng is not None else (0, len(snap.lines))
    for k in module.kernels:
        if k.range.end.line < lo or k.range.start.line > hi:
            continue
        outcome = ls.measurements.optimized(snap.uri, k.name)
        if outcome is None or outcome.text != snap.text:
            continue
        best = outcome.offered()
        if best is not None:
            yield k, 0, best


def _match(diag: types.Diagnostic, findings: list[Finding], snap: Snapshot) -> Finding | None:
    for f in findings:
        if f.code == diag.code and snap.range(f.range) == diag.range and (not diag.message or diag.message == f.message):
            return f
    for f in findings:  # clients may echo a trimmed message
        if f.code == diag.code and snap.range(f.range) == diag.range:
            return f
    return None


async def _current(ls, uri: str):
    snap = snapshot_of(ls, uri)
    if snap is None:
        return None, None, []
    result = await ls.analysis.analyze(snap, ls.settings.for_uri(uri))
    st = ls.analysis.state(uri)
    return snap, result, shown_findings(ls, st, snap, result)


def _action_data(data) -> CodeActionData | None:
    """The data of an action the client resolves, when this server put it there. Clients also ask
    to resolve actions they made themselves (VS Code's "Preview" beside a rewrite, without data or
    with the client's own): those are not ours to complete, and are answered as they came."""
    if not isinstance(data, dict) or not isinstance(data.get("uri"), str):
        return None  # cattrs would read a null uri as the text "None"
    try:
        return from_json(data, CodeActionData)
    except Exception as exc:  # noqa: BLE001 - cattrs' validation errors, or an unknown "action" tag
        log.info("codeAction/resolve of data this server did not write (%s): answered unchanged", exc)
        return None


def register(ls) -> None:
    support = ls.client_support

    def action(title: str, kind: str, snap: Snapshot, edits_fn, data: CodeActionData, diag=None, preferred=False):
        if not support.code_action_literals:
            # Old clients take only Commands: the server applies the edit itself.
            return types.Command(title=title, command=APPLY_EDIT,
                                 arguments=[to_json(workspace_edit(ls, snap, edits_fn()))])
        a = types.CodeAction(title=title, kind=kind, diagnostics=[diag] if diag else None,
                             is_preferred=preferred or None)
        # The data names the document (and version) even where the edit comes with the action:
        # a client previewing or resolving it later needs both.
        a.data = to_json(data, CodeActionData)
        if not support.code_action_resolves_edit:
            a.edit = workspace_edit(ls, snap, edits_fn())
        return a

    @ls.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[QUICKFIX, FIX_ALL], resolve_provider=support.code_action_resolves_edit),
    )
    async def code_action(params: types.CodeActionParams):
        snap, result, findings = await _current(ls, params.text_document.uri)
        if snap is None:
            return None
        only = params.context.only
        out = []
        uri, version = snap.uri, snap.version
        if kind_wanted(QUICKFIX, only):
            # The same edit reached from several findings (configurations, or rules that agree on the
            # fix) is one action that names every diagnostic it resolves.
            offered: dict[tuple, types.CodeAction | types.Command] = {}

            def offer(key: tuple, make, ours):
                if key in offered:
                    known = offered[key]
                    if isinstance(known, types.CodeAction) and known.diagnostics is not None and ours not in known.diagnostics:
                        known.diagnostics.append(ours)
                    return
                offered[key] = make()
                out.append(offered[key])

            for diag in params.context.diagnostics:
                if diag.source not in (None, SOURCE) or not isinstance(diag.code, str) or not RULE_CODE.match(diag.code):
                    continue
                f = _match(diag, findings, snap)
                if f is None:
                    continue  # from another version: the client will ask again
                ours = to_diagnostic(f, snap, support)
                if f.fix is not None and f.fix.applicability is not Applicability.DISPLAY_ONLY:
                    # an unsafe fix is offered but not preferred, so no "apply preferred fix" takes it blindly
                    safe = f.fix.applicability is Applicability.SAFE
                    offer(("fix", _edits_key(f.fix.edits)), lambda f=f, ours=ours, safe=safe: action(
                        f"tritonlens ({f.code}): {f.fix.title}" + ("" if safe else " (unsafe)"), QUICKFIX,
                        snap, lambda: fix_edits(f, snap),
                        RuleFix(uri, version, f.code, ours.range, f.message), ours, preferred=safe), ours)
                if ignore_edits(f, snap):
                    offer(("ignore", f.code, f.range.start.line), lambda f=f, ours=ours: action(
                        f"Ignore {f.code} on this line", QUICKFIX, snap, lambda: ignore_edits(f, snap),
                        RuleIgnore(uri, version, f.code, ours.range, f.message), ours), ours)
        if kind_wanted(QUICKFIX, only):
            for k, i, cand in _rewrites(ls, snap, getattr(result, "module", None), params.range):
                title = kernel_results.rewrite_title(cand)
                # The verdict and its evidence travel with the action (a client shows them before the
                # edit is applied); the rewritten source does not: the edit carries it.
                out.append(action(title, QUICKFIX, snap, lambda c=cand: rewrite_edits(snap, c.source),
                                  Rewrite(uri, version, k.name, i, preview_of(cand))))
        if kind_wanted(FIX_ALL, only) and any(f.fix and f.fix.applicability.applies() for f in findings):
            out.append(action("tritonlens: fix all auto-fixable problems", FIX_ALL, snap,
                              lambda: fix_all_edits(findings, snap), FixAll(uri, version)))
        return out or None

    if support.code_action_resolves_edit:
        @ls.feature(types.CODE_ACTION_RESOLVE)
        async def resolve(item: types.CodeAction):
            data = _action_data(item.data)
            if data is None:
                return item
            snap, result, findings = await _current(ls, data.uri)
            if snap is None:
                log.info("codeAction/resolve for %s, which is not open: answered unchanged", data.uri)
                return item
            if data.version != snap.version:
                raise JsonRpcInvalidRequest(
                    message=f"tritonlens: the document changed (v{data.version} → v{snap.version}); "
                    "ask for code actions again")
            if isinstance(data, FixAll):
                edits = fix_all_edits(findings, snap)
            elif isinstance(data, Rewrite):
                found = [c for k, i, c in _rewrites(ls, snap, getattr(result, "module", None), None)
                         if k.name == data.kernel and i == data.index]
                if not found:
                    raise JsonRpcInvalidRequest(message="tritonlens: that rewrite is no longer valid; optimize again")
                edits = rewrite_edits(snap, found[0].source)
            else:
                probe = types.Diagnostic(range=data.range, message=data.message, code=data.code)
                f = _match(probe, findings, snap)
                if f is None:
                    raise JsonRpcInvalidRequest(message=f"tritonlens: {data.code} is no longer reported there")
                edits = ignore_edits(f, snap) if isinstance(data, RuleIgnore) else fix_edits(f, snap)
            item.edit = workspace_edit(ls, snap, edits)
            return item

    @ls.command(APPLY_EDIT)
    async def apply_edit(edit: dict):
        try:
            we = from_json(edit, types.WorkspaceEdit)
        except Exception as exc:
            raise JsonRpcInvalidParams(message=f"{APPLY_EDIT}: not a WorkspaceEdit: {exc}") from exc
        res = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=we, label="tritonlens"))
        return {"applied": bool(res and res.applied)}
