"""Element types and values by the kernel's use: a pointer whose loads are summed, in a loop, into a
name that starts as an integer literal holds integers (Triton keeps a loop-carried type); a pointer
whose loads are negated (`not tl.load(P)`, `~m`) holds booleans; a name a docstring divides in
prose is no float. Compiled by the real Triton compiler (sm_90, no GPU)."""

from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "element_types" / "kernels.py"


def test_counts_summed_into_a_literal_are_integers(configs):
    assert configs["tile_prefix_sum_kernel"][0]["args"]["counts_ptr"]["dtype"] == "int32"


def test_negated_loads_are_booleans(configs):
    args = configs["masked_row_copy_kernel"][0]["args"]
    assert args["keep_ptr"]["dtype"] == args["flags"]["dtype"] == "bool"
    assert args["src_ptr"]["dtype"] != "bool"


def test_a_docstring_is_no_use(configs):
    assert isinstance(configs["expert_grad_kernel"][0]["args"]["K"]["value"], int)


@pytest.mark.parametrize("name", ["tile_prefix_sum_kernel", "masked_row_copy_kernel", "expert_grad_kernel"])
def test_they_compile(report, name):
    configs = report.kernel(name).configs
    assert configs and all(c.error is None and c.registers is not None for c in configs), \
        [c.error for c in configs]
