"""A harness written for a GPU, as the README's examples read on one: tensors made on device
"cuda", torch.cuda.synchronize(), a float scalar the kernel casts, a size picked by
torch.cuda.is_available() (the GPU's would take minutes in the interpreter)."""

import torch
import triton
import triton.language as tl


@triton.jit
def shift_kernel(x_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + shift.to(tl.float32), mask=mask)


def shift(x, by=0.5):
    out = torch.empty_like(x)
    shift_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), by, BLOCK=128)
    torch.cuda.synchronize()
    return out


def tritonlens_cases():
    x = torch.randn(1 << 24 if torch.cuda.is_available() else 1000, device="cuda")
    assert x.is_cuda
    yield shift, (x,)
