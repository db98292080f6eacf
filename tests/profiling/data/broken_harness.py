import torch
import triton
import triton.language as tl


@triton.jit
def fill_kernel(y_ptr, value, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.full([BLOCK], value, tl.float32), mask=offs < n)


def fill(n, value):
    y = torch.empty(n)
    fill_kernel[(triton.cdiv(n, 64),)](y, value, n, BLOCK=64)
    return y


def explode(n):
    raise ValueError(f"harness failure for n={n}")


def tritonlens_cases():
    yield fill, (256, 1.5)
    yield explode, (7,)
