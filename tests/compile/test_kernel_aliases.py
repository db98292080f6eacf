"""An in-place op's kernel whose name a wrapper takes after the file kept the kernel under another
name (flag_gems' experimental `cos_`: `cos__kernel = cos_`, then `def cos_(*args, **kwargs)`) is
compiled from the kernel it kept, not refused as a wrapper Triton cannot jit. Compiled by the real
Triton compiler."""

from tritonlens.profiling.compile_job import compile_file

IN_PLACE_OP = '''import torch
import triton
import triton.language as tl


@triton.jit
def neg_(x_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(x_ptr + offsets, -tl.load(x_ptr + offsets, mask=mask), mask=mask)


neg__kernel = neg_


def neg_(*args, **kwargs):
    x = args[0] if args else kwargs["input"]
    neg__kernel[(triton.cdiv(x.numel(), 1024),)](x, x.numel(), BLOCK_SIZE=1024)
    return x
'''


def test_a_kernel_kept_under_an_alias_is_compiled_not_its_wrapper(tmp_path):
    path = tmp_path / "neg_.py"
    path.write_text(IN_PLACE_OP)
    k = compile_file(path, target="sm_90").kernel("neg_")
    assert k.configs and k.configs[0].registers is not None and k.reason is None, (k.reason, k.error)
