"""Development harnesses: liger-kernel's forward ops at Llama-3-8B sizes (liger's own benchmark
defaults: hidden 4096, intermediate 14336, vocab 128256, 32 query / 8 kv heads of 128, bf16,
8192 tokens), one function per op, for `--harness bench/dev_harnesses/liger_ops.py::rms_norm`.

Each function yields the performance case first (real size on a GPU), then a small ragged one; on
a machine without a GPU (the interpreter) every case is small and fp32.

How liger is imported: its source tree (`$TRITONLENS_CORPUS/sdist/liger_kernel-*/src`, or the
packed `.corpus/` copy, see bench/pack_corpus.sh) goes on sys.path and the op module is imported
as `liger_kernel.ops.<op>`. liger_kernel/__init__.py imports its `functional` registry, which needs
only torch, triton and `packaging` (no transformers), so the package imports as it is. KERNELS maps
each harness to the kernel file optimize is given.

    python bench/optimize_heldout.py --set dev            # all of them, on a GPU
"""

from __future__ import annotations

import glob
import importlib
import os
import sys

ROWS, HIDDEN, INTER, VOCAB, HEADS, KV_HEADS, HEAD_DIM = 8192, 4096, 14336, 128256, 32, 8, 128
KERNELS = {"rms_norm": "rms_norm", "layer_norm": "layer_norm", "swiglu": "swiglu", "geglu": "geglu",
           "rope": "rope", "cross_entropy": "cross_entropy", "softmax": "softmax", "dyt": "dyt"}


def liger_src() -> str:
    cache = os.environ.get("TRITONLENS_CORPUS", os.path.expanduser("~/.cache/tritonlens-corpus"))
    found = sorted(glob.glob(os.path.join(cache, "sdist", "liger_kernel-*", "src")))
    if not found:
        raise FileNotFoundError(f"no liger_kernel source under {cache}/sdist (set TRITONLENS_CORPUS)")
    return found[-1]


def kernel_file(name: str) -> str:
    return os.path.join(liger_src(), "liger_kernel", "ops", f"{KERNELS[name]}.py")


def _op(name: str):
    src = liger_src()
    if src not in sys.path:
        sys.path.insert(0, src)
    return importlib.import_module(f"liger_kernel.ops.{KERNELS[name]}")


def _setup():
    """(device, dtype, real size?): the real size in bf16 on a GPU, small fp32 on the CPU."""
    import torch

    torch.manual_seed(0)
    if torch.cuda.is_available():
        return "cuda", torch.bfloat16, True
    return "cpu", torch.float32, False


def _sizes(real: bool, big: tuple, small: tuple, tiny: tuple) -> list[tuple]:
    return [big, small] if real else [small, tiny]


def _rows_hidden(name: str):
    import torch

    dev, dt, real = _setup()
    mod = _op(name)
    for rows, hidden in _sizes(real, (ROWS, HIDDEN), (37, 1000), (5, 70)):
        x = torch.randn(rows, hidden, device=dev, dtype=dt)
        w = torch.randn(hidden, device=dev, dtype=dt)
        yield mod, x, w, torch.randn(hidden, device=dev, dtype=dt)


def rms_norm():
    for mod, x, w, _ in _rows_hidden("rms_norm"):
        yield mod.rms_norm_forward, (x, w, 1e-6, 0.0, "llama", None)


def layer_norm():
    for mod, x, w, b in _rows_hidden("layer_norm"):
        yield mod.layer_norm_forward, (x, w, b, 1e-6)


def softmax():
    for mod, x, _, _ in _rows_hidden("softmax"):
        yield mod._softmax_forward, (x,)


def dyt():
    import torch

    for mod, x, w, b in _rows_hidden("dyt"):
        yield mod.liger_dyt_fwd, (x, torch.full((1,), 0.5, device=x.device, dtype=x.dtype), w, b)


def _gated(name: str, fn_name: str):
    import torch

    dev, dt, real = _setup()
    mod = _op(name)
    for rows, inter in _sizes(real, (ROWS, INTER), (37, 1000), (5, 70)):
        a = torch.randn(rows, inter, device=dev, dtype=dt)
        b = torch.randn(rows, inter, device=dev, dtype=dt)
        yield getattr(mod, fn_name), (a, b)


def swiglu():
    yield from _gated("swiglu", "swiglu_forward")


def geglu():
    yield from _gated("geglu", "geglu_forward")


def rope():
    import torch

    dev, dt, real = _setup()
    mod = _op("rope")
    for seq, heads, kv, dim in _sizes(real, (ROWS, HEADS, KV_HEADS, HEAD_DIM), (37, 4, 2, 64), (5, 2, 1, 16)):
        q = torch.randn(1, seq, heads, dim, device=dev, dtype=dt).transpose(1, 2)
        k = torch.randn(1, seq, kv, dim, device=dev, dtype=dt).transpose(1, 2)
        cos = torch.randn(1, seq, dim, device=dev, dtype=dt)
        sin = torch.randn(1, seq, dim, device=dev, dtype=dt)
        yield mod.rope_forward, (q, k, cos, sin)


def cross_entropy():
    import torch

    dev, _dt, real = _setup()
    mod = _op("cross_entropy")
    for rows, vocab in _sizes(real, (ROWS // 2, VOCAB), (37, 1000), (5, 70)):
        x = torch.randn(rows, vocab, device=dev, dtype=torch.float32)
        target = torch.randint(vocab, (rows,), device=dev)
        yield mod.cross_entropy_forward, (x, target, None, -100, 0.0, 0.0, "mean", None, False)
