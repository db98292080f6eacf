import resource

import torch
import triton
import triton.language as tl


@triton.jit
def fill_kernel(y_ptr):
    tl.store(y_ptr, 1.0)


def hog():
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        # Without a cap, growing until failure would bring in the host's OOM killer instead.
        raise RuntimeError("the worker runs without an address-space limit")
    chunks = [bytearray(soft + (1 << 30))]  # more than the worker may map
    fill_kernel[(1,)](torch.zeros(1))
    return chunks


def tritonlens_cases():
    yield hog, ()
