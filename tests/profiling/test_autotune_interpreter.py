"""An autotuned kernel profiled in the interpreter: the autotuner's benchmark needs a GPU driver, so
the worker runs the first config untimed and the report says which one."""

import os

from tritonlens.profiling.api import profile_file
from tritonlens.profiling.cli import format_text

DATA = os.path.join(os.path.dirname(__file__), "data")


def test_autotuned_kernel_runs_its_first_config_untimed():
    result = profile_file(os.path.join(DATA, "autotuned_scale.py"), kernel="scale_kernel")
    assert result.mode == "interpreter"
    assert all(c.ok for c in result.cases), [c.error for c in result.cases]
    (kernel,) = result.kernels
    assert kernel.error is None
    (launch,) = kernel.launches
    assert launch.constexprs == {"BLOCK": 32} and launch.num_warps == 2
    assert launch.grid[0] == 7  # cdiv(200, 32): the grid follows the config that ran
    note = launch.more["tuning"]
    assert "config 1 of 3 (BLOCK=32, num_warps=2" in note and "without benchmarking" in note
    assert note in format_text(result)
