"""Roofline ceilings of this GPU, measured once and cached per GPU name. Standalone.

Datasheet numbers are not what a kernel can reach; a large device-to-device copy and a large
cuBLAS product are (h100.md: 2.97 TB/s and 714-798 TFLOP/s on the H100 here). Cache file:
$TRITONLENS_CACHE or $XDG_CACHE_HOME/tritonlens or ~/.cache/tritonlens, `ceilings.json`,
{gpu name: {...}} on the machine that runs the worker (remote hosts keep their own).
"""

from __future__ import annotations

import json
import os
import time

from timing import METHOD

CACHE_VERSION = 2  # 2: measured with timing.bench (clean L2), no longer do_bench


def cache_path() -> str:
    root = os.environ.get("TRITONLENS_CACHE")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "tritonlens")
    return os.path.join(root, "ceilings.json")


def _load() -> dict:
    try:
        with open(cache_path(), encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _store(data: dict) -> None:
    path = cache_path()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
        os.replace(tmp, path)  # atomic: concurrent workers never read half a file
    except OSError:
        pass  # an unwritable cache costs a re-measure next time, nothing else


def _copy_gbps() -> float:
    import torch
    from timing import bench

    n = (1 << 30) // 4  # 1 GiB of fp32: far beyond any L2
    src = torch.empty(n, dtype=torch.float32, device="cuda").normal_()
    dst = torch.empty_like(src)
    ms = bench(lambda: dst.copy_(src))
    return 2 * n * 4 / (ms * 1e-3) / 1e9  # bytes read + written


def _matmul_tflops(dtype, tf32: bool = False, size: int = 8192) -> float:
    import torch
    from timing import bench

    a = torch.randn(size, size, device="cuda", dtype=dtype)  # random data: zeros run faster
    b = torch.randn(size, size, device="cuda", dtype=dtype)
    prev = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        ms = bench(lambda: torch.matmul(a, b))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev
    return 2 * size ** 3 / (ms * 1e-3) / 1e12


def measure() -> dict:
    import torch

    t0 = time.perf_counter()
    out = {"copy_gbps": round(_copy_gbps(), 1)}
    torch.cuda.empty_cache()
    out["matmul_bf16_tflops"] = round(_matmul_tflops(torch.bfloat16), 1)
    out["matmul_fp16_tflops"] = round(_matmul_tflops(torch.float16), 1)
    # Triton's default for an fp32 tl.dot is tf32: its own, lower, ceiling
    out["matmul_tf32_tflops"] = round(_matmul_tflops(torch.float32, tf32=True), 1)
    torch.cuda.empty_cache()
    out["matmul_tflops"] = max(out["matmul_bf16_tflops"], out["matmul_fp16_tflops"])
    out["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    out["measure_seconds"] = round(time.perf_counter() - t0, 1)
    out["method"] = ("copy: a 1 GiB fp32 device-to-device copy, bytes read+written; matmul: torch.matmul "
                     "8192^3 on random data (bf16, fp16, fp32 with tf32); each the " + METHOD)
    return out


def get(gpu_name: str, refresh: bool = False) -> dict:
    data = _load()
    entry = data.get(gpu_name)
    if entry and entry.get("version") == CACHE_VERSION and not refresh:
        return dict(entry, cached=True)
    entry = measure()
    entry["version"] = CACHE_VERSION
    data[gpu_name] = entry
    _store(data)
    return dict(entry, cached=False)
