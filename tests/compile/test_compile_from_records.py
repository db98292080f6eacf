"""Compile facts from the project's own recorded launches (real capture of the fixture project's
pytest tests on the CPU, then a real sm_90 cross-compile that reads the records)."""

import shutil
from pathlib import Path

import pytest
from tritonlens.cli import main
from tritonlens.profiling.compile_job import compile_file

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "normpkg"


def test_recorded_launches_configure_the_compile_of_a_package_file(tmp_path, capsys):
    root = tmp_path / "normpkg"
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns(".tritonlens", "__pycache__"))
    kernel_file = root / "src" / "normpkg" / "ops" / "rmsnorm.py"

    before = compile_file(kernel_file, use_cache=False)
    (k,) = [k for k in before.kernels if k.configs]
    assert {c.source for c in k.configs} <= {"static", "assumed"}

    assert main(["capture", str(kernel_file)]) == 0
    capsys.readouterr()
    after = compile_file(kernel_file, use_cache=False)
    k = after.kernel(k.name)
    assert k.configs and {c.source for c in k.configs} == {"captured"}
    assert all(c.value_sources.get("BLOCK_SIZE") == "captured" for c in k.configs)
    # The helper picks the tile and the warps at run time; the records carry what it picked.
    by_block = {c.constexprs["BLOCK_SIZE"]: c for c in k.configs if c.compiled}
    assert by_block[4096].num_warps == 8 and by_block[4096].registers > 0
    assert all(c.label.startswith("launch in test_") for c in k.configs)
    # Launches that differ only in their sizes compile once: one configuration per specialisation.
    keys = [c.key for c in k.configs if c.key]
    assert len(keys) == len(set(keys))
