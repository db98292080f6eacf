"""Two costs the static rules quote, measured on the GPU: TL023 and TL024.

- fp32 `tl.dot` by input precision: "ieee" (FMA, no tensor cores), "tf32" (the default),
  "tf32x3" (three tensor-core passes, about fp32 accuracy), on a 4096³ matmul and on the small
  per-program chunk shape linear-attention kernels use (64×64 @ 64×64, many programs).
- interleaved pairs (complex numbers, GPT-J-style rotary): two stride-2 loads
  `tl.load(p + 2*i)` / `tl.load(p + 2*i + 1)` against one contiguous load of both halves split
  with `tl.split`, on an elementwise kernel over 2^26 pairs (fp32 and bf16).

Run on a GPU: python bench/fp32_dot_and_interleave.py → table + bench/results/fp32_dot_and_interleave.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

RESULTS = Path(__file__).parent / "results"


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BN)
    pid_m, pid_n = pid // grid_n, pid % grid_n
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def chunk_dots(a_ptr, b_ptr, c_ptr, C: tl.constexpr, PRECISION: tl.constexpr):
    # One 64x64 @ 64x64 product per program, as a chunked linear-attention kernel does per chunk.
    pid = tl.program_id(0).to(tl.int64)
    r = tl.arange(0, C)
    base = pid * C * C
    a = tl.load(a_ptr + base + r[:, None] * C + r[None, :])
    b = tl.load(b_ptr + base + r[:, None] * C + r[None, :])
    c = tl.dot(a, b, input_precision=PRECISION)
    c = tl.dot(c, b, input_precision=PRECISION)
    tl.store(c_ptr + base + r[:, None] * C + r[None, :], c)


@triton.jit
def pairs_strided(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    re = tl.load(x_ptr + 2 * i, mask=m)
    im = tl.load(x_ptr + 2 * i + 1, mask=m)
    tl.store(y_ptr + 2 * i, re * 0.5 - im * 0.25, mask=m)
    tl.store(y_ptr + 2 * i + 1, re * 0.25 + im * 0.5, mask=m)


@triton.jit
def pairs_split(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    j = 2 * i[:, None] + tl.arange(0, 2)[None, :]
    m = j < 2 * n
    re, im = tl.split(tl.load(x_ptr + j, mask=m))
    out = tl.join(re * 0.5 - im * 0.25, re * 0.25 + im * 0.5)
    tl.store(y_ptr + j, out, mask=m)


def bench_dots() -> list[dict]:
    rows = []
    n = 4096
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    ref = a.double() @ b.double()
    for prec in ("ieee", "tf32", "tf32x3"):
        c = torch.empty(n, n, device="cuda")
        grid = (triton.cdiv(n, 128) * triton.cdiv(n, 128),)

        def run(grid=grid, c=c, prec=prec):
            matmul[grid](a, b, c, n, n, n, BM=128, BN=128, BK=32, PRECISION=prec, num_warps=8, num_stages=3)

        ms = triton.testing.do_bench(run)
        err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
        rows.append({"case": "matmul 4096^3 fp32", "precision": prec, "ms": ms,
                     "tflops": 2 * n ** 3 / ms / 1e9, "max_rel_err": err})
    C, programs = 64, 16384
    a = torch.randn(programs, C, C, device="cuda") / 8
    b = torch.randn(programs, C, C, device="cuda") / 8
    ref = (a.double() @ b.double()) @ b.double()
    for prec in ("ieee", "tf32", "tf32x3"):
        c = torch.empty_like(a)

        def run(c=c, prec=prec):
            chunk_dots[(programs,)](a, b, c, C=C, PRECISION=prec, num_warps=4)

        ms = triton.testing.do_bench(run)
        err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
        rows.append({"case": "2 chained 64x64x64 dots x 16384 programs", "precision": prec, "ms": ms,
                     "tflops": 2 * 2 * C ** 3 * programs / ms / 1e9, "max_rel_err": err})
    return rows


def bench_pairs() -> list[dict]:
    rows = []
    n = 1 << 26
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(2 * n, device="cuda", dtype=dtype)
        for name, kernel in (("two stride-2 loads", pairs_strided), ("one load + tl.split", pairs_split)):
            y = torch.empty_like(x)
            for block in (512, 1024):
                def run(kernel=kernel, x=x, y=y, block=block):
                    kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)

                ms = triton.testing.do_bench(run)
                rows.append({"case": f"{name} {str(dtype).split('.')[-1]}", "block": block, "ms": ms,
                             "tb_per_s": 2 * x.numel() * x.element_size() / ms / 1e9})
        ref = torch.empty_like(x)
        pairs_strided[(triton.cdiv(n, 1024),)](x, ref, n, BLOCK=1024)
        pairs_split[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        assert torch.equal(ref, y), "the two pair kernels disagree"
    return rows


def main() -> int:
    out = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
           "dots": bench_dots(), "pairs": bench_pairs()}
    for r in out["dots"]:
        print(f"{r['case']:<42} {r['precision']:<7} {r['ms']:8.3f} ms {r['tflops']:7.1f} TFLOP/s  err {r['max_rel_err']:.1e}")
    for r in out["pairs"]:
        print(f"{r['case']:<42} BLOCK={r['block']:<5} {r['ms']:8.3f} ms {r['tb_per_s']:6.2f} TB/s")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fp32_dot_and_interleave.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
