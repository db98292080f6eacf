"""Static estimates as hover markdown, placed against the target GPU's measured roofline."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

# Measured on an H100 80GB HBM3 (shared/gpu/h100.md): device-to-device copy and cuBLAS peaks.
CEILINGS = {
    "H100": {"copy_bytes_per_s": 2.97e12, "fp16_flops": 714e12, "bf16_flops": 743e12},
}


def ceilings_for(gpu: str) -> tuple[str, dict]:
    """Measured ceilings for `gpu`; only the H100 has been measured, so others fall back to it."""
    if gpu in CEILINGS:
        return gpu, CEILINGS[gpu]
    return "H100", CEILINGS["H100"]


def ridge_point(gpu: str) -> tuple[float, float]:
    """(low, high) arithmetic intensity in FLOP/byte where the roofline bends (fp16, bf16 peaks)."""
    _, c = ceilings_for(gpu)
    return c["fp16_flops"] / c["copy_bytes_per_s"], c["bf16_flops"] / c["copy_bytes_per_s"]


def _estimates():
    try:
        from tritonlens.analysis import estimates
    except ImportError:
        return None
    return estimates


def kernel_section(module, kernel, settings) -> str:
    est = _estimates()
    if est is None:
        return ""
    return ""


def call_section(module, kernel, call, settings) -> str:
    est = _estimates()
    if est is None:
        return ""
    return ""
