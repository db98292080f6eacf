import torch
import triton
import triton.language as tl


@triton.jit
def negate_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


if __name__ == "__main__":
    x = torch.randn(300)
    y = torch.empty_like(x)
    negate_kernel[(3,)](x, y, 300, BLOCK=128)
    assert torch.equal(y, -x)
    print("main block ran")
