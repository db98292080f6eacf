import torch
import triton
import triton.language as tl


@triton.jit
def fill_kernel(y_ptr):
    tl.store(y_ptr, 1.0)


def fill():
    fill_kernel[(1,)](torch.zeros(1))


def tritonlens_cases():
    raise RuntimeError("the harness is broken on purpose")
    yield fill, ()
