"""Nsight Compute CSV parsing on a hand-written fixture in ncu's documented details-page layout."""

import os
import sys

import pytest
from tritonlens.profiling.client import WORKER_DIR

sys.path.insert(0, str(WORKER_DIR))
import ncu_csv

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "ncu_details_handwritten.csv")


def test_parse_details_page():
    add, mm = ncu_csv.parse(open(FIXTURE).read())
    assert add.kernel == "add_kernel" and add.grid == "(65536, 1, 1)"
    assert add.duration_us == 62.14
    assert add.sol.dram_pct == 89.43 and add.sol.sm_pct == 18.52
    occ = add.occupancy
    assert occ.achieved_pct == 82.61 and occ.theoretical_pct == 100
    # registers and warps both allow 16 blocks: both are named
    assert occ.limiter == "registers / warps" and occ.block_limits["shared memory"] == 32
    assert add.registers_per_thread == 26 and add.shared_bytes_per_block == 0
    assert [s.reason for s in add.stalls] == ["long_scoreboard", "lg_throttle", "wait", "no_instruction"]
    assert add.tensor_pipe_pct == 0
    assert {r.name for r in add.rules} == {"SOLBottleneck", "AchievedOccupancy"}
    assert [r.speedup_pct for r in add.rules if r.name == "AchievedOccupancy"] == [17.39]

    assert mm.duration_us == 1210.0  # msecond -> us
    assert mm.occupancy.limiter == "registers"
    assert mm.shared_bytes_per_block == 98300
    assert mm.stalls[0].reason == "math_pipe_throttle"
    assert mm.tensor_pipe_pct == 64.5


def test_parse_rejects_non_csv():
    with pytest.raises(ncu_csv.NcuCsvError):
        ncu_csv.parse("==ERROR== the application returned an error code (1)\n")
    assert ncu_csv.number("1,024") == 1024.0 and ncu_csv.number("n/a") is None


def _recorded(name):
    return open(os.path.join(os.path.dirname(__file__), "data", f"ncu_details_h100_recorded_{name}.csv")).read()


def test_parse_csv_recorded_on_the_h100():
    """Real `ncu --import R --csv --page details` output (bench/profile_gpu.py --ncu, H100, ncu 2025.3)."""
    (add,) = ncu_csv.parse(_recorded("add_kernel"))
    assert add.kernel == "add_kernel" and add.grid == "(262144, 1, 1)"
    assert 150 < add.duration_us < 170
    assert 30 < add.sol.dram_pct < 40  # BLOCK_SIZE=64: far from the copy ceiling
    assert add.occupancy.limiter == "warps" and 40 < add.occupancy.achieved_pct < 50
    assert add.registers_per_thread == 16  # ncu rounds up; the cubin says 14
    assert add.stalls[0].reason == "long_scoreboard"
    (mm,) = ncu_csv.parse(_recorded("matmul_kernel"))
    assert mm.occupancy.limiter == "registers"
    assert mm.tensor_pipe_pct == 13.65  # the hmma pipe; the gmma metric reads n/a
    assert mm.duration_us > 1000 and mm.shared_bytes_per_block == 4100  # "4.10 Kbyte": ncu rounds 4096
    assert [s.reason for s in mm.stalls[:2]] == ["long_scoreboard", "short_scoreboard"]


def test_result_round_trips_through_the_profile_report_json():
    """What the ncu job sends is what the client reads back; an error-only result stays {"error": ...}
    and a malformed one is refused naming its field."""
    from tritonlens.profiling.worker.messages import LaunchProfile, MessageError, NcuResult, WorkerError

    add, _mm = ncu_csv.parse(open(FIXTURE).read())
    wire = add.to_json()
    assert "csv" not in wire and "error" not in wire and wire["sol"]["dram_pct"] == 89.43
    back = NcuResult.from_json(wire)
    assert back.occupancy.limiter == "registers / warps" and back.stalls[0].reason == "long_scoreboard"
    assert LaunchProfile.from_json({"ncu": wire}).ncu == back
    failed = NcuResult(error=WorkerError("exception", "ncu is not on PATH"))
    assert failed.to_json() == {"error": {"type": "exception", "message": "ncu is not on PATH"}}
    assert LaunchProfile.from_json({"ncu": failed.to_json()}).ncu.error.message == "ncu is not on PATH"
    with pytest.raises(MessageError, match=r"NcuResult\.stalls\[0\]\.cycles_per_issue"):
        NcuResult.from_json({**wire, "stalls": [{"reason": "wait", "cycles_per_issue": "many"}]})
