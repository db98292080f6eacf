"""Theoretical occupancy of a compiled kernel on a target: how many blocks (programs) and warps
fit on one SM given its registers per thread, shared memory per block and warps per block, and which
resource runs out first. The SM limits per compute capability are tritonlens.analysis.gpus.ARCHS.
"""

from __future__ import annotations

from dataclasses import dataclass

from tritonlens.analysis.gpus import ARCHS, Arch

# The architectures the compile job accepts: the ones whose limits we know.
TARGET_LIMITS = ARCHS


def limits_for(target: str) -> Arch:
    try:
        return ARCHS[target]
    except KeyError:
        raise ValueError(f"no SM limits for target {target!r}; known: {', '.join(ARCHS)}") from None


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
        by["shared memory"] = lim.smem_per_sm // per_block if shared_bytes <= lim.smem_per_block else 0
    else:
        by["shared memory"] = lim.max_blocks
    blocks = min(by.values())
    if blocks == 0:
        limiter = "shared memory" if by["shared memory"] == 0 else "registers" if by["registers"] == 0 else "warps"
    else:
        # Ties name the resource a user can most easily trade: registers, then shared memory, then warps.
        # A kernel using no shared memory is never limited by it, whatever the tie says.
        limiter = next(k for k in ("registers", "shared memory", "warps", "blocks")
                       if by[k] == blocks and (k != "shared memory" or shared_bytes > 0))
    warps = blocks * num_warps
    return Occupancy(blocks, warps, round(100.0 * warps / lim.max_warps, 1), limiter, by)


def occupancy_text(percent: float | None, limiter: str | None) -> str:
    """'occupancy 25% (limited by registers)'; at 100% nothing limits it, and it says no more."""
    if percent is None:
        return "occupancy unknown"
    if percent >= 100 or not limiter:
        return f"occupancy {percent:g}%"
    return f"occupancy {percent:g}% (limited by {limiter})"
