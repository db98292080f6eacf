"""A kernel whose harness takes a minute: profiling it must be cancellable."""
import os
import time

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def copy(x):
    out = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out


def tritonlens_cases():
    with open(os.environ.get("SLOW_HARNESS_PIDFILE", os.path.join(os.path.dirname(__file__), "worker.pid")), "w") as f:
        f.write(str(os.getpid()))
    time.sleep(60)
    yield copy, (torch.randn(1000),)
