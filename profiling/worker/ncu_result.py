"""The "ncu" job's result: what Nsight Compute measured of one launch (ncu_csv.py reads it off
ncu's details page). Standard library only: this file travels with the worker folder."""

from __future__ import annotations

from dataclasses import dataclass

try:  # imported as tritonlens.profiling.worker.ncu_result
    from .json_message import NONE, OPT_STR, Message, json_field
    from .worker_error import WorkerError
except ImportError:  # a plain file in the worker folder
    from json_message import NONE, OPT_STR, Message, json_field
    from worker_error import WorkerError


@dataclass
class NcuSpeedOfLight(Message):
    """Throughput as a percent of the peak, per unit."""

    dram_pct: float | None = json_field((int, float, NONE), None)
    memory_pct: float | None = json_field((int, float, NONE), None)
    sm_pct: float | None = json_field((int, float, NONE), None)
    l1_pct: float | None = json_field((int, float, NONE), None)
    l2_pct: float | None = json_field((int, float, NONE), None)


@dataclass
class NcuOccupancy(Message):
    achieved_pct: float | None = json_field((int, float, NONE), None)
    theoretical_pct: float | None = json_field((int, float, NONE), None)
    limiter: str | None = json_field(OPT_STR, None)  # every limit tied at the minimum, " / "-joined
    block_limits: dict = json_field(dict, factory=dict)  # {limit: blocks per SM}


@dataclass
class NcuStall(Message):
    reason: str = json_field(str)
    cycles_per_issue: float = json_field((int, float))


@dataclass
class NcuRule(Message):
    name: str = json_field(str)
    type: str = json_field(str, "")  # OPT | WRN | ERR
    description: str = json_field(str, "")
    speedup_pct: float | None = json_field((int, float, NONE), None)


@dataclass
class NcuResult(Message):
    """The "ncu" job's result: one launch under Nsight Compute; or, on a profile's launch, only
    the `error` that stopped it."""

    kernel: str | None = json_field(OPT_STR, None)
    block: str | None = json_field(OPT_STR, None)
    grid: str | None = json_field(OPT_STR, None)
    duration_us: float | None = json_field((int, float, NONE), None)
    sol: NcuSpeedOfLight = json_field(of=NcuSpeedOfLight, factory=NcuSpeedOfLight)
    occupancy: NcuOccupancy = json_field(of=NcuOccupancy, factory=NcuOccupancy)
    registers_per_thread: float | None = json_field((int, float, NONE), None)
    shared_bytes_per_block: int | None = json_field((int, NONE), None)
    waves_per_sm: float | None = json_field((int, float, NONE), None)
    stalls: list = json_field(of=NcuStall, many=True, factory=list)  # the top five, worst first
    warp_cycles_per_issued: float | None = json_field((int, float, NONE), None)
    tensor_pipe_pct: float | None = json_field((int, float, NONE), None)
    rules: list = json_field(of=NcuRule, many=True, factory=list)
    raw_metrics: bool = json_field(bool, False)  # the stall and tensor metrics were collected
    csv: str | None = json_field(OPT_STR, None)  # the details page, when the job asked to keep it
    error: WorkerError | None = json_field(of=WorkerError, default=None)

    def to_json(self) -> dict:
        if self.error is not None:
            return {"error": self.error.to_json()}
        out = super().to_json()
        del out["error"]
        if self.csv is None:
            del out["csv"]
        return out
