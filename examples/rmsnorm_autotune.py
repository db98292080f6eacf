"""RMSNorm forward, y = x / sqrt(mean(x**2) + eps) * w, one program per row, autotuned over
BLOCK_SIZE and num_warps (keyed on the row length N).

Deliberate weakness (performance, not correctness): the config list includes BLOCK_SIZE=256 with
num_warps=16, i.e. 512 threads for 256 elements: half the threads of every program do nothing.
The autotuner will usually not pick it, but it pays to benchmark it for every new N.
"""
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: run kernels in Triton's interpreter

import triton
import triton.language as tl


def _prune_configs(configs, named_args, **kwargs):
    # A block wider than the row only masks lanes off: keep the configs that fit (at least one).
    n_pow2 = triton.next_power_of_2(named_args["N"])
    fitting = [c for c in configs if c.kwargs["BLOCK_SIZE"] <= n_pow2] or configs[:1]
    # The interpreter has no GPU timer to benchmark with: run the first config only.
    return fitting[:1] if os.environ.get("TRITON_INTERPRET") == "1" else fitting


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 256}, num_warps=16),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
    ],
    key=["N"],
    prune_configs_by={"early_config_prune": _prune_configs},
)
@triton.jit
def rms_norm_fwd_kernel(x_ptr, w_ptr, y_ptr, stride_x, stride_y, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y

    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += x * x
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / N + eps)

    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    assert x.ndim == 2 and x.stride(1) == 1 and weight.shape == (x.shape[1],)
    M, N = x.shape
    y = torch.empty_like(x)
    rms_norm_fwd_kernel[(M,)](x, weight, y, x.stride(0), y.stride(0), N, eps)
    return y


def tritonlens_cases():
    gen = torch.Generator().manual_seed(0)

    def case(M, N, dtype):
        x = torch.randn(M, N, generator=gen).to(dtype=dtype, device=DEVICE)
        w = torch.rand(N, generator=gen).add_(0.5).to(dtype=dtype, device=DEVICE)
        return rms_norm, (x, w)

    if DEVICE == "cuda":
        yield case(16384, 4096, torch.bfloat16)  # performance shape
    else:
        yield case(16, 1024, torch.float32)
    yield case(5, 3000, torch.float32)  # ragged: N not a multiple of any BLOCK_SIZE


def test_rms_norm():
    for fn, (x, w) in tritonlens_cases():
        xf = x.float()
        ref = (xf * torch.rsqrt(xf.pow(2).mean(dim=1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)
        tol = 2e-2 if x.dtype == torch.bfloat16 else 1e-5
        torch.testing.assert_close(fn(x, w), ref, rtol=tol, atol=tol)


if __name__ == "__main__":
    test_rms_norm()
    print("OK")
