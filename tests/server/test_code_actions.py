"""Code actions end to end: each quick fix applied by the client gives the expected text."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.findings import apply_edits

from lsp_helpers import Doc, apply_text_edits, edits_of
from test_diagnostics import DATA, copy, tl001

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def client(module_client):
    """This module's tests share one server per client profile."""
    return module_client

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rules"


async def test_quick_fix_gives_the_expected_text(client, tmp_path):
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    diag = tl001(await doc.diagnostics())[0]
    actions = await doc.code_actions([diag])
    titles = [a.title for a in actions]
    fix = next(a for a in actions if a.title.startswith("tritonlens (TL001): "))
    # TL001's fix changes what each program covers: offered, marked unsafe, never preferred
    assert fix.kind == types.CodeActionKind.QuickFix and not fix.is_preferred and fix.title.endswith(" (unsafe)")
    assert "Ignore TL001 on this line" in titles
    edit = await doc.resolved_edit(fix)
    if client.capabilities.workspace.workspace_edit.document_changes:
        # versioned: the client refuses the edit if the document moved on
        assert edit.document_changes[0].text_document.version == doc.version
    assert doc.apply(edit) == (DATA / "scale_fixed.py").read_text()
    assert tl001(await doc.diagnostics()) == []


async def test_ignore_on_this_line(client, tmp_path):
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    diag = tl001(await doc.diagnostics())[0]
    actions = await doc.code_actions([diag])
    ignore = next(a for a in actions if a.title == "Ignore TL001 on this line")
    text = doc.apply(await doc.resolved_edit(ignore))
    line = text.split("\n")[diag.range.start.line]
    assert line.endswith("tl.arange(0, BLOCK)  # tritonlens: ignore[TL001]")
    assert tl001(await doc.diagnostics()) == []


async def test_quick_fix_of_a_safe_rule_is_preferred(client, tmp_path):
    doc = Doc(client, copy(tmp_path, "k.py", _TL016)).open()
    diag = next(d for d in await doc.diagnostics() if d.code == "TL016")
    fix = next(a for a in await doc.code_actions([diag]) if a.title.startswith("tritonlens (TL016): "))
    assert fix.is_preferred and "unsafe" not in fix.title


_TL016 = '''import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, n, BLOCK):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
'''


_ONE_FIX_TWO_FINDINGS = '''import triton
import triton.language as tl


@triton.jit
def rows_kernel(x_ptr, out_ptr, ROWS: int, BLOCK: tl.constexpr):
    rows = tl.arange(0, ROWS)
    acc = tl.zeros((ROWS, BLOCK), dtype=tl.float32)
    acc += tl.load(x_ptr + rows[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :])
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.sum(acc, axis=0))
'''


async def test_the_same_edit_from_several_findings_is_one_action(client, tmp_path):
    # two lines need `ROWS` constexpr: one parameter edit fixes both, offered once
    doc = Doc(client, copy(tmp_path, "rows.py", _ONE_FIX_TWO_FINDINGS)).open()
    diags = [d for d in await doc.diagnostics() if d.code == "TL016"]
    assert len(diags) == 2 and diags[0].range.start.line != diags[1].range.start.line
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=10, character=0))
    actions = await doc.code_actions(diags, rng=whole)
    fixes = [a for a in actions if a.title.startswith("tritonlens (TL016): ")]
    assert len(fixes) == 1, [a.title for a in fixes]
    (fix,) = fixes
    if isinstance(fix, types.CodeAction):
        assert fix.is_preferred  # safe
        assert {d.range.start.line for d in fix.diagnostics} == {d.range.start.line for d in diags}
        text = doc.apply(await doc.resolved_edit(fix))
        assert "def rows_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, BLOCK: tl.constexpr):" in text
    # one "Ignore" per line: the two findings sit on different lines
    assert len([a for a in actions if a.title == "Ignore TL016 on this line"]) == 2


async def test_fix_all(client, tmp_path):
    # fix-all applies the safe fixes (TL016's) and leaves the unsafe ones (TL001's) to the user
    text = (DATA / "scale.py").read_text() + '''

@triton.jit
def shift_kernel(x_ptr, n, BLOCK, ROWS):
    offs = tl.arange(0, BLOCK)
    rows = tl.arange(0, ROWS)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
    tl.store(x_ptr + rows, tl.load(x_ptr + rows, mask=rows < n) + 1, mask=rows < n)
'''
    doc = Doc(client, copy(tmp_path, "two.py", text)).open()
    diags = await doc.diagnostics()
    assert len(tl001(diags)) == 1 and len([d for d in diags if d.code == "TL016"]) == 2
    actions = await doc.code_actions([], only=["source.fixAll.tritonlens"])
    assert [a.kind for a in actions] == ["source.fixAll.tritonlens"]
    doc.apply(await doc.resolved_edit(actions[0]))
    diags = await doc.diagnostics()
    assert [d for d in diags if d.code == "TL016"] == []
    assert "def shift_kernel(x_ptr, n, BLOCK: tl.constexpr, ROWS: tl.constexpr):" in doc.text
    assert len(tl001(diags)) == 1 and "BLOCK = 100" in doc.text  # unsafe: not applied
    # only unsafe fixes left: no fix-all offered
    assert not [a for a in (await doc.code_actions([], only=["source"]) or []) if a.kind == "source.fixAll.tritonlens"]


async def test_resolve_refuses_a_stale_action(client, tmp_path):
    if not (client.capabilities.text_document.code_action.resolve_support):
        pytest.skip("client does not resolve code actions")
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    diag = tl001(await doc.diagnostics())[0]
    fix = (await doc.code_actions([diag]))[0]
    doc.replace(doc.text + "\n# edited\n")
    await doc.diagnostics()
    with pytest.raises(JsonRpcException, match="document changed"):
        await client.code_action_resolve_async(fix)


def _fixable_fixtures():
    analyzer = Analyzer()
    for path in sorted(FIXTURES.glob("TL*/positive*.py")):
        text = path.read_text()
        res = analyzer.analyze(text, path=str(path), select=[path.parent.name])
        if any(f.fix for f in res.findings):
            yield path


async def test_every_rule_fix_through_the_server(client, tmp_path):
    """Every deterministic fix of every rule fixture, applied the way the editor applies it,
    gives exactly the engine's own fixed text (positions survive the encoding round trip)."""
    analyzer = Analyzer()
    fixtures = list(_fixable_fixtures())
    assert fixtures, "no rule fixture has a deterministic fix"
    for path in fixtures:
        code = path.parent.name
        text = path.read_text()
        expected = {}
        for f in analyzer.analyze(text, path=str(path)).findings:
            if f.code == code and f.fix:
                expected.setdefault((f.range, f.message), apply_edits(text, f.fix.edits))
        doc = Doc(client, copy(tmp_path, f"{code}_{path.name}", text)).open()
        diags = [d for d in await doc.diagnostics() if d.code == code and d.data and d.data.get("fix")]
        assert len(diags) == len(expected), (path.name, [d.message for d in diags])
        got = set()
        for d in diags:
            actions = await doc.code_actions([d])
            fix = next(a for a in actions if a.title.startswith(f"tritonlens ({code}): "))
            edit = await doc.resolved_edit(fix)
            got.add(apply_text_edits(text, edits_of(edit, doc.uri), doc.encoding))
        assert got == set(expected.values()), path.name
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri)))


async def test_actions_for_foreign_diagnostics_are_ignored(client, tmp_path):
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    await doc.diagnostics()
    other = types.Diagnostic(range=types.Range(start=types.Position(line=0, character=0),
                                               end=types.Position(line=0, character=3)),
                             message="unused import", source="ruff", code="F401")
    actions = await doc.code_actions([other])
    assert not [a for a in (actions or []) if a.kind == types.CodeActionKind.QuickFix]
