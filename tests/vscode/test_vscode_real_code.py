"""VS Code (code-server in Chromium) on a kernel file written the way model libraries write theirs:
a helper that picks the block size and warps in the wrapper, a JIT helper the kernel calls, autotune
configs from a plain function, constexpr locals. drive_real_code.js acts only through the page, as a
person would; one run serves every test here. Screenshots of each step: tests/output/vscode/real_code/.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from code_server import prepare, run_code_server
from vscode_env import OUTPUT

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).with_name("data") / "fused_gelu_scale.py"
KERNEL = "gelu_gate_fwd_kernel"  # block and warps from the wrapper's helper; calls the JIT helper
AUTOTUNED = "row_shift_kernel"  # configs from scale_configs(), a constexpr local, a TL003 finding
SHOTS = OUTPUT / "real_code"
# Typed into KERNEL key by key: a constexpr local, then a line using it (the kernel computes the same).
TYPING = [("    mask = cols < n_cols\n", "HALF: tl.constexpr = 0.5"),
          ("    c = gelu_tanh(a).to(b.dtype) * b\n", "c = c * HALF + c * HALF")]
FIX_TEXT = "mask=cols < n_cols, other=0.0"
CPU_SUMMARY = "correct, not timed: run on a GPU to prove it faster"


def typed_text(original: str) -> tuple[str, list[tuple[int, str]]]:
    """The file once TYPING is typed, and the 1-based lines to type after, in typing order."""
    lines = original.splitlines(keepends=True)
    plan = []
    for after, text in TYPING:
        at = lines.index(after, next(i for i, line in enumerate(lines) if line.startswith(f"def {KERNEL}(")))
        lines.insert(at + 1, after[: len(after) - len(after.lstrip())] + text + "\n")
        plan.append((at + 1, text))
    return "".join(lines), plan


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.fixture(scope="module")
def session(tmp_path_factory, vsix):
    """One code-server session: (what the page showed, the file on disk after it, the file expected)."""
    root = tmp_path_factory.mktemp("real_code")
    env_ = prepare(root, vsix, [FIXTURE])
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    expected, plan = typed_text(FIXTURE.read_text())
    ui = root / "ui.json"
    drive, total_s = run_code_server(
        env_, root, driver="drive_real_code.js", timeout=560,
        extra_env={"TRITON_INTERPRET": "1"},  # no GPU here: kernels run in Triton's interpreter
        drive_env={
            "UI_OUT": str(ui), "SHOTS": str(SHOTS), "FILE": FIXTURE.name, "KERNEL": KERNEL,
            "KERNEL_LINE": str(line_of(expected, f"def {KERNEL}(") + 2),
            "TYPING": json.dumps(plan),
            "HOVER": json.dumps([[k, line_of(expected, f"def {k}(")] for k in (KERNEL, AUTOTUNED)]),
            "FIX_LINE": json.dumps([line_of(expected, FIX_TEXT), FIX_TEXT]),
            "RUN_TIMEOUT_MS": "150000",
        },
    )
    for f in (ui, root / "code-server.log", *sorted(env_["user"].glob("logs/**/*tritonlens*.log"))):
        if f.exists():
            shutil.copy(f, SHOTS / f.name)
    assert drive.returncode == 0, drive.stdout + drive.stderr
    seen = json.loads(ui.read_text())
    (SHOTS / "timings.json").write_text(json.dumps({"total_s": round(total_s, 1), "steps": seen["steps"]}, indent=2))
    return seen, (env_["workspace"] / FIXTURE.name).read_text(), expected


def test_typing_key_by_key_shows_no_error_notification(session):
    seen, on_disk, expected = session
    assert seen["typed"] == [text for _, text in TYPING]
    assert on_disk == expected, "the file saved is not what was typed (a completion or auto-close took a key?)"
    errors = [n for n in seen["notifications"] if n["severity"] == "error"]
    assert errors == [], errors


def test_kernel_hover_is_a_card_of_at_most_12_lines(session):
    seen, _, _ = session
    for kernel in (KERNEL, AUTOTUNED):
        card = seen["hovers"][kernel]
        assert card["visible"], card
        lines = [line for line in card["text"].splitlines() if line.strip()]
        assert len(lines) <= 12, card["text"]
        assert card["scrolls"] is False, f"the card of {kernel} is clipped: {card['text']}"


def test_lens_and_palette_show_the_same_notification(session):
    seen, _, _ = session
    for verb in ("profile", "optimize"):
        lens, palette = seen["runs"][verb]["lens"], seen["runs"][verb]["palette"]
        assert palette["message"], palette
        assert palette["message"].startswith(f"tritonlens {verb} {KERNEL}: "), palette
        assert palette["severity"] == "info", palette
        assert (lens["message"], lens.get("buttons")) == (palette["message"], palette["buttons"]), (lens, palette)
        assert lens["all"] == [lens["message"]] and palette["all"] == [palette["message"]], "one message a run"
    assert seen["runs"]["profile"]["palette"]["buttons"] == ["Show report"]
    # Kernels run in the interpreter here, GPU or not: nothing is timed, so no rewrite is proven.
    optimize = seen["runs"]["optimize"]["palette"]
    assert CPU_SUMMARY in optimize["message"], optimize
    assert optimize["buttons"] == ["Show report"], optimize


def test_preview_opens_a_diff_without_an_error(session):
    seen, on_disk, expected = session
    preview = seen["preview"]
    assert preview["diffOpen"], preview
    assert re.match(rf"{re.escape(FIXTURE.name)} ↔ ", preview["tab"]), preview
    if preview["path"] == "rule fix":
        assert "tritonlens (TL003)" in preview["tab"], preview
        assert 'other=float("-inf")' in preview["modified"], preview
    assert preview["inserted"] > 0, preview
    assert on_disk == expected, "a preview changes nothing until Apply"
    after = [n for n in seen["notifications"] if n["severity"] == "error" and n["at"] >= preview["startedAt"]]
    assert after == [], after
