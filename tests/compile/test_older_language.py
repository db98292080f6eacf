"""Kernels written for an earlier Triton get compile facts from one that refuses what they do (3.9):
block pointers lowered as the Triton that had them did, to pointer tensors and masks, and a full
slice past a scalar's rank passed over as it was; the facts carry a note that says which. Compiled
by the real Triton compiler for sm_90."""

from __future__ import annotations

import pytest
from tritonlens.profiling.compile_job import compile_file

# The same row-tile reduction twice: through block pointers advanced along K, and by hand the way
# older Tritons rewrote them (at each access, 64-bit offsets, a mask per checked dimension, zero padding).
KERNELS = '''import triton
import triton.language as tl


@triton.jit
def tile_sum_blocks(x_ptr, out_ptr, M, K, stride_m, stride_k, BM: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    x = tl.make_block_ptr(x_ptr, (M, K), (stride_m, stride_k), (pid * BM, 0), (BM, BK), (1, 0))
    acc = tl.zeros((BM, BK), tl.float32)
    for _ in range(0, K, BK):
        acc += tl.load(x, boundary_check=(0, 1), padding_option="zero")
        x = tl.advance(x, (0, BK))
    out = tl.make_block_ptr(out_ptr, (M,), (1,), (pid * BM,), (BM,), (0,))
    tl.store(out, tl.sum(acc, 1).to(out.dtype.element_ty), boundary_check=(0,))


@triton.jit
def tile_sum_pointers(x_ptr, out_ptr, M, K, stride_m, stride_k, BM: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BM, BK), tl.float32)
    col = pid * 0
    for _ in range(0, K, BK):
        rows = (tl.arange(0, BM).to(tl.int64) + pid * BM)[:, None]
        cols = (tl.arange(0, BK).to(tl.int64) + col)[None, :]
        inside = ((rows >= 0) & (rows < M)) & ((cols >= 0) & (cols < K))
        acc += tl.load(x_ptr + rows * stride_m + cols * stride_k, mask=inside, other=0)
        col += BK
    offs = tl.arange(0, BM).to(tl.int64) + pid * BM
    tl.store(out_ptr + offs, tl.sum(acc, 1), mask=(offs >= 0) & (offs < M))


def tile_sum(x, out):
    for kernel in (tile_sum_blocks, tile_sum_pointers):
        kernel[(triton.cdiv(x.shape[0], 64),)](x, out, x.shape[0], x.shape[1], x.stride(0), x.stride(1),
                                                BM=64, BK=64)
'''


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("block_pointers") / "tile_sum.py"
    path.write_text(KERNELS)
    return compile_file(path, target="sm_90")


def test_block_pointers_compile_with_a_note_that_names_the_lowering(report):
    blocks = report.kernel("tile_sum_blocks")
    (c,) = blocks.configs
    assert c.error is None, c.error
    assert c.registers > 0 and blocks.reason is None
    if report.triton_version.startswith("3.9"):
        assert blocks.note == ("block pointers lowered to pointer tensors and masks, as Triton 3.8 and earlier "
                               f"compiled them (Triton {report.triton_version} refuses them)")
    assert report.kernel("tile_sum_pointers").note is None  # no block pointer, no note


def test_the_lowering_is_the_hand_written_pointer_kernel(report):
    (blocks,) = report.kernel("tile_sum_blocks").configs
    (pointers,) = report.kernel("tile_sum_pointers").configs
    assert (blocks.spill_bytes, blocks.shared_bytes) == (pointers.spill_bytes, pointers.shared_bytes)
    # The same operations in another order: ptxas allocates registers differently (128 and 150 here).
    assert abs(blocks.registers - pointers.registers) <= 0.25 * pointers.registers
    assert [(ld.widest, ld.instructions) for ld in blocks.loads] == [(ld.widest, ld.instructions) for ld in pointers.loads]


SCALAR_SLICE = '''import triton
import triton.language as tl


@triton.jit
def expert_scales_kernel(scales_ptr, stride_e, stride_k, K, BLOCK_K: tl.constexpr):
    expert = tl.program_id(0)
    offs_k = tl.arange(0, BLOCK_K)
    offs = expert[:, None] * stride_e + offs_k[None, :] * stride_k
    tl.store(scales_ptr + offs, tl.zeros((1, BLOCK_K), tl.float32), mask=offs_k[None, :] < K)
'''


def test_a_full_slice_past_a_scalar_s_rank_compiles_as_it_did(tmp_path):
    path = tmp_path / "expert_scales.py"
    path.write_text(SCALAR_SLICE)
    report = compile_file(path, target="sm_90")
    kernel = report.kernel("expert_scales_kernel")
    (c,) = kernel.configs
    assert c.error is None and c.registers > 0, c.error
    if report.triton_version.startswith("3.9"):
        assert kernel.note.startswith("a full slice past a tensor's rank (`x[:, None]` on a scalar) passed over, "
                                      "as Triton 3.8 and earlier compiled them"), kernel.note


def test_the_stand_ins_are_taken_out_after_the_compile():
    import triton.language as tl
    from tritonlens.profiling.worker import older_language

    before = (tl.load, tl.store, tl.make_block_ptr, getattr(tl, "advance", None), tl.tensor.__getitem__)
    with older_language.emulated():
        pass
    assert (tl.load, tl.store, tl.make_block_ptr, getattr(tl, "advance", None), tl.tensor.__getitem__) == before
