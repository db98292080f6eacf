"""VS Code (code-server in Chromium): a recorded line profile of examples/softmax.py, opened with
"tritonlens: Open recorded profile…" and its file dialog, shows the hottest lines' stall hints at
the end of those lines and a hover on the hottest; a line typed above the kernel moves them along.
drive_line_hints.js acts only through the page. Screenshots: tests/output/vscode/line_hints/.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from code_server import prepare, run_code_server
from line_profiles import expected, line_profile, softmax_profile
from vscode_env import OUTPUT, REPO

pytestmark = pytest.mark.slow

SOURCE = REPO / "examples" / "softmax.py"
SHOTS = OUTPUT / "line_hints"
ABOVE = 18  # a blank line between the imports and the kernel's decorator


def source_line(n: int) -> str:
    return SOURCE.read_text().splitlines()[n - 1].strip()


@pytest.fixture(scope="module")
def seen(tmp_path_factory, vsix) -> dict:
    root = tmp_path_factory.mktemp("line_hints")
    env_ = prepare(root, vsix, [SOURCE])
    recorded = root / "from-the-gpu-host" / "softmax-lines.json"
    recorded.parent.mkdir()
    shutil.copy(softmax_profile(), recorded)
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    ui = root / "ui.json"
    hottest = expected(softmax_profile())[0][0]
    drive, _ = run_code_server(env_, root, driver="drive_line_hints.js", timeout=280, extra_env={}, drive_env={
        "UI_OUT": str(ui), "SHOTS": str(SHOTS), "FILE": SOURCE.name, "PROFILE": str(recorded),
        "HOT": source_line(hottest), "ABOVE": str(ABOVE)})
    for f in (ui, root / "code-server.log"):
        if f.exists():
            shutil.copy(f, SHOTS / f.name)
    assert drive.returncode == 0, drive.stdout + drive.stderr
    return json.loads(ui.read_text())


def _code(hinted: dict) -> str:
    return hinted["text"][: -len(hinted["hint"])].strip()


def visible(hint: str, label: str) -> bool:
    """The hint shows the whole label: VS Code cuts a line's hints past 43 characters
    (editor.inlayHints.maximumLength), and every label fits them."""
    return hint == label and len(label) <= 43


def shows(hinted: dict, source: str) -> bool:
    """The editor line shows the source line: its words in order (the shape hints come between)."""
    words = iter(re.findall(r"\w+", _code(hinted)))
    return all(w in words for w in re.findall(r"\w+", source))


def test_the_hints_sit_at_the_end_of_the_profiled_lines(seen):
    want = expected(softmax_profile())
    assert [visible(h["hint"], label) for h, (_, label) in zip(seen["hints"], sorted(want))] == [True] * len(want), \
        (seen["hints"], want)
    assert len(seen["hints"]) == len(want)
    assert all(shows(h, source_line(n)) for h, (n, _) in zip(seen["hints"], sorted(want))), seen["hints"]
    assert any(t.startswith("tritonlens: opened softmax-lines.json: softmax_kernel") for t in seen["toasts"]), \
        seen["toasts"]


def test_the_hottest_line_hovers_with_reasons_and_instructions(seen):
    from tritonlens.profiling.worker.line_profile import stall_text

    assert seen["hover"] is not None, seen
    top = line_profile(softmax_profile()).lines[0]
    assert re.search(rf"{100 * top.share:.0f}% of softmax_kernel's stall samples", seen["hover"]), seen["hover"]
    assert stall_text(top.stalls[0].reason) in seen["hover"]
    assert top.instructions[0].kind in seen["hover"]


def test_a_line_typed_above_the_kernel_moves_the_hints_with_their_lines(seen):
    assert len(seen["moved"]) == len(seen["hints"])
    assert [_code(h) for h in seen["moved"]] == [_code(h) for h in seen["hints"]]
    # a label naming the load a stall waits on names it where it is now
    assert [h["hint"] for h in seen["moved"]] == [label for _, label in sorted(expected(softmax_profile(), moved=1))]
