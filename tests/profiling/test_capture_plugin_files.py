"""A capture leaves nothing of the user's pytest plugins in the project: with pytest-benchmark
installed in the interpreter that runs the tests, a plain pytest run makes a `.benchmarks` folder
in the project's root; a capture runs the same tests and leaves only `.tritonlens`."""

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from tritonlens.profiling.project_capture import capture_for_file

NORMPKG = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "normpkg"


def _python_with_pytest_benchmark(folder: Path) -> str | None:
    """A venv over the base interpreter (where pytest-benchmark may be installed) that also sees
    this environment's packages (torch, triton, pytest), or None when the base lacks the plugin."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    probe = subprocess.run([base, "-c", "import pytest_benchmark"], capture_output=True, check=False)
    if probe.returncode != 0:
        return None
    subprocess.run([base, "-m", "venv", "--system-site-packages", "--without-pip", str(folder)], check=True)
    site = next(folder.glob("lib/python*/site-packages"))
    (site / "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return str(folder / "bin" / "python")


def test_a_capture_leaves_no_benchmark_folder_in_the_project(tmp_path):
    python = _python_with_pytest_benchmark(tmp_path / "env")
    if python is None:
        pytest.skip("no interpreter here has pytest-benchmark installed")
    root = tmp_path / "normpkg"
    shutil.copytree(NORMPKG, root)
    outcome = capture_for_file(root / "src/normpkg/ops/rmsnorm.py", python=python, timeout=300)
    assert outcome.recorded, outcome.reason
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(".")) == [".tritonlens"]
