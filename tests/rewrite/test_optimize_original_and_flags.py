"""Optimize through the real worker and verifier on this GPU-less machine: a harness written for a
GPU (device="cuda", a float eps) verifies as it is; an original that fails stops optimize before
any candidate, with its own error in one line; and a flag is never tuned as a block size, wherever
its bool is set."""

from __future__ import annotations

import pytest
from rewrite_support import FIXTURES
from tritonlens.rewrite.api import OptimizeError, OptimizeOptions, optimize_file
from tritonlens.rewrite.propose_config import analyse

OPTIONS = OptimizeOptions(proposers=("config",), job_timeout_s=300, budget_s=0)


def _copy(tmp_path, text: str, name: str = "kernel.py") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_harness_written_for_cuda_verifies_and_its_flag_is_no_knob(tmp_path):
    seen = []
    report = optimize_file(_copy(tmp_path, (FIXTURES / "rms_flag_cuda.py").read_text()), OPTIONS,
                           progress=lambda msg, pct: seen.append(msg))
    assert report.candidates and all(c.accepted for c in report.candidates), [c.reason for c in report.candidates]
    assert not any("affine" in c.title for c in report.candidates)
    assert any("verifying" in m for m in seen)


def test_a_failing_original_stops_before_any_candidate(tmp_path):
    text = (FIXTURES / "rms_flag_cuda.py").read_text().replace(
        "    out = torch.empty_like(x)\n", "    out = torch.empty_like(x).view(7, -1)\n")
    seen = []
    with pytest.raises(OptimizeError) as raised:
        optimize_file(_copy(tmp_path, text), OPTIONS, progress=lambda msg, pct: seen.append(msg))
    message = str(raised.value)
    assert message.startswith("the original cannot be verified: it fails on case 0")
    assert "is invalid for input of size" in message and "(kernel.py:" in message
    assert "\n" not in message and "Error" not in message
    assert not any("verifying" in m for m in seen)


def test_a_gap_of_the_interpreter_is_named_not_wrapped(tmp_path):
    text = (FIXTURES / "rms_flag_cuda.py").read_text().replace(
        "    tl.store(out_ptr + row * stride + offs, y, mask=mask)",
        '    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [y], dtype=tl.float32, is_pure=True, pack=1)\n'
        "    tl.store(out_ptr + row * stride + offs, y, mask=mask)")
    with pytest.raises(OptimizeError, match="Triton's interpreter cannot run inline assembly .* on the CPU; "
                                            "on a GPU it runs$"):
        optimize_file(_copy(tmp_path, text), OPTIONS)


KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def _apply(x, AFFINE: tl.constexpr):
    if AFFINE:
        x = x * 2
    return x


@triton.jit
def k(x_ptr, n, affine: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = _apply(tl.load(x_ptr + offs, mask=offs < n), affine)
    tl.store(x_ptr + offs, x, mask=offs < n)
'''


@pytest.mark.parametrize("wrapper", [
    "def run(x, n):\n    affine = False\n    k[(4,)](x, n, affine=affine, BLOCK=256)",  # a local
    "def run(x, n):\n    affine: bool = True\n    k[(4,)](x, n, affine=affine, BLOCK=256)",  # an annotated local
    "def run(x, n, affine=False):\n    k[(4,)](x, n, affine=affine, BLOCK=256)",  # the wrapper's default
    "def run(x, n):\n    k[(4,)](x, n, BLOCK=256, **{'affine': False})",  # a dict value
    "def run(x, n):\n    kw = {}\n    kw['affine'] = x is not None\n    k[(4,)](x, n, BLOCK=256, **kw)",  # a stored one
    "def run(x, n):\n    k[(4,)](x, n, affine=True, BLOCK=256)",  # a kwarg
    "def run(x, n):\n    k[(4,)](x, n, 1, 256)",  # an int, by position: the kernel tests it for truth
    "def run(x, n):\n    affine = n > 0\n    k[(4,)](x, n, affine=affine, BLOCK=256)",  # a comparison
])
def test_a_flag_is_never_tuned_wherever_its_value_is_set(wrapper):
    plan = analyse(KERNEL + "\n\n" + wrapper + "\n", "k")
    assert "affine" not in plan.knobs and "BLOCK" in plan.knobs
    assert all("affine" not in cfg for cfg in plan.space)
    assert not any(u.startswith("affine") for u in plan.unmovable)


def test_a_block_handed_to_a_helper_that_sizes_with_it_is_still_a_knob():
    text = KERNEL.replace("def _apply(x, AFFINE: tl.constexpr):\n    if AFFINE:\n        x = x * 2",
                          "def _apply(x, AFFINE: tl.constexpr):\n    x = x + tl.zeros([AFFINE], tl.float32)")
    plan = analyse(text + "\n\ndef run(x, n):\n    k[(4,)](x, n, affine=256, BLOCK=256)\n", "k")
    assert "affine" in plan.knobs
