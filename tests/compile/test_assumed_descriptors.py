"""Parameters the kernel loads and stores through as `desc.load([..])` / `desc.store([..], v)` are
TMA tensor descriptors: their stand-in is a descriptor whose block shape is the kernel's tiles (the
offset's tile constexpr, the local it is computed into, the step of the loop producing it; a batch
index ahead of them is 1), resolved per autotune config. Compiled by the real Triton compiler (sm_90, no GPU)."""

from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "descriptors" / "kernels.py"


def test_descriptor_block_shapes_follow_the_kernel_tiles(configs):
    args = configs["batched_tma_matmul_kernel"][0]["args"]
    assert args["x_desc"] == {"kind": "tensordesc", "dtype": args["x_desc"]["dtype"],
                              "block_shape": [1, "BLOCK_M", "BLOCK_K"]}
    assert args["w_desc"]["block_shape"] == ["BLOCK_N", "BLOCK_K"]
    assert args["out_desc"]["block_shape"] == [1, "BLOCK_M", "BLOCK_N"]
    assert configs["tma_copy_kernel"][0]["args"]["src_desc"]["block_shape"] == ["TILE", 64]


def test_a_tile_seen_only_in_descriptor_offsets_is_an_mma_tile(configs):
    args = configs["grouped_tma_matmul_kernel"][0]["args"]
    assert args["a_desc"]["block_shape"] == ["BLOCK_M", "BLOCK_K"]
    assert args["BLOCK_K"]["value"] <= 256  # a descriptor's block side is at most 256


def test_block_shapes_of_an_aliased_make_tensor_descriptor_are_tiles(configs):
    args = configs["device_descriptor_matmul_kernel"][0]["args"]
    assert args["BLOCK_K"]["value"] <= 256


@pytest.mark.parametrize("name", ["batched_tma_matmul_kernel", "tma_copy_kernel", "grouped_tma_matmul_kernel",
                                  "device_descriptor_matmul_kernel"])
def test_descriptor_kernels_compile(report, name):
    configs = report.kernel(name).configs
    assert configs and all(c.error is None and c.registers is not None for c in configs), \
        [c.error for c in configs]
