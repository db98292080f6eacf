"""Kernels written with block pointers get compile facts from a Triton that removed them (3.9):
lowered as the Triton that had them did, to pointer tensors and masks, with a note that says so.
Compiled by the real Triton compiler for sm_90."""

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
                               f"compiled them (Triton {report.triton_version} has no tl.make_block_ptr)")
    assert report.kernel("tile_sum_pointers").note is None  # no block pointer, no note


def test_the_lowering_is_the_hand_written_pointer_kernel(report):
    (blocks,) = report.kernel("tile_sum_blocks").configs
    (pointers,) = report.kernel("tile_sum_pointers").configs
    assert (blocks.spill_bytes, blocks.shared_bytes) == (pointers.spill_bytes, pointers.shared_bytes)
    # The same operations in another order: ptxas allocates registers differently (128 and 150 here).
    assert abs(blocks.registers - pointers.registers) <= 0.25 * pointers.registers
    assert [(ld.widest, ld.instructions) for ld in blocks.loads] == [(ld.widest, ld.instructions) for ld in pointers.loads]


def test_the_stand_ins_are_taken_out_after_the_compile():
    import triton.language as tl
    from tritonlens.profiling.worker import block_pointers

    before = (tl.load, tl.store, tl.make_block_ptr, getattr(tl, "advance", None))
    with block_pointers.emulated():
        pass
    assert (tl.load, tl.store, tl.make_block_ptr, getattr(tl, "advance", None)) == before
