"""Per-line stall samples in the editor, replayed on the CPU: a recorded profile (a ProfileReport
whose kernel's first launch has `lines`) opened through tritonlens.server.openProfile gives
end-of-line inlay hints on the kernel's hottest lines and a hover with the reasons and the
instructions; the hints move with an edit above the kernel, go once the kernel is edited, and
never reach the Problems panel. A report that is no profile changes nothing."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest
from conftest import REPO
from line_profiles import expected, line_profile, recorded, softmax_profile
from lsp_helpers import Doc
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")

OPEN_PROFILE = "tritonlens.server.openProfile"


@pytest.fixture(scope="module")
def client(module_client):
    return module_client


def execute(client, *args):
    return client.workspace_execute_command_async(types.ExecuteCommandParams(command=OPEN_PROFILE,
                                                                             arguments=list(args)))


async def all_hints(doc: Doc) -> list[types.InlayHint]:
    last = len(doc.text.split("\n"))
    got = await doc.client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=last, character=0))))
    return list(got or [])


async def hints_of(doc: Doc) -> list[types.InlayHint]:
    return [h for h in await all_hints(doc) if "·" in _label(h)]  # stall hints: "41% · waiting on ..."


def _label(h: types.InlayHint) -> str:
    return h.label if isinstance(h.label, str) else "".join(p.value for p in h.label)


def line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.split("\n")) if needle in ln)


async def until(fetch, ok, timeout: float = 10.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        got = await fetch()
        if ok(got) or loop.time() > deadline:
            return got
        await asyncio.sleep(0.1)


@pytest.fixture
def softmax(client, tmp_path) -> Doc:
    path = tmp_path / "softmax.py"
    shutil.copy(REPO / "examples" / "softmax.py", path)
    return Doc(client, path).open()


async def test_recorded_profile_gives_hints_and_hover_at_its_lines(client, softmax):
    profile = softmax_profile()
    want = expected(profile)
    assert len(want) >= 2, want
    await softmax.diagnostics()
    result = await execute(client, softmax.uri, str(profile))
    assert result["ok"] is True, result
    assert result["shown"] == ["softmax_kernel"] and result["stale"] == [] and result["hot_lines"] == len(want)

    hints = await hints_of(softmax)
    lines = softmax.text.split("\n")
    # The profile was taken of examples/softmax.py itself: its lines are the document's.
    assert [(h.position.line + 1, _label(h)) for h in hints] == sorted(want)
    # VS Code shows a line's hints up to 43 characters: each label is read whole.
    for h, s in zip(hints, sorted(line_profile(profile).hottest(), key=lambda s: s.line)):
        assert _label(h) == s.label() and len(_label(h)) <= 43
    for h in hints:
        assert h.position.character == len(lines[h.position.line])  # at the end of the line
        assert h.padding_left is True

    # A hot line shows its samples alone (VS Code cuts a line's hints at 43 characters in all);
    # the other lines keep their shapes.
    everything = await all_hints(softmax)
    hot = {h.position.line for h in hints}
    assert [h for h in everything if h.position.line in hot] == hints
    exp_line = line_of(softmax.text, "num = tl.exp(x - x_max)")
    assert exp_line not in hot and any(h.position.line == exp_line for h in everything)

    hot_line = want[0][0] - 1
    col = len(lines[hot_line]) - len(lines[hot_line].lstrip()) + 1
    hover = await softmax.hover(hot_line, col)
    text = hover.contents.value
    assert "stall samples" in text and "softmax" in text, text
    from tritonlens.profiling.worker.line_profile import stall_text

    top = line_profile(profile).lines[0]

    assert stall_text(top.stalls[0].reason) in text
    assert top.instructions[0].kind in text
    # On a hot tl.load, the samples come first and the load's own card after them.
    load = line_of(softmax.text, "x = tl.load(")
    if load in hot:
        card = (await softmax.hover(load, lines[load].index("tl.load") + 4)).contents.value
        assert card.index("stall samples") < card.index("tl.load"), card
        assert len(card.splitlines()) <= 12
    # A line with no samples has no stall card.
    cold = line_of(softmax.text, "row = tl.program_id(0)")
    assert cold + 1 not in [w for w, _ in want]
    cold_hover = await softmax.hover(cold, 10)
    assert cold_hover is None or "stall samples" not in cold_hover.contents.value

    # Samples are measurements, not findings: nothing of them in the Problems panel.
    diags = await softmax.diagnostics()
    assert not any("waiting" in d.message or "stall" in d.message or "%" in d.message and "·" in d.message
                   for d in diags), [d.message for d in diags]


async def test_hints_move_with_an_edit_above_the_kernel_and_go_with_one_inside(client, softmax):
    profile = softmax_profile()
    want = expected(profile)
    await softmax.diagnostics()
    assert (await execute(client, softmax.uri, str(profile)))["ok"] is True
    before = await hints_of(softmax)
    assert len(before) == len(want)

    # Three lines above the kernel: every hint moves down three lines, with the same label.
    text = softmax.text.replace("import triton\n", "import triton\n# one\n# two\n# three\n", 1)
    softmax.replace(text)
    await softmax.diagnostics()
    moved = await until(lambda: hints_of(softmax),
                        lambda got: [h.position.line for h in got] == [h.position.line + 3 for h in before])
    assert [h.position.line for h in moved] == [h.position.line + 3 for h in before]
    # A label that names another line (the load a stall waits on) names it where it is now.
    assert [_label(h) for h in moved] == [label for _, label in sorted(expected(profile, moved=3))]
    # The hottest line's hover names the load its stalls wait on where that load is now.
    top = line_profile(profile).lines[0]
    hot = top.line - 1 + 3
    hover = await softmax.hover(hot, len(softmax.text.split("\n")[hot]) - 2)
    assert hover is not None and "stall samples" in hover.contents.value
    for loaded in top.waits_on[:1]:
        assert f"load on line {loaded + 3}" in hover.contents.value, hover.contents.value

    # An edit inside the kernel: it is no longer the kernel that was measured.
    softmax.replace(softmax.text.replace("    y = num / den\n", "    y = num / den  # normalised\n", 1))
    await softmax.diagnostics()
    gone = await until(lambda: hints_of(softmax), lambda got: not got)
    assert gone == []
    hover = await softmax.hover(hot, len(softmax.text.split("\n")[hot]) - 2)
    assert hover is None or "stall samples" not in hover.contents.value


async def test_a_stale_profile_is_reported_not_shown(client, softmax):
    softmax.replace(softmax.text.replace("    y = num / den\n", "    y = num / den * 1.0\n", 1))
    softmax.save()
    await softmax.diagnostics()
    result = await execute(client, softmax.uri, str(softmax_profile()))
    assert result["ok"] is False and result["stale"] == ["softmax_kernel"] and result["shown"] == [], result
    assert "stale" in result["message"]
    assert await hints_of(softmax) == []


async def test_a_file_that_is_no_profile_is_one_clear_line_and_loses_nothing(client, softmax, tmp_path):
    await softmax.diagnostics()
    assert (await execute(client, softmax.uri, str(softmax_profile())))["ok"] is True
    shown = await hints_of(softmax)
    assert shown
    bad = tmp_path / "broken.json"
    bad.write_text('{"file": "softmax.py", "kernels": [')
    result = await execute(client, softmax.uri, str(bad))
    assert result["ok"] is False and result["error"].startswith("broken.json is not JSON"), result
    assert "\n" not in result["error"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"kernels": "none"}))
    result = await execute(client, softmax.uri, str(other))
    assert result["ok"] is False and "not a tritonlens profile report" in result["error"] and "\n" not in result["error"]
    missing = await execute(client, softmax.uri, str(tmp_path / "nowhere.json"))
    assert missing["ok"] is False and missing["error"].startswith("cannot read nowhere.json")
    # What was shown before is still shown.
    assert [(_label(h), h.position.line) for h in await hints_of(softmax)] == \
        [(_label(h), h.position.line) for h in shown]


async def test_a_profile_without_line_samples_says_how_to_get_them(client, softmax, tmp_path):
    await softmax.diagnostics()
    report = json.loads(softmax_profile().read_text())
    for kernel in report["kernels"]:
        for launch in kernel["launches"]:
            launch.pop("lines", None)
    timed_only = tmp_path / "timed.json"
    timed_only.write_text(json.dumps(report))
    result = await execute(client, softmax.uri, str(timed_only))
    assert result["ok"] is True and result["shown"] == ["softmax_kernel"] and result["hot_lines"] == 0, result
    assert "profile with --lines" in result["message"]
    assert await hints_of(softmax) == []


@pytest.mark.parametrize("profile", recorded(), ids=lambda p: p.stem)
async def test_every_recorded_example_shows_its_hottest_lines(client, tmp_path, profile):
    """Each example's H100 profile on a copy of the example with a line above its kernel: every
    kernel's hottest lines, one line down (autotune decorators and all)."""
    report = json.loads(profile.read_text())
    source = REPO / report["file"]
    path = tmp_path / source.name
    path.write_text("# a line above the kernels\n" + source.read_text())
    doc = Doc(client, path).open()
    await doc.diagnostics()
    result = await execute(client, doc.uri, str(profile))
    names = [k["name"] for k in report["kernels"]]
    assert result["shown"] == names and result["stale"] == [], result
    want = sorted((line + 1, label) for name in names for line, label in expected(profile, name, moved=1))
    assert want, "the recorded profile has no hot line"
    assert [(h.position.line + 1, _label(h)) for h in await hints_of(doc)] == want


async def test_bad_arguments_and_an_unopened_file_are_answered(client, tmp_path):
    from pygls.exceptions import JsonRpcException

    assert OPEN_PROFILE in client.init_result.capabilities.execute_command_provider.commands
    for args in ([], ["file:///x.py"], ["file:///x.py", 3]):
        with pytest.raises(JsonRpcException, match=r"expected arguments \[uri, path\]"):
            await execute(client, *args)
    closed = tmp_path / "closed.py"
    shutil.copy(REPO / "examples" / "softmax.py", closed)
    result = await execute(client, closed.as_uri(), str(softmax_profile()))
    assert result == {"ok": False, "error": "softmax.json: open the kernel's file in the editor first"}


async def test_the_kernel_report_says_where_the_time_goes_and_what_sampling_cost(client, softmax):
    profile = softmax_profile()
    await softmax.diagnostics()
    assert (await execute(client, softmax.uri, str(profile)))["ok"] is True
    report = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.report", arguments=[softmax.uri, "softmax_kernel"]))
    markdown = report["markdown"]
    lp = line_profile(profile)
    head = next(ln for ln in markdown.split("\n") if ln.startswith("**Where the time goes**"))
    assert f"{lp.total_samples:,} samples" in head and f"{lp.cost_s:.1f} s in a replay of its own after the timing" in head
    top = lp.lines[0]
    code = softmax.text.split("\n")[top.line - 1].strip()
    assert f"- line {top.line} `{code}`: {top.label()}" in markdown
