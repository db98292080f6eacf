"""`tritonlens profile|optimize FILE --plot [PATH]`: the roofline picture written beside the report.

The GPU's side comes from reports recorded on an H100 (tests/fixtures/roofline/), handed to the
CLI in place of a run; the CPU run at the end is real (Triton's interpreter times nothing)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tritonlens.profiling.worker.reports import OptimizeReport, ProfileReport

from tritonlens.cli import main

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "roofline"
MATMUL = REPO / "examples" / "matmul.py"
SVG = "{http://www.w3.org/2000/svg}"


def recorded(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def ids(svg_text: str) -> set[str]:
    return {g.get("id") for g in ET.fromstring(svg_text).iter(f"{SVG}g") if g.get("id")}


@pytest.fixture
def gpu_profile(monkeypatch):
    """profile_file answers the H100 recording of examples/matmul.py; the calls are counted."""
    from tritonlens.profiling import api

    calls = []

    def profile_file(path, **kwargs):
        calls.append((path, kwargs))
        return ProfileReport.from_json(recorded("matmul.profile.json"))

    monkeypatch.setattr(api, "profile_file", profile_file)
    return calls


def test_profile_plot_writes_the_svg_beside_the_json(gpu_profile, tmp_path, capsys):
    out = tmp_path / "matmul.svg"
    assert main(["profile", str(MATMUL), "--format", "json", "--plot", str(out)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["mode"] == "gpu"  # stdout is the report alone
    assert captured.err.strip() == f"tritonlens profile: roofline picture written to {out}"
    assert {"roof:copy", "roof:matmul", "point:matmul_kernel"} <= ids(out.read_text())
    assert not any(i.startswith("rewrite") for i in ids(out.read_text()))


def test_default_name_comes_from_the_file_and_png_from_the_extension(gpu_profile, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["profile", str(MATMUL), "--plot"]) == 0
    assert (tmp_path / "matmul.roofline.svg").read_text().startswith("<?xml")
    assert main(["profile", str(MATMUL), "--format", "json", "--plot", "pic.PNG"]) == 0
    assert (tmp_path / "pic.PNG").read_bytes().startswith(b"\x89PNG")
    assert "written to pic.PNG" in capsys.readouterr().err


@pytest.mark.parametrize("path, said", [
    ("{tmp}/missing/x.svg", "--plot: no folder {tmp}/missing to write x.svg in"),
    ("{tmp}/x.pdf", "--plot: the picture's name must end in .svg or .png, got '{tmp}/x.pdf'"),
    ("{tmp}/a_folder.svg", "--plot: cannot write {tmp}/a_folder.svg"),
])
def test_a_bad_path_is_one_line_before_anything_runs(gpu_profile, tmp_path, capsys, path, said):
    (tmp_path / "a_folder.svg").mkdir()
    assert main(["profile", str(MATMUL), "--format", "json", "--plot", path.format(tmp=tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == f"tritonlens profile: {said.format(tmp=tmp_path)}\n"
    assert gpu_profile == []  # checked before the profile ran


def test_optimize_plot_draws_the_rewrite_beside_the_original(gpu_profile, tmp_path, monkeypatch, capsys):
    import tritonlens.rewrite.api as rewrite_api

    optimize = OptimizeReport.from_json(recorded("matmul.optimize.json"))
    assert optimize.best is not None and optimize.best.speedup > 1  # the recording's proven rewrite
    monkeypatch.setattr(rewrite_api, "optimize_file", lambda path, options, **kwargs: optimize)
    out = tmp_path / "opt.svg"
    assert main(["optimize", str(MATMUL), "--format", "json", "--plot", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["best"]["speedup"] == optimize.best.speedup
    assert {"point:matmul_kernel", "rewrite:matmul_kernel"} <= ids(out.read_text())
    assert f"rewrite {optimize.best.speedup:.3g}x" in out.read_text()
    (path, kwargs), = gpu_profile  # the original profiled once, for its launches
    assert path == optimize.path and kwargs["kernel"] is None


def test_optimize_without_a_gpu_profiles_nothing_and_says_so(gpu_profile, tmp_path, monkeypatch, capsys):
    import tritonlens.rewrite.api as rewrite_api

    cpu = OptimizeReport(path=str(MATMUL), kernel="matmul_kernel", mode="interpreter")
    monkeypatch.setattr(rewrite_api, "optimize_file", lambda path, options, **kwargs: cpu)
    out = tmp_path / "opt.svg"
    assert main(["optimize", str(MATMUL), "--format", "json", "--plot", str(out)]) == 0
    assert capsys.readouterr().err.endswith(f"no roofline: no GPU timed the kernels; {out} not written\n")
    assert not out.exists() and gpu_profile == []


def test_interpreter_profile_writes_no_picture(tmp_path):
    """The real CLI on this CPU: the interpreter times nothing, so there is nothing to draw."""
    out = tmp_path / "va.svg"
    run = subprocess.run([sys.executable, "-m", "tritonlens", "profile", str(REPO / "examples" / "vector_add.py"),
                          "--format", "json", "--plot", str(out)], check=False, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["mode"] == "interpreter"
    assert run.stderr.strip().splitlines()[-1] == (
        "tritonlens profile: no roofline: the kernels ran in Triton's interpreter (no GPU, no timings); "
        f"{out} not written")
    assert not out.exists()
