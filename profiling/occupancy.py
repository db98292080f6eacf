"""Theoretical occupancy of a compiled kernel on a target: how many blocks (programs) and warps
fit on one SM given its registers per thread, shared memory per block and warps per block, and which
resource runs out first.

Limits per compute capability, from the CUDA C++ Programming Guide, "Compute Capabilities" →
"Technical Specifications per Compute Capability" (CUDA 12.x/13.x), and the allocation granularities
of the CUDA Occupancy Calculator (registers are handed out per warp in units of 256, warps in
groups of 4, shared memory in 128-byte units plus 1 KB the system reserves per block from cc 8.0).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SMLimits:
    name: str
    max_warps: int  # resident warps per SM
    max_blocks: int  # resident blocks per SM
    registers: int  # 32-bit registers per SM
    max_regs_per_thread: int
    shared_per_sm: int  # bytes of shared memory per SM (largest carveout)
    shared_per_block: int  # bytes a block may opt in to: Triton's OutOfResources limit
    reserved_shared: int = 1024  # per block, taken by the system (cc >= 8.0)
    reg_unit: int = 256  # registers are allocated per warp in multiples of this
    warp_unit: int = 4  # warp allocation granularity
    shared_unit: int = 128


TARGET_LIMITS = {
    # A100 (cc 8.0): 64 warps, 32 blocks, 64 K regs, 164 KB smem/SM, 163 KB/block opt-in.
    "sm_80": SMLimits("sm_80", 64, 32, 65536, 255, 167936, 166912),
    # GA10x (cc 8.6): 48 warps, 16 blocks, 100 KB smem/SM, 99 KB/block.
    "sm_86": SMLimits("sm_86", 48, 16, 65536, 255, 102400, 101376),
    # Ada L4/L40/4090 (cc 8.9): 48 warps, 24 blocks, 100 KB smem/SM, 99 KB/block.
    "sm_89": SMLimits("sm_89", 48, 24, 65536, 255, 102400, 101376),
    # H100/H200 (cc 9.0): 64 warps, 32 blocks, 228 KB smem/SM, 227 KB (232448 B) per block — the
    # limit an H100 reports as max_shared_mem and Triton checks before launching.
    "sm_90": SMLimits("sm_90", 64, 32, 65536, 255, 233472, 232448),
    # B200 (cc 10.0): 64 warps, 32 blocks, 228 KB smem/SM, 227 KB per block.
    "sm_100": SMLimits("sm_100", 64, 32, 65536, 255, 233472, 232448),
    # RTX 50xx (cc 12.0): 48 warps, 32 blocks, 128 KB smem/SM, 99 KB per block.
    "sm_120": SMLimits("sm_120", 48, 32, 65536, 255, 131072, 101376),
}


def limits_for(target: str) -> SMLimits:
    try:
        return TARGET_LIMITS[target]
    except KeyError:
        raise ValueError(f"no SM limits for target {target!r}; known: {', '.join(TARGET_LIMITS)}") from None


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float  # percent of the SM's resident warps
    limiter: str  # "registers" | "shared memory" | "warps" | "blocks" | "does not fit"
    by_resource: dict  # blocks each resource alone would allow

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def occupancy(target: str, registers: int, shared_bytes: int, num_warps: int) -> Occupancy:
    lim = limits_for(target)
    regs_per_warp = _round_up(max(registers, 1) * 32, lim.reg_unit)
    warps_by_regs = (lim.registers // regs_per_warp) // lim.warp_unit * lim.warp_unit
    by = {
        "registers": warps_by_regs // num_warps,
        "warps": lim.max_warps // num_warps,
        "blocks": lim.max_blocks,
    }
    if shared_bytes > 0:
        per_block = _round_up(shared_bytes + lim.reserved_shared, lim.shared_unit)
        by["shared memory"] = lim.shared_per_sm // per_block if shared_bytes <= lim.shared_per_block else 0
    else:
        by["shared memory"] = lim.max_blocks
    blocks = min(by.values())
    if blocks == 0:
        limiter = "shared memory" if by["shared memory"] == 0 else "registers" if by["registers"] == 0 else "warps"
    else:
        # Ties name the resource a user can most easily trade: registers, then shared memory, then warps.
        limiter = next(k for k in ("registers", "shared memory", "warps", "blocks") if by[k] == blocks)
    warps = blocks * num_warps
    return Occupancy(blocks, warps, round(100.0 * warps / lim.max_warps, 1), limiter, by)
