"""Cross entropy forward that also writes the gradient of the logits (softmax - one-hot), as
fused training losses do: logits [rows, vocab] fp32, one target per row.

Typical inefficiency: three walks over each 128 KB row (max, sum of exponentials, gradient): the
row comes from memory three times, where an online max-and-sum would need two.
"""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl

BOUND = "memory"


@triton.jit
def cross_entropy_fwd_bwd_kernel(logits_ptr, targets_ptr, loss_ptr, grad_ptr, stride_l, stride_g, V,
                                 BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = logits_ptr + row * stride_l
    target = tl.load(targets_ptr + row)
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for off in range(0, V, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < V, other=float("-inf"))
        m = tl.maximum(m, x)
    row_max = tl.max(m, axis=0)
    d = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, V, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < V, other=float("-inf"))
        d += tl.exp(x - row_max)
    denom = tl.sum(d, axis=0)
    lse = row_max + tl.log(denom)
    x_target = tl.load(base + target)
    tl.store(loss_ptr + row, lse - x_target)
    for off in range(0, V, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < V
        x = tl.load(base + cols, mask=mask, other=float("-inf"))
        g = tl.exp(x - row_max) / denom - tl.where(cols == target, 1.0, 0.0)
        tl.store(grad_ptr + row * stride_g + cols, g, mask=mask)


def cross_entropy_with_grad(logits: torch.Tensor, targets: torch.Tensor):
    M, V = logits.shape
    loss = torch.empty(M, dtype=torch.float32, device=logits.device)
    grad = torch.empty_like(logits)
    cross_entropy_fwd_bwd_kernel[(M,)](logits, targets, loss, grad, logits.stride(0), grad.stride(0), V,
                                       BLOCK=1024, num_warps=4)
    return loss, grad


def reference(logits, targets):
    lf = logits.float()
    loss = torch.nn.functional.cross_entropy(lf, targets, reduction="none")
    grad = torch.softmax(lf, dim=1)
    grad[torch.arange(len(targets), device=logits.device), targets] -= 1.0
    return loss, grad


def work(args, out) -> dict:
    logits, targets = args
    return {"bytes": 2 * logits.numel() * 4 + targets.numel() * 8 + logits.shape[0] * 4, "flops": None}


def tritonlens_cases():
    gen = torch.Generator(device=DEVICE).manual_seed(0)

    def case(M, V):
        logits = torch.randn(M, V, generator=gen, device=DEVICE) * 3
        # targets below V / 2: a verifier that shrinks V to a ragged size keeps them inside the row
        return cross_entropy_with_grad, (logits, torch.randint(0, V // 2, (M,), generator=gen, device=DEVICE))

    yield case(2048, 32768) if DEVICE == "cuda" else case(8, 4096)  # performance shape: 2^26 fp32
    yield case(5, 1500)  # ragged: the last chunk partly filled
