"""The one table of GPUs we estimate and compile for: per-architecture SM limits, and per GPU its
architecture, SM count and roofline ceilings, each with where the numbers come from.

Everything else derives from here: TL013 and the hover (shared memory per block, roofline),
occupancy and TL101–TL106 (SM limits, tensor-core path), the `targetGpu` setting's enum and the
`compileTarget` names. Unknown names raise KeyError with the known ones.

Where we measured (shared/gpu/h100.md of this project: `triton.testing.do_bench` medians on an
H100 80GB HBM3) the measured figure is the ceiling, since that is what a kernel can reach; the
datasheet figure is kept beside it. Other GPUs use datasheet numbers until measured.
"""

from __future__ import annotations

from dataclasses import dataclass

ARCH_SOURCE = (
    "CUDA C++ Programming Guide, 'Technical Specifications per Compute Capability' (CUDA 12.x/13.x): "
    "resident warps/blocks, 64 K registers and 255 per thread, shared memory per SM (largest carveout) "
    "and per block (opt-in); allocation granularities of the CUDA Occupancy Calculator (registers per warp "
    "in units of 256, warps in groups of 4, shared memory in 128-byte units plus 1 KB the system reserves "
    "per block from cc 8.0); tensor-core path: the PTX instruction Triton's tl.dot lowers to "
    "(PTX ISA: mma.sync from sm_80, wgmma on sm_90, tcgen05 on sm_100)"
)


@dataclass(frozen=True)
class Arch:
    """What one compute capability gives an SM and a block (see ARCH_SOURCE)."""

    name: str  # "sm_90"
    max_warps: int  # resident warps per SM
    max_blocks: int  # resident blocks per SM
    registers: int  # 32-bit registers per SM
    max_regs_per_thread: int
    smem_per_sm: int  # bytes of shared memory per SM (largest carveout)
    smem_per_block: int  # bytes a block may opt in to: Triton's OutOfResources limit
    tensor_core_path: str  # the instruction the best tl.dot lowering uses
    note: str  # which GPUs have it
    reserved_shared: int = 1024  # per block, taken by the system (cc >= 8.0)
    reg_unit: int = 256  # registers are allocated per warp in multiples of this
    warp_unit: int = 4  # warp allocation granularity
    shared_unit: int = 128

    @property
    def capability(self) -> int:
        return capability(self.name)


_KB = 1024
ARCHS: dict[str, Arch] = {a.name: a for a in (
    Arch("sm_80", 64, 32, 65536, 255, 164 * _KB, 163 * _KB, "mma.sync", "A100 (cc 8.0)"),
    Arch("sm_86", 48, 16, 65536, 255, 100 * _KB, 99 * _KB, "mma.sync", "GA10x: A10, A40, RTX 30xx (cc 8.6)"),
    Arch("sm_89", 48, 24, 65536, 255, 100 * _KB, 99 * _KB, "mma.sync", "Ada: L4, L40, L40S, RTX 40xx (cc 8.9)"),
    # 227 KB (232,448 B) per block is what an H100 reports as max_shared_mem and Triton checks before launching.
    Arch("sm_90", 64, 32, 65536, 255, 228 * _KB, 227 * _KB, "wgmma", "H100, H200 (cc 9.0)"),
    Arch("sm_100", 64, 32, 65536, 255, 228 * _KB, 227 * _KB, "tcgen05", "B200 (cc 10.0)"),
    Arch("sm_120", 48, 32, 65536, 255, 128 * _KB, 99 * _KB, "mma.sync", "RTX 50xx (cc 12.0)"),
)}


def capability(target: str) -> int:
    """90 for "sm_90" / "sm_90a" / "sm90"; ValueError for anything else."""
    t = (target or "").strip().lower()
    digits = t[3:] if t.startswith("sm_") else t[2:] if t.startswith("sm") else ""
    digits = digits.removesuffix("a")
    if not digits.isdigit():
        raise ValueError(f"not an architecture name: {target!r} (expected e.g. \"sm_90\")")
    return int(digits)


def arch(target: str) -> Arch:
    """The limits of `target` ("sm_90", "sm_90a"); unknown ones raise KeyError naming the known."""
    try:
        key = f"sm_{capability(target)}"
    except ValueError:
        key = ""
    if key in ARCHS:
        return ARCHS[key]
    raise KeyError(f"unknown architecture {target!r}; known: {', '.join(ARCHS)}")


@dataclass(frozen=True)
class Gpu:
    name: str
    arch: str  # a key of ARCHS
    sms: int
    bandwidth: float  # bytes/s a copy kernel reaches (read + written)
    fp16_flops: float  # dense fp16 tensor-core FLOP/s with fp32 accumulation
    fp32_flops: float  # non-tensor fp32 FLOP/s
    fp64_flops: float  # non-tensor fp64 FLOP/s
    l2_bytes: int | None  # None where the datasheet does not say
    source: str  # where the numbers come from
    measured: bool  # bandwidth / fp16_flops measured by us (else datasheet)
    datasheet_bandwidth: float = 0.0
    datasheet_fp16_flops: float = 0.0

    @property
    def limits(self) -> Arch:
        return ARCHS[self.arch]

    @property
    def smem_per_block(self) -> int:
        return self.limits.smem_per_block

    @property
    def smem_per_sm(self) -> int:
        return self.limits.smem_per_sm

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the memory and compute roofs meet."""
        return self.fp16_flops / self.bandwidth


GPUS: dict[str, Gpu] = {g.name: g for g in (
    Gpu(
        name="H100", arch="sm_90", sms=132,
        bandwidth=2.97e12, fp16_flops=714e12, fp32_flops=67e12, fp64_flops=34e12, l2_bytes=50 * 2**20,
        source=("measured on H100 80GB HBM3 (shared/gpu/h100.md: 1 GiB fp32 device copy 2.97 TB/s, "
                "cuBLAS fp16 4096^3 714 TFLOP/s); NVIDIA H100 datasheet (SXM): 3.35 TB/s, 989 TFLOP/s fp16 "
                "dense, 67 TFLOP/s fp32, 34 TFLOP/s fp64, 132 SMs, 50 MB L2"),
        measured=True, datasheet_bandwidth=3.35e12, datasheet_fp16_flops=989e12,
    ),
    Gpu(
        name="H200", arch="sm_90", sms=132,
        bandwidth=4.8e12, fp16_flops=989e12, fp32_flops=67e12, fp64_flops=34e12, l2_bytes=50 * 2**20,
        source=("NVIDIA H200 datasheet (SXM): 4.8 TB/s HBM3e, 989 TFLOP/s fp16 dense, 67 TFLOP/s fp32, "
                "34 TFLOP/s fp64; the GH100 die of the H100: 132 SMs, 50 MB L2"),
        measured=False, datasheet_bandwidth=4.8e12, datasheet_fp16_flops=989e12,
    ),
    Gpu(
        name="A100", arch="sm_80", sms=108,
        bandwidth=2.039e12, fp16_flops=312e12, fp32_flops=19.5e12, fp64_flops=9.7e12, l2_bytes=40 * 2**20,
        source=("NVIDIA A100 datasheet (SXM 80GB): 2,039 GB/s HBM2e, 312 TFLOP/s fp16 dense, "
                "19.5 TFLOP/s fp32, 9.7 TFLOP/s fp64; 108 SMs, 40 MB L2"),
        measured=False, datasheet_bandwidth=2.039e12, datasheet_fp16_flops=312e12,
    ),
    Gpu(
        name="L40S", arch="sm_89", sms=142,
        bandwidth=864e9, fp16_flops=362e12, fp32_flops=91.6e12, fp64_flops=1.43e12, l2_bytes=None,
        source=("NVIDIA L40S datasheet: 864 GB/s GDDR6, 362 TFLOP/s fp16 tensor dense (733 with sparsity), "
                "91.6 TFLOP/s fp32; fp64 at 1:64 of fp32; 142 SMs (one RT core per SM: 142)"),
        measured=False, datasheet_bandwidth=864e9, datasheet_fp16_flops=362e12,
    ),
    Gpu(
        name="B200", arch="sm_100", sms=148,
        bandwidth=7.7e12, fp16_flops=2.25e15, fp32_flops=75e12, fp64_flops=37e12, l2_bytes=None,
        source=("NVIDIA HGX B200 datasheet, per GPU: 7.7 TB/s HBM3e, 4.5 PFLOP/s fp16/bf16 tensor with sparsity "
                "(2.25 dense), 75 TFLOP/s fp32, 37 TFLOP/s fp64; 148 SMs"),
        measured=False, datasheet_bandwidth=7.7e12, datasheet_fp16_flops=2.25e15,
    ),
)}

DEFAULT_GPU = "H100"


def names() -> tuple[str, ...]:
    """The GPU names the settings and the CLI accept, in table order."""
    return tuple(GPUS)


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
