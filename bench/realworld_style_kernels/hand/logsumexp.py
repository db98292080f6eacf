"""Hand variant of ../logsumexp.py: one online pass (a running max and a running sum rescaled when
the max grows, lane by lane), so each row is read once."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl


@triton.jit
def logsumexp_kernel(x_ptr, out_ptr, stride, N, BLOCK: tl.constexpr, ONE_PASS: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * stride
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    if ONE_PASS:
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            x = tl.load(base + cols, mask=cols < N, other=float("-inf"))
            m_new = tl.maximum(m, x)
            shift = tl.where(m_new == float("-inf"), 0.0, m_new)  # a lane that saw only padding stays 0
            s = s * tl.exp(m - shift) + tl.exp(x - shift)
            m = m_new
        row_max = tl.max(m, axis=0)
        total = tl.sum(s * tl.exp(m - row_max), axis=0)
    else:
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            m = tl.maximum(m, tl.load(base + cols, mask=cols < N, other=float("-inf")))
        row_max = tl.max(m, axis=0)
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            s += tl.exp(tl.load(base + cols, mask=cols < N, other=float("-inf")) - row_max)
        total = tl.sum(s, axis=0)
    tl.store(out_ptr + row, row_max + tl.log(total))


def logsumexp(x, BLOCK=2048, num_warps=8, ONE_PASS=True):
    M, N = x.shape
    out = torch.empty(M, dtype=torch.float32, device=x.device)
    logsumexp_kernel[(M,)](x, out, x.stride(0), N, BLOCK=BLOCK, ONE_PASS=ONE_PASS, num_warps=num_warps)
    return out


VARIANTS = {"one pass, 2048-blocks, 8 warps": {}, "one pass, original config": {"BLOCK": 1024, "num_warps": 4},
            "two passes, 2048-blocks, 8 warps (config only)": {"ONE_PASS": False},
            "two passes, 4096-blocks, 8 warps (config only)": {"ONE_PASS": False, "BLOCK": 4096}}
STRUCTURAL = "one online pass"
