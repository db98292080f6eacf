"""A Triton dtype passed as a constexpr (`X_dtype=tl.bfloat16`) is recorded by its name and
replayed as the dtype itself: a profile's replay of the launch compiles `.to(X_dtype)` as the
original launch did, in Triton's interpreter here as on a GPU."""

import textwrap

import pytest

from tritonlens.profiling.api import profile_file

KERNEL = '''
import torch
import triton
import triton.language as tl


@triton.jit
def cast_kernel(x_ptr, y_ptr, n, OUT_DTYPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, (x * 2).to(OUT_DTYPE), mask=offs < n)


def cast(x, out_dtype, tl_dtype):
    y = torch.empty(x.shape, dtype=out_dtype)
    cast_kernel[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), tl_dtype, BLOCK=64)
    return y


def tritonlens_cases():
    yield cast, (torch.rand(100), torch.{out}, {constexpr})
'''


@pytest.mark.parametrize(("out", "constexpr", "recorded"), [("float16", "tl.float16", "fp16"),
                                                             ("bfloat16", "tl.bfloat16", "bf16")])
def test_dtype_constexprs_replay_as_dtypes(tmp_path, out, constexpr, recorded):
    path = tmp_path / "cast.py"
    path.write_text(textwrap.dedent(KERNEL.format(out=out, constexpr=constexpr)).lstrip(), encoding="utf-8")
    report = profile_file(str(path))
    (kernel,) = report.kernels
    assert kernel.error is None, kernel.error
    (launch,) = kernel.launches
    assert launch.constexprs["OUT_DTYPE"] == recorded and launch.error is None, launch.error
