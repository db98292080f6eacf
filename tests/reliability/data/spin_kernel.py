import torch
import triton
import triton.language as tl


@triton.jit
def spin_kernel(x_ptr, n):
    i = 0
    while i < n:  # n is huge: the launch never ends
        i += 0 * tl.load(x_ptr) + 1


def spin():
    spin_kernel[(1,)](torch.zeros(1), 2**62)


def tritonlens_cases():
    yield spin, ()
