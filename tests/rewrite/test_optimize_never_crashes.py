"""Optimize on kernels shaped like real projects' launches: a variable num_warps, a launch that
passes num_stages, @triton.heuristics under an existing autotune, a GROUP_SIZE_M that only the
autotune configs give, a bool constexpr. Real worker processes in Triton's interpreter: each crash
becomes a verdict, and the configuration that used to crash is proposed right and accepted."""

from __future__ import annotations

import pytest
from tritonlens.rewrite.api import optimize_file

HEADER = '''import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl
'''

SCALE_KERNEL = '''

@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)
'''

CASES = '''

def tritonlens_cases():
    yield scale, (torch.randn(200, device=DEVICE),)
    yield scale, (torch.randn(37, device=DEVICE),)
'''


def _optimize(tmp_path, name: str, text: str, proposers=("config",)):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return optimize_file(str(path), proposers=proposers, timeout=300)


def _by_title(report):
    return {c.title: c for c in report.candidates}


def test_a_variable_num_warps_is_no_crash_and_the_block_is_still_tuned(tmp_path):
    """Reproduces `ValueError: num_warps cannot be set at the launch` (propose_config.with_literals),
    which ended optimize with no output when the launch passed num_warps=<variable>."""
    text = HEADER + SCALE_KERNEL + '''

def scale(x):
    out = torch.empty_like(x)
    n = x.numel()
    warps = 4 if n >= 4096 else 2
    scale_kernel[(triton.cdiv(n, 32),)](x, out, n, BLOCK=32, num_warps=warps)
    return out
''' + CASES
    report = _optimize(tmp_path, "scale_warps.py", text)
    literal = next(c for c in report.candidates if c.title.startswith("config "))
    assert literal.accepted, literal.reason
    assert "num_warps" not in literal.title  # computed in the wrapper: left to it
    assert "num_warps=warps" in literal.source and "BLOCK=32" not in literal.source
