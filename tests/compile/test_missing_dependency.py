"""A kernel's helper lives in its own project, but importing the package needs a third-party
package this machine lacks (a hub client in the package's `__init__`, a version helper in the
helper's own file). The helper's file is read by path and its module-level branches that test
what did not import run in turn, a name keeping the first binding that worked, so the kernel
compiles with the helper the current Triton gives. Compiled by the real Triton compiler."""

from pathlib import Path

from tritonlens.profiling.compile_job import compile_file

PACKAGE = Path(__file__).parent / "fixtures" / "missing_dependency" / "vendorpkg"


def test_a_helper_behind_a_version_check_of_a_missing_package_is_bound():
    report = compile_file(PACKAGE / "kernels" / "gelu.py", target="sm_90")
    k = report.kernel("gelu_tanh_kernel")
    (c,) = k.configs
    assert c.registers is not None and k.reason is None, (c.error, k.reason, k.note)


def test_a_jit_helper_the_project_binds_only_when_has_triton_is_the_jit_one():
    # without a GPU torch's has_triton() says False and the helper's name holds a CPU stand-in
    here = Path(__file__).parent / "fixtures" / "has_triton_helpers"
    report = compile_file(here / "tiles.py", target="sm_90")
    k = report.kernel("tile_copy_kernel")
    assert k.configs and k.configs[0].registers is not None, (k.configs[0].error if k.configs else k.reason)
