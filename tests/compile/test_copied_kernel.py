"""A kernel identical to one compiled from another file keeps its per-line facts.

Compiled artifacts are cached by kernel source (ours and Triton's), so the copy's PTX names the
first file; the facts must still land on the copy's lines.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tritonlens.profiling import compile_job

FIXTURES = Path(__file__).parent / "fixtures"


def test_copy_of_a_compiled_kernel_keeps_line_facts(tmp_path):
    original = FIXTURES / "scale.py"
    first = compile_job.compile_file(str(original), target="sm_90")
    copy = tmp_path / "elsewhere" / "renamed_scale.py"
    copy.parent.mkdir()
    shutil.copy(original, copy)
    second = compile_job.compile_file(str(copy), target="sm_90")

    def facts(result):
        k = result.kernels[0]
        cfg = k.configs[0]
        return cfg.vectorized, cfg.pipelined, sorted(ln.line for ln in k.lines)

    assert facts(first)[2], "the original has per-line facts"
    assert facts(second) == facts(first)


def test_copy_of_a_kernel_with_helpers_from_other_files_keeps_line_facts(tmp_path):
    # The PTX then names two project files, the kernel's and the helper's: the kernel's is the one
    # with the copy's name.
    project = FIXTURES / "namespace_project"
    kernel = Path("nsproj", "ops", "decode", "scale_rows.py")
    first = compile_job.compile_file(str(project / kernel), target="sm_90")
    shutil.copytree(project, tmp_path / "namespace_project")
    second = compile_job.compile_file(str(tmp_path / "namespace_project" / kernel), target="sm_90")

    def lines(result):
        return sorted(ln.line for ln in result.kernels[0].lines if ln.instructions)

    assert lines(first), "the original has per-line facts"
    assert lines(second) == lines(first)
