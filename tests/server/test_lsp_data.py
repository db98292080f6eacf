"""The typed data on diagnostics and code actions survives the trip to the client and back, and
the client capabilities resolve to what the server adapts to."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError

import pytest
from cattrs.errors import ClassValidationError
from lsprotocol import types
from pytest_lsp import client_capabilities

from server.capabilities import MARKDOWN, PLAINTEXT, ClientSupport
from tritonlens.profiling.worker.reports import CandidateReport
from server.lsp_data import (
    CodeActionData,
    DiagnosticData,
    DiagnosticFix,
    FixAll,
    Rewrite,
    RuleFix,
    RuleIgnore,
    from_json,
    preview_of,
    to_json,
)

R = types.Range(start=types.Position(line=3, character=4), end=types.Position(line=3, character=9))


def _wire(obj, as_type=None):
    """Through JSON text, as the client sees it."""
    return json.loads(json.dumps(to_json(obj, as_type)))


@pytest.mark.parametrize("data", [
    RuleFix("file:///k.py", 7, "TL001", R, "BLOCK=100 is not a power of two"),
    RuleIgnore("file:///k.py", None, "TL002", R),
    Rewrite("file:///k.py", 2, "add_kernel", 1, CandidateReport(
        "loop", "Unroll the loop", True, kernel="add_kernel", speedup=1.4, more={"checks": 12})),
    FixAll("file:///k.py", 3),
])
def test_code_action_data_round_trip(data):
    wire = _wire(data, CodeActionData)
    assert from_json(wire, CodeActionData) == data
    # the tag the VS Code client reads to tell rewrites and ignores apart
    assert wire["action"] == {RuleFix: "fix", RuleIgnore: "ignore", Rewrite: "rewrite", FixAll: "fixAll"}[type(data)]
    assert wire["uri"] == "file:///k.py"


def test_rewrite_data_carries_the_candidate_without_its_source():
    """The VS Code client previews the candidate from this JSON (rewriteData.ts): the optimizer's
    candidate fields at the top of `candidate`, the rewritten file only in the edit."""
    cand = CandidateReport("loop", "Unroll the loop", True, reason="faster", kernel="add_kernel", speedup=1.4,
                           diff="--- a\n+++ b\n", source="def add_kernel(): ...", more={"checks": 12, "mode": "gpu"})
    wire = _wire(Rewrite("file:///k.py", 2, "add_kernel", 0, preview_of(cand)), CodeActionData)
    assert wire["candidate"] == {"proposer": "loop", "title": "Unroll the loop", "accepted": True, "reason": "faster",
                                 "kernel": "add_kernel", "quick_fix_title": None, "speedup": 1.4,
                                 "max_rel_error": None, "checks": 12, "mode": "gpu"}
    back = from_json(wire, CodeActionData)
    assert back.candidate.more == {"checks": 12, "mode": "gpu"} and back.candidate.source is None
    with pytest.raises(ClassValidationError):
        from_json({**wire, "candidate": {**wire["candidate"], "accepted": "yes"}}, CodeActionData)


def test_code_action_data_refuses_what_it_did_not_write():
    with pytest.raises(ClassValidationError):
        from_json({"action": "fix", "uri": "file:///k.py"}, CodeActionData)  # no version, code, range
    with pytest.raises(KeyError):
        from_json({"action": "explode", "uri": "file:///k.py", "version": 1}, CodeActionData)


def test_diagnostic_data_round_trip_in_client_units():
    data = DiagnosticData("scale_kernel", DiagnosticFix("use 128", [types.TextEdit(range=R, new_text="128")]))
    wire = _wire(data)
    assert wire == {"kernel": "scale_kernel", "fix": {"title": "use 128", "edits": [
        {"range": {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 9}}, "newText": "128"}]}}
    assert from_json(wire, DiagnosticData) == data
    # inside a Diagnostic, as published
    diag = _wire(types.Diagnostic(range=R, message="m", data=DiagnosticData(None)))
    assert diag["data"] == {"kernel": None}


def test_client_support_of_known_clients():
    vscode = ClientSupport.of(client_capabilities("visual-studio-code"))
    nvim = ClientSupport.of(client_capabilities("neovim"))
    # the pytest-lsp profiles: VS Code 1.x pushes; Neovim 0.10 would pull but takes no refresh,
    # so it is pushed to as well (late findings would wait for its next edit); it asks for inlay hints
    assert not vscode.pull_diagnostics and vscode.code_action_resolves_edit and vscode.document_changes
    assert vscode.code_lens_refresh and not vscode.inlay_hints
    assert not nvim.pull_diagnostics and not nvim.diagnostic_refresh
    assert nvim.inlay_hints and nvim.inlay_hint_refresh and not nvim.document_changes
    assert vscode.hover_markup == nvim.hover_markup == MARKDOWN
    assert ClientSupport.of(None) == ClientSupport()


def test_client_support_plaintext_only():
    caps = types.ClientCapabilities(text_document=types.TextDocumentClientCapabilities(
        hover=types.HoverClientCapabilities(content_format=[PLAINTEXT]),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(related_information=False)))
    s = ClientSupport.of(caps)
    assert s.hover_markup == PLAINTEXT and s.completion_markup == MARKDOWN
    assert not s.related_information and s.code_description
    with pytest.raises(FrozenInstanceError):
        s.hover_markup = MARKDOWN  # resolved once: frozen


def test_reports_go_out_as_strict_json_even_with_an_infinite_error():
    import json

    from tritonlens.profiling.worker.reports import CandidateReport, OptimizeReport
    from tritonlens.server.lsp_data import wire_json

    cand = CandidateReport(proposer="rules", title="coarsen axis 0 by 2", accepted=False,
                           reason="wrong result on case 0: NaN or infinities differ from the original's",
                           kernel="k", quick_fix_title="", speedup=None, max_rel_error=float("inf"), diff="",
                           more={"evidence": {"checks": [{"rel_err": float("inf"), "max_err": float("nan")}]}})
    report = OptimizeReport(path="/k.py", mode="interpreter", candidates=[cand])
    with pytest.raises(ValueError):
        json.dumps(report.to_json(), allow_nan=False)  # what a client's JSON parser refuses
    wired = json.loads(json.dumps(wire_json(report.to_json()), allow_nan=False))
    assert wired["candidates"][0]["max_rel_error"] is None
    assert wired["candidates"][0]["evidence"]["checks"] == [{"rel_err": None, "max_err": None}]
