"""Device helpers versus launchable kernels, decided in one place (analysis.kernel_roles), on the
analyser's model of fixture files whose kernels run under Triton's interpreter as written."""

from __future__ import annotations

from pathlib import Path

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.kernel_roles import device_helpers, is_device_helper, role_of
from tritonlens.analysis.shapes.kernel import device_helper as shapes_device_helper

FIXTURES = Path(__file__).parent.parent / "fixtures" / "kernel_roles"


def _module(name: str):
    return Analyzer().analyze((FIXTURES / name).read_text(), path=name).module


def test_helpers_are_combine_functions_value_returners_and_callees():
    module = _module("helpers_and_kernels.py")
    assert device_helpers(module) == {"_max_combine", "_add_pairs", "_square", "_store_block"}
    reasons = {k.name: role_of(module, k).reason for k in module.kernels}
    assert reasons["_max_combine"] == "combine function of the reduction at line 33"
    assert reasons["_add_pairs"] == "combine function of the reduction at line 39"
    assert reasons["_square"] == "returns a value"
    assert reasons["_store_block"] == "called from the JIT function square_kernel"


def test_a_launched_function_is_a_kernel_even_when_a_kernel_calls_it():
    module = _module("helpers_and_kernels.py")
    sum_kernel = module.kernel("sum_kernel")
    assert not is_device_helper(module, sum_kernel)
    assert role_of(module, sum_kernel).reason.startswith("launched at line ")
    # Neither launched nor called, returning nothing: a kernel code elsewhere may launch.
    assert not is_device_helper(module, module.kernel("square_kernel"))
    assert not is_device_helper(module, module.kernel("sum_twice_kernel"))


def test_a_versioned_name_is_a_helper_by_its_last_definition():
    assert device_helpers(_module("versioned_definitions.py")) == {"fast_exp"}


def test_a_kernel_named_in_another_kernels_comment_is_still_a_kernel():
    text = (FIXTURES / "helpers_and_kernels.py").read_text().replace(
        "    _store_block(y_ptr, offs,", "    # like sum_twice_kernel, but elementwise\n    _store_block(y_ptr, offs,")
    module = Analyzer().analyze(text).module
    k = module.kernel("sum_twice_kernel")
    assert not is_device_helper(module, k)
    assert not shapes_device_helper(module, k)  # shape inference asks the same question here
    assert shapes_device_helper(module, module.kernel("_store_block"))
