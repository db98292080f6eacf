"""Kernels no captured launch reached are compiled from the static model (real sm_90 cross-compiles)."""

import pytest
from tritonlens.profiling.compile_cli import to_json
from tritonlens.profiling.compile_job import compile_file, findings_from

pytestmark = pytest.mark.slow

HEAD = """\
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl
"""

BAD_HARNESS = HEAD + """

@triton.jit
def bad_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, 48)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x + 1, mask=offs < n)


def run(x):
    bad_kernel[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)
    return x


def tritonlens_cases():
    yield run, (torch.randn(100),)
"""

NO_HARNESS = HEAD + """

@triton.jit
def scale_kernel(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, (x * factor).to(tl.float16), mask=mask)


def scale(x, y):
    scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), 0.5, BLOCK=1024, num_warps=8)
"""

AUTOTUNED = HEAD + """

@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 256}, num_warps=2),
        triton.Config({"BLOCK": 2048}, num_warps=8, num_stages=2),
    ],
    key=["n"],
)
@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def copy(a, b):
    copy_kernel[lambda meta: (triton.cdiv(a.numel(), meta["BLOCK"]),)](a, b, a.numel())
"""


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def line_col(text, needle, token):
    """1-based line and 0-based column of `token` on the first line containing `needle`."""
    for i, ln in enumerate(text.splitlines(), 1):
        if needle in ln:
            return i, ln.index(token)
    raise AssertionError(needle)


def test_kernel_that_breaks_its_harness_gets_tl105_from_its_captured_launch(tmp_path):
    path = write(tmp_path, "bad_harness.py", BAD_HARNESS)
    result = compile_file(path, use_cache=False)
    # The interpreter rejects the arange too, but the capture records a launch before it runs: the
    # compile uses the harness's own arguments and configuration, with nothing assumed.
    assert any("power of 2" in e for e in result.capture_errors)
    (k,) = result.kernels
    assert k.source == "captured" and "power of 2" in k.reason
    (c,) = k.configs
    assert c.source == "captured" and c.constexprs == {"BLOCK": 64} and c.assumed == []
    line, col = line_col(BAD_HARNESS, "tl.arange(0, 48)", "tl.arange")
    assert (c.error.line, c.error.column) == (line, col)
    (f,) = [f for f in findings_from(result, BAD_HARNESS) if f.code == "TL105"]
    assert (f.range.start.line + 1, f.range.start.column) == (line, col)
    assert "power of 2" in f.message
    js = to_json(result)["kernels"][0]["configs"][0]
    assert js["source"] == "captured" and js["error"]["line"] == line


def test_file_without_harness_compiles_its_literal_launch_site(tmp_path):
    path = write(tmp_path, "no_harness.py", NO_HARNESS)
    result = compile_file(path, use_cache=False)
    assert result.source == "static model"
    (k,) = result.kernels
    assert k.source == "static"
    (c,) = k.configs
    assert c.error is None and c.source == "static"
    assert c.constexprs == {"BLOCK": 1024} and c.num_warps == 8
    assert 0 < c.registers <= 255 and c.occupancy > 0 and c.limiter
    # fp16 from the kernel's .to(tl.float16); pointers 16-byte aligned; n, a size, a multiple of
    # 16 as a typical call passes it (the JIT specialises it so); the literal 0.5 a float.
    assert c.signature["x_ptr"] == "*fp16" and c.specialization["x_ptr"] == "D"
    assert c.signature["n"] == "i32" and c.specialization["n"] == "D"
    assert c.signature["factor"] == "fp32"
    assert any("float16" in a and "16-byte" in a for a in c.assumed)
    assert k.lines and all(ln.instructions >= 0 for ln in k.lines)
    # Plain integers are an assumption, not evidence: no TL106 from them.
    assert not [f for f in findings_from(result, NO_HARNESS) if f.code == "TL106"]


def test_autotuned_kernel_without_harness_compiles_every_autotune_config(tmp_path):
    path = write(tmp_path, "autotuned.py", AUTOTUNED)
    result = compile_file(path, use_cache=False)
    (k,) = result.kernels
    got = [(c.constexprs["BLOCK"], c.num_warps, c.num_stages) for c in k.configs]
    assert got == [(256, 2, 3), (2048, 8, 2)]
    assert all(c.source == "static" and c.error is None and c.registers for c in k.configs)
    # src/dst carry no "_ptr" name: they are pointers because tl.load / tl.store use them as bases.
    assert all(c.signature["src"] == "*fp32" and c.signature["dst"] == "*fp32" for c in k.configs)
