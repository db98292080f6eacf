"""A kernel whose jit helper and constexpr global live in another file of its project, in folders
without `__init__.py` (namespace packages, as sglang's kernel folders are), and whose package's
own `__init__` cannot import on this machine: the compile follows the imports by path, binds the
names it finds (one that only a GPU host defines costs only itself), and the kernel compiles (real sm_90 cross-compile on the CPU)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tritonlens.profiling.compile_job import compile_file

pytestmark = pytest.mark.slow

KERNEL = Path(__file__).parent / "fixtures" / "namespace_project" / "nsproj" / "ops" / "decode" / "scale_rows.py"


def test_helpers_of_sibling_namespace_folders_are_found_by_path():
    result = compile_file(KERNEL)
    # The absolute import still says that DEVICE_NAME is missing, but it bound ROWS, which the kernel uses.
    (failure,) = result.module_failures
    assert failure.startswith("line 6: ModuleNotFoundError"), failure
    (k,) = result.kernels
    assert k.reason is None and k.configs and all(c.compiled for c in k.configs), (k.reason, k.configs)
    # The helper was inlined: the lines of the kernel that call it carry instructions.
    assert {ln.line for ln in k.lines if ln.instructions} >= {13, 14}
