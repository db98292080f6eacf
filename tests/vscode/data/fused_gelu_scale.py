"""Gated GELU and a row shift by its maximum, written the way model libraries write their Triton ops: block size and
warps picked by a helper in the wrapper, a JIT helper shared by kernels, autotune configs built by a
plain function, constexpr locals inside a kernel. Small shapes on the CPU, so Triton's interpreter
runs it in seconds."""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run kernels in Triton's interpreter

import triton
import triton.language as tl

MAX_FUSED = 65536


def pick_block_and_warps(n_cols):
    """The smallest power-of-two block covering a row, and warps that grow with it."""
    block = triton.next_power_of_2(n_cols)
    if block > MAX_FUSED:
        raise RuntimeError(f"a row of {n_cols} elements does not fit one block of at most {MAX_FUSED}")
    warps = 4
    if block >= 32768:
        warps = 32
    elif block >= 8192:
        warps = 16
    elif block >= 2048:
        warps = 8
    return block, warps


def scale_configs():
    out = []
    for block in (64, 128, 256):
        for warps in (2, 4):
            out.append(triton.Config({"BLOCK_N": block}, num_warps=warps))
    return out


@triton.jit
def gelu_tanh(x):
    k0: tl.constexpr = 0.7978845608028654
    k1: tl.constexpr = 0.044715
    inner = k0 * (x + k1 * x * x * x)
    e = tl.exp(-2.0 * tl.abs(inner))
    t = (1.0 - e) / (1.0 + e)
    t = tl.where(inner >= 0, t, -t)
    return 0.5 * x * (1.0 + t)


@triton.jit
def gelu_gate_fwd_kernel(a_ptr, b_ptr, c_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    a_ptr += row * stride
    b_ptr += row * stride
    c_ptr += row * stride
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    a = tl.load(a_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    c = gelu_tanh(a).to(b.dtype) * b
    tl.store(c_ptr + cols, c, mask=mask)


@triton.autotune(configs=scale_configs(), key=["n_cols"])
@triton.jit
def row_shift_kernel(x_ptr, w_ptr, y_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    CHUNKS: tl.constexpr = 4
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    y_row = y_ptr + row * stride
    row_max = float("-inf")
    for start in range(0, n_cols, BLOCK_N * CHUNKS):
        for c in tl.static_range(CHUNKS):
            cols = start + c * BLOCK_N + tl.arange(0, BLOCK_N)
            x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
            row_max = tl.maximum(row_max, tl.max(x, axis=0))
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, ((x - row_max) * w).to(y_ptr.dtype.element_ty), mask=mask)


def gelu_gate(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    shape = a.shape
    a, b = a.reshape(-1, shape[-1]).contiguous(), b.reshape(-1, shape[-1]).contiguous()
    rows, n_cols = a.shape
    c = torch.empty_like(a)
    BLOCK_SIZE, num_warps = pick_block_and_warps(n_cols)
    gelu_gate_fwd_kernel[(rows,)](a, b, c, c.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return c.view(*shape)


def row_shift(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    rows, n_cols = x.shape
    y = torch.empty_like(x)
    row_shift_kernel[(rows,)](x, w, y, x.stride(0), n_cols)
    return y


def tritonlens_cases():
    gen = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=gen).to(DEVICE)

    yield gelu_gate, (rand(4, 300), rand(4, 300))
    yield gelu_gate, (rand(2, 3, 64), rand(2, 3, 64))
    yield row_shift, (rand(6, 700), rand(700).abs() + 0.5)


def test_gelu_gate():
    for fn, args in tritonlens_cases():
        if fn is gelu_gate:
            a, b = args
            ref = torch.nn.functional.gelu(a.float(), approximate="tanh") * b
            torch.testing.assert_close(fn(a, b), ref, rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    test_gelu_gate()
    print("OK")
