"""Ceilings of the GPUs we estimate against: bandwidth, tensor-core peak, shared memory per block.

Where we measured (shared/gpu/h100.md of this project: `triton.testing.do_bench` medians on an
H100 80GB HBM3) the measured figure is the ceiling, since that is what a kernel can reach; the
datasheet figure is kept beside it. Other GPUs use datasheet numbers until measured.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    name: str
    arch: str  # "sm_90"
    sms: int
    bandwidth: float  # bytes/s a copy kernel reaches (read + written)
    fp16_flops: float  # dense fp16 tensor-core FLOP/s with fp32 accumulation
    fp32_flops: float  # non-tensor fp32 FLOP/s
    fp64_flops: float  # non-tensor fp64 FLOP/s
    smem_per_block: int  # opt-in shared memory per block, bytes
    l2_bytes: int
    source: str  # where the numbers come from
    measured: bool  # bandwidth / fp16_flops measured by us (else datasheet)
    datasheet_bandwidth: float = 0.0
    datasheet_fp16_flops: float = 0.0

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the memory and compute roofs meet."""
        return self.fp16_flops / self.bandwidth


GPUS: dict[str, Gpu] = {
    "H100": Gpu(
        name="H100", arch="sm_90", sms=132,
        bandwidth=2.97e12, fp16_flops=714e12, fp32_flops=67e12, fp64_flops=34e12,
        smem_per_block=232_448, l2_bytes=50 * 2**20,
        source=("measured on H100 80GB HBM3 (shared/gpu/h100.md: 1 GiB fp32 device copy 2.97 TB/s, "
                "cuBLAS fp16 4096^3 714 TFLOP/s); datasheet: 3.35 TB/s, 989 TFLOP/s fp16 dense, "
                "67 TFLOP/s fp32, 34 TFLOP/s fp64; CUDA C Programming Guide, compute capability 9.0: "
                "227 KB shared memory per block"),
        measured=True, datasheet_bandwidth=3.35e12, datasheet_fp16_flops=989e12,
    ),
    "H200": Gpu(
        name="H200", arch="sm_90", sms=132,
        bandwidth=4.8e12, fp16_flops=989e12, fp32_flops=67e12, fp64_flops=34e12,
        smem_per_block=232_448, l2_bytes=50 * 2**20,
        source=("NVIDIA H200 datasheet (SXM): 4.8 TB/s HBM3e, 989 TFLOP/s fp16 dense, 67 TFLOP/s fp32, "
                "34 TFLOP/s fp64; compute capability 9.0: 227 KB shared memory per block"),
        measured=False, datasheet_bandwidth=4.8e12, datasheet_fp16_flops=989e12,
    ),
    "A100": Gpu(
        name="A100", arch="sm_80", sms=108,
        bandwidth=2.039e12, fp16_flops=312e12, fp32_flops=19.5e12, fp64_flops=9.7e12,
        smem_per_block=166_912, l2_bytes=40 * 2**20,
        source=("NVIDIA A100 datasheet (SXM 80GB): 2,039 GB/s HBM2e, 312 TFLOP/s fp16 dense, "
                "19.5 TFLOP/s fp32, 9.7 TFLOP/s fp64; compute capability 8.0: 163 KB shared memory per block"),
        measured=False, datasheet_bandwidth=2.039e12, datasheet_fp16_flops=312e12,
    ),
}

DEFAULT_GPU = "H100"


def get(name: str | None) -> Gpu:
    """The GPU named `name` ("H100", "h200", "sm_90" → H100); unknown names raise KeyError."""
    if not name:
        return GPUS[DEFAULT_GPU]
    key = name.strip().upper()
    if key in GPUS:
        return GPUS[key]
    for gpu in GPUS.values():  # an architecture names its first GPU in the table
        if gpu.arch.upper() == key or gpu.arch.upper().replace("SM_", "SM") == key:
            return gpu
    raise KeyError(f"unknown GPU {name!r}; known: {', '.join(GPUS)}")
