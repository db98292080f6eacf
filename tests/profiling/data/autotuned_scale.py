"""An autotuned kernel whose configs a plain function builds in a loop, and a harness that calls it:
the interpreter cannot time configs, so a profile must run one of them untimed."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl


def tile_configs():
    out = []
    for block in (32, 64, 128):
        out.append(triton.Config({"BLOCK": block}, num_warps=2 if block < 128 else 4))
    return out


@triton.autotune(configs=tile_configs(), key=["n"])
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)


def scale(x):
    y = torch.empty_like(x)
    n = x.numel()
    scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    return y


def tritonlens_cases():
    x = torch.arange(200, dtype=torch.float32)
    yield scale, (x,)
