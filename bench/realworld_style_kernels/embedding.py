"""Embedding lookup: out[i] = weight[ids[i]] for 2^18 tokens of a 32000 x 256 fp16 table.

Typical inefficiency: one program per token, so each of 2^18 programs copies one 512-byte row
with two fp16 a thread.
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
def embedding_kernel(ids_ptr, weight_ptr, out_ptr, stride_w, stride_o, D, BLOCK_D: tl.constexpr):
    tok = tl.program_id(0)
    idx = tl.load(ids_ptr + tok)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    row = tl.load(weight_ptr + idx * stride_w + cols, mask=mask)
    tl.store(out_ptr + tok * stride_o + cols, row, mask=mask)


def embedding(ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    n = ids.numel()
    D = weight.shape[1]
    out = torch.empty((n, D), dtype=weight.dtype, device=weight.device)
    embedding_kernel[(n,)](ids, weight, out, weight.stride(0), out.stride(0), D, BLOCK_D=triton.next_power_of_2(D),
                           num_warps=4)
    return out


def reference(ids, weight):
    return weight[ids]


def work(args, out) -> dict:
    """ids and the output once; the table at most once (it fits in L2)."""
    ids, weight = args
    table = min(weight.numel(), ids.numel() * weight.shape[1]) * weight.element_size()
    return {"bytes": ids.numel() * 8 + table + out.numel() * out.element_size(), "flops": None}


def tritonlens_cases():
    gen = torch.Generator(device=DEVICE).manual_seed(0)

    def case(n, V, D):
        # ids below V / 2: a verifier that shrinks V to a ragged size keeps them inside the table
        ids = torch.randint(0, V // 2, (n,), generator=gen, device=DEVICE)
        return embedding, (ids, torch.randn(V, D, generator=gen, device=DEVICE).half())

    yield case(1 << 18, 32000, 256) if DEVICE == "cuda" else case(64, 500, 256)  # performance: 2^26 fp16 out
    yield case(33, 97, 200)  # ragged dim
