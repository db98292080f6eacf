"""Values and element types real projects' kernels give only by their use (patterns from public
kernels, written anew here): an index loaded where it offsets another pointer, counts divided with
`tl.cdiv`, a lock word, packed words and-ed with a mask, an int8 `tl.dot` operand beside an
expression, a pointer that reaches a load only as a local handed to a helper, an optional
constexpr tested `is not None`, a mode named "type" compared with integers, an assertion's message
that is no use of its names, a head dim called `Lv`, a head count called `head_num`, a tile made
only in a helper, an index added to a local address. Each one's stand-in
used to be a float or a size and did not compile. Compiled by the real Triton compiler (sm_90, no GPU)."""

from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "real_patterns" / "kernels.py"


def _args(configs, kernel):
    return configs[kernel][0]["args"]


def _value(arg):
    return arg["dtype"] if "dtype" in arg else arg["value"]


def test_integers_by_how_their_loads_are_used(configs):
    assert _value(_args(configs, "last_token_kernel")["select_ptr"]) == "int64"  # `ids_ptr + tl.load(...)`
    split = _args(configs, "split_merge_kernel")
    assert _value(split["indptr_ptr"]) == _value(split["splits_ptr"]) == "int32"  # tl.cdiv(seq_len, splits)
    assert _value(_args(configs, "spin_reduce_kernel")["locks"]) == "int32"
    ternary = _args(configs, "ternary_matmul_kernel")
    assert (_value(ternary["a_ptr"]), _value(ternary["b_ptr"])) == ("int8", "int32")
    assert _value(_args(configs, "sparse_gather_kernel")["block_offset"]) == "int64"  # `k_ptrs + cols * s`


def test_values_by_how_the_kernel_uses_them(configs):
    split = _args(configs, "split_merge_kernel")
    assert split["SCORE_MOD"]["value"] is None
    assert split["Lv"]["value"] == split["BLOCK_DV"]["value"] == 128  # `Lv = k.shape[-1]`: a head dim
    scores = _args(configs, "scores_kernel")
    assert scores["LOSS_TYPE"]["value"] == 0  # compared with 0 and 1: no dtype
    assert isinstance(_value(_args(configs, "ternary_matmul_kernel")["K"]), int)  # "K / 4" is a message
    assert _args(configs, "mix_kernel")["HC"]["value"] <= 1024  # a tile in the helper, not a model's width
    assert _args(configs, "copy_heads_kernel")["BLOCK_HEAD"]["value"] == 32  # `head_num = K.shape[1]`


def test_a_pointer_handed_to_a_helper_as_a_local_is_a_pointer(report):
    (c,) = report.kernel("scores_kernel").configs
    assert c.signature["K"].startswith("*"), c.signature


def test_an_asserted_divisibility_is_retried_at_model_scale(report):
    (c,) = report.kernel("ternary_matmul_kernel").configs
    assert c.constexprs["K"] % (4 * c.constexprs["BLOCK_K"]) == 0 and "retried with K=4096" in c.label, c.label


@pytest.mark.parametrize("name", ["last_token_kernel", "split_merge_kernel", "spin_reduce_kernel",
                                  "ternary_matmul_kernel", "scores_kernel", "mix_kernel", "copy_heads_kernel",
                                  "sparse_gather_kernel"])
def test_they_compile(report, name):
    configs = report.kernel(name).configs
    assert configs and all(c.error is None and c.registers is not None for c in configs), \
        [c.error for c in configs]
