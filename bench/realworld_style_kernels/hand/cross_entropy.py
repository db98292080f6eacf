"""Hand variant of ../cross_entropy.py: the max and the sum of exponentials in one online pass, then
the gradient pass: two walks over each row instead of three."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl


@triton.jit
def cross_entropy_fwd_bwd_kernel(logits_ptr, targets_ptr, loss_ptr, grad_ptr, stride_l, stride_g, V,
                                 BLOCK: tl.constexpr, ONE_PASS: tl.constexpr):
    row = tl.program_id(0)
    base = logits_ptr + row * stride_l
    target = tl.load(targets_ptr + row)
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    d = tl.zeros([BLOCK], dtype=tl.float32)
    if ONE_PASS:
        for off in range(0, V, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            x = tl.load(base + cols, mask=cols < V, other=float("-inf"))
            m_new = tl.maximum(m, x)
            shift = tl.where(m_new == float("-inf"), 0.0, m_new)  # a lane that saw only padding stays 0
            d = d * tl.exp(m - shift) + tl.exp(x - shift)
            m = m_new
        row_max = tl.max(m, axis=0)
        denom = tl.sum(d * tl.exp(m - row_max), axis=0)
    else:
        for off in range(0, V, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            m = tl.maximum(m, tl.load(base + cols, mask=cols < V, other=float("-inf")))
        row_max = tl.max(m, axis=0)
        for off in range(0, V, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            d += tl.exp(tl.load(base + cols, mask=cols < V, other=float("-inf")) - row_max)
        denom = tl.sum(d, axis=0)
    lse = row_max + tl.log(denom)
    tl.store(loss_ptr + row, lse - tl.load(base + target))
    for off in range(0, V, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < V
        x = tl.load(base + cols, mask=mask, other=float("-inf"))
        g = tl.exp(x - row_max) / denom - tl.where(cols == target, 1.0, 0.0)
        tl.store(grad_ptr + row * stride_g + cols, g, mask=mask)


def cross_entropy_with_grad(logits, targets, BLOCK=2048, num_warps=8, ONE_PASS=True):
    M, V = logits.shape
    loss = torch.empty(M, dtype=torch.float32, device=logits.device)
    grad = torch.empty_like(logits)
    cross_entropy_fwd_bwd_kernel[(M,)](logits, targets, loss, grad, logits.stride(0), grad.stride(0), V, BLOCK=BLOCK,
                                       ONE_PASS=ONE_PASS, num_warps=num_warps)
    return loss, grad


VARIANTS = {"online max+sum, 2048-blocks, 8 warps": {},
            "online max+sum, original config": {"BLOCK": 1024, "num_warps": 4},
            "three passes, 2048-blocks, 8 warps (config only)": {"ONE_PASS": False}}
STRUCTURAL = "one online pass"
