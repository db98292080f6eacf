import ctypes

import torch
import triton
import triton.language as tl


@triton.jit
def poke_kernel(y_ptr):
    tl.store(y_ptr, 1.0)


def poke():
    y = torch.zeros(1)
    poke_kernel[(1,)](y)
    ctypes.string_at(0)  # an illegal memory access: the worker dies from SIGSEGV


def tritonlens_cases():
    yield poke, ()
