"""An autotune the config search adds restores the buffers a kernel updates in place: the autotuner
runs every config on the caller's tensors before the real launch, so a kernel that reads and writes
the same buffer (rope applied to Q, an atomic accumulator) would otherwise be applied once per
config. Seen on a held-out rope kernel: each config verified alone, and the autotuned rewrite
returned garbage."""

from __future__ import annotations

import ast

import pytest
from tritonlens.rewrite.candidate import Candidate
from tritonlens.rewrite.config_edits import with_autotune
from tritonlens.rewrite.config_inplace import in_place_params
from tritonlens.rewrite.propose_config import analyse
from tritonlens.rewrite.static_check import screen
from tritonlens.rewrite.verify import Verifier

ROPE = '''import torch
import triton
import triton.language as tl


@triton.jit
def _rotate_one(Q, stride, row, half: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < half
    q1 = tl.load(Q + row * stride + cols, mask=mask)
    q2 = tl.load(Q + row * stride + half + cols, mask=mask)
    tl.store(Q + row * stride + cols, -q2, mask=mask)
    tl.store(Q + row * stride + half + cols, q1, mask=mask)


@triton.jit
def rope_kernel(Q, stride, out_count, half: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    _rotate_one(Q, stride, row, half, BLOCK)
    tl.atomic_add(out_count, 1)


def rope(q, count):
    BLOCK = 64
    rope_kernel[(q.shape[0],)](q, q.stride(0), count, q.shape[1] // 2, BLOCK=BLOCK, num_warps=4)
    return q


def tritonlens_cases():
    gen = torch.Generator().manual_seed(0)
    yield rope, (torch.randn(48, 128, generator=gen), torch.zeros(1, dtype=torch.int32))
'''

KERNELS = '''import triton
import triton.language as tl


@triton.jit
def pure(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@triton.jit
def through_locals(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    p_x = x_ptr + row * stride
    p_x += 0
    offs = tl.arange(0, BLOCK)
    v = tl.load(p_x + offs, mask=offs < n) + tl.load(y_ptr + offs, mask=offs < n)
    tl.store(p_x + offs, v, mask=offs < n)


@triton.jit
def block_ptrs(a_ptr, M, N, stride_m, BLOCK: tl.constexpr):
    blk = tl.make_block_ptr(base=a_ptr, shape=(M, N), strides=(stride_m, 1), offsets=(0, 0),
                            block_shape=(BLOCK, BLOCK), order=(1, 0))
    tl.store(blk, tl.load(blk) + 1)
'''


@pytest.mark.parametrize("kernel,expect", [
    ("pure", []),  # written, never read: the real launch writes it again
    ("through_locals", ["x_ptr"]),  # the base of a pointer local, not its stride
    ("block_ptrs", ["a_ptr"]),
])
def test_in_place_buffers_are_the_ones_read_and_written(kernel, expect):
    tree = ast.parse(KERNELS)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == kernel)
    assert in_place_params(tree, fn) == expect


def test_a_helper_updating_a_buffer_and_an_atomic_counter_are_in_place():
    tree = ast.parse(ROPE)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "rope_kernel")
    assert in_place_params(tree, fn) == ["Q", "out_count"]


def test_the_added_autotune_restores_what_the_kernel_updates_in_place():
    plan = analyse(ROPE, "rope_kernel", {"mode": "gpu", "name": "NVIDIA H100 80GB HBM3"})
    tuned = with_autotune(ROPE, plan, plan.space[:2])
    assert 'restore_value=["Q", "out_count"]' in tuned
    ast.parse(tuned)


@pytest.mark.slow
def test_the_autotuned_in_place_kernel_verifies_in_a_worker(tmp_path):
    path = tmp_path / "rope.py"
    path.write_text(ROPE)
    plan = analyse(ROPE, "rope_kernel", {"mode": "gpu", "name": "NVIDIA H100 80GB HBM3"})
    tuned = with_autotune(ROPE, plan, plan.space[:2])
    with Verifier(str(path), ROPE, timeout=300) as verifier:
        [verdict] = verifier.verify([Candidate("config", "autotune 2 configs", tuned)], isolate=False)
    assert verdict.evidence["correct"], verdict.reason


AUTOTUNE = '''@triton.autotune(
    configs=[triton.Config({{}}, num_warps=2), triton.Config({{}}, num_warps=4)],
    key=["stride"],{extra}
)
@triton.jit
def rope_kernel('''


def test_the_static_screen_refuses_an_autotune_that_would_apply_an_in_place_update_once_per_config():
    # what an LLM's rewrite may do too: each config alone verifies, the autotuned launch does not
    bare = ROPE.replace("@triton.jit\ndef rope_kernel(", AUTOTUNE.format(extra=""))
    assert screen(ROPE, bare) == [
        "autotune of rope_kernel runs every config on Q, out_count, which it updates in place: "
        "restore_value=['Q', 'out_count'] keeps the caller's data"]
    restored = ROPE.replace("@triton.jit\ndef rope_kernel(",
                            AUTOTUNE.format(extra='\n    restore_value=["Q"], reset_to_zero=["out_count"],'))
    assert screen(ROPE, restored) == []
    assert screen(bare, bare.replace("num_warps=4)", "num_warps=8)")) == []  # the user's own, kept as it was
