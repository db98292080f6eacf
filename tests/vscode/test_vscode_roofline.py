"""VS Code (code-server in Chromium): the report view's roofline picture, from a profile of
examples/matmul.py recorded on an H100 and opened with "tritonlens: Open recorded profile…";
"tritonlens: Show last report" then shows the launch on the measured roofline, an image the
webview decoded. drive_roofline.js acts only through the page. Screenshot:
tests/output/vscode/roofline/.
"""

from __future__ import annotations

import json
import shutil

import pytest
from code_server import prepare, run_code_server
from vscode_env import OUTPUT, REPO

pytestmark = pytest.mark.slow

SOURCE = REPO / "examples" / "matmul.py"
RECORDED = REPO / "tests" / "fixtures" / "roofline" / "matmul.profile.json"
SHOTS = OUTPUT / "roofline"


@pytest.fixture(scope="module")
def seen(tmp_path_factory, vsix) -> dict:
    root = tmp_path_factory.mktemp("roofline")
    env_ = prepare(root, vsix, [SOURCE])
    recorded = root / "from-the-gpu-host" / "matmul-h100.json"
    recorded.parent.mkdir()
    shutil.copy(RECORDED, recorded)
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    ui = root / "ui.json"
    drive, _ = run_code_server(env_, root, driver="drive_roofline.js", timeout=240, extra_env={}, drive_env={
        "UI_OUT": str(ui), "SHOTS": str(SHOTS), "FILE": SOURCE.name, "PROFILE": str(recorded)})
    for f in (ui, root / "code-server.log"):
        if f.exists():
            shutil.copy(f, SHOTS / f.name)
    assert drive.returncode == 0, drive.stdout + drive.stderr
    return json.loads(ui.read_text())


def test_the_report_view_shows_the_recorded_launch_on_the_roofline(seen):
    assert any(t.startswith("tritonlens: opened matmul-h100.json: matmul_kernel") for t in seen["toasts"]), seen["toasts"]
    image = seen["image"]
    assert image is not None, seen
    assert image["alt"] == "roofline of matmul.py" and image["heading"] == "Roofline"
    assert image["title"] == "Profile of matmul.py"
    assert image["src"] == "data:image/svg+xml;base64,"
    # decoded at the figure's size (matplotlib's points: 72 a inch) and drawn at a readable size
    assert image["complete"] and image["naturalWidth"] > 400 and image["naturalHeight"] > 250
    assert image["shownWidth"] > 300
