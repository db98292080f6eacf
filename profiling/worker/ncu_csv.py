"""Parse Nsight Compute's CSV (`ncu --import R.ncu-rep --csv --page details`). Standard library only.

Rows are keyed by column name, so the extra leading columns ncu adds ("ID", "Process ID",
"Host Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC", ...) and their order do
not matter. Needed: "Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value";
rule rows carry "Rule Name", "Rule Type", "Rule Description", "Estimated Speedup".
Values may have thousands separators ("1,024"); units vary between versions ("us" / "usecond").
"""

from __future__ import annotations

import csv
import io
import re

try:  # imported as tritonlens.profiling.worker.ncu_csv
    from .ncu_result import NcuOccupancy, NcuResult, NcuRule, NcuSpeedOfLight, NcuStall
except ImportError:  # a plain file in the worker folder
    from ncu_result import NcuOccupancy, NcuResult, NcuRule, NcuSpeedOfLight, NcuStall

_TIME_SCALE_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3,
                  "s": 1e6, "second": 1e6}
_SOL = {
    "DRAM Throughput": "dram_pct",
    "Memory Throughput": "memory_pct",
    "Compute (SM) Throughput": "sm_pct",
    "L1/TEX Cache Throughput": "l1_pct",
    "L2 Cache Throughput": "l2_pct",
}
_LIMITS = {
    "Block Limit Registers": "registers",
    "Block Limit Shared Mem": "shared memory",
    "Block Limit Warps": "warps",
    "Block Limit SM": "blocks per SM",
    "Block Limit Barriers": "barriers",
}
_STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")
_TENSOR = re.compile(r"^sm__(?:pipe_tensor\w*|inst_executed_pipe_tensor\w*)\.avg\.pct_of_peak_sustained_active$")

STALL_METRICS = [f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in (
    "long_scoreboard", "short_scoreboard", "barrier", "mio_throttle", "lg_throttle", "math_pipe_throttle",
    "wait", "not_selected", "no_instruction", "dispatch_stall", "membar", "branch_resolving",
    "tex_throttle", "drain", "imc_miss", "sleeping", "misc", "selected")]
TENSOR_METRICS = ["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                  "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"]
SECTIONS = ["SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats"]


class NcuCsvError(ValueError):
    pass


def number(text: str | None) -> float | None:
    if text is None:
        return None
    text = text.strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan", "-"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _rows(text: str) -> list[dict]:
    # ncu may print "==PROF==" / "==WARNING==" lines before the header: start at the header.
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith('"') and "Metric Name" in line and "Kernel Name" in line:
            return list(csv.DictReader(io.StringIO("\n".join(lines[i:]))))
    raise NcuCsvError("no ncu CSV header (\"Kernel Name\" ... \"Metric Name\") in the output")


def parse(text: str) -> list[NcuResult]:
    """One summary per profiled kernel launch (in order of appearance)."""
    launches: dict[tuple, dict] = {}
    for row in _rows(text):
        key = (row.get("ID", ""), row.get("Kernel Name", ""))
        item = launches.get(key)
        if item is None:
            item = launches[key] = {"kernel": row.get("Kernel Name"), "metrics": {}, "rules": []}
            for col, name in (("Block Size", "block"), ("Grid Size", "grid"), ("Device", "device"), ("CC", "cc")):
                if row.get(col):
                    item[name] = row[col]
        metric = (row.get("Metric Name") or "").strip()
        if metric:
            item["metrics"][(row.get("Section Name") or "", metric)] = (
                row.get("Metric Unit") or "", row.get("Metric Value") or "")
        rule = (row.get("Rule Name") or "").strip()
        if rule:
            item["rules"].append(NcuRule(rule, row.get("Rule Type") or "",
                                         (row.get("Rule Description") or "").strip(),
                                         number(row.get("Estimated Speedup"))))
    return [_summarise(item) for item in launches.values()]


def _summarise(item: dict) -> NcuResult:
    by_name: dict[str, tuple[str, str]] = {}
    for (_section, name), value in item["metrics"].items():
        by_name.setdefault(name, value)

    def val(name):
        return number(by_name[name][1]) if name in by_name else None

    duration, duration_us = by_name.get("Duration"), None
    if duration:
        scale = _TIME_SCALE_US.get(duration[0].strip().lower())
        v = number(duration[1])
        duration_us = None if v is None or scale is None else round(v * scale, 3)
    limits = {label: val(name) for name, label in _LIMITS.items() if val(name) is not None}
    # every limit that caps blocks per SM at the minimum (ties are common: registers and warps)
    low = min(limits.values()) if limits else None
    limiter = " / ".join(label for label, v in limits.items() if v == low) if limits else None

    def in_bytes(name):
        # each metric has its own unit ("byte/block", "Kbyte/block": ncu's K is 1000)
        if name not in by_name or number(by_name[name][1]) is None:
            return None
        unit = by_name[name][0].split("/")[0].strip().lower()
        return number(by_name[name][1]) * {"byte": 1, "kbyte": 1e3, "mbyte": 1e6, "kib": 1024}.get(unit, 1)

    static, dynamic = in_bytes("Static Shared Memory Per Block"), in_bytes("Dynamic Shared Memory Per Block")
    stalls = []
    tensor = None
    for name, (_unit, text) in by_name.items():
        m = _STALL.match(name)
        if m and number(text) is not None:
            stalls.append(NcuStall(m.group(1), number(text)))
        elif _TENSOR.match(name) and number(text) is not None:
            tensor = max(tensor or 0.0, number(text))
    stalls.sort(key=lambda s: -s.cycles_per_issue)
    return NcuResult(
        kernel=item["kernel"], block=item.get("block"), grid=item.get("grid"), duration_us=duration_us,
        sol=NcuSpeedOfLight(**{key: val(name) for name, key in _SOL.items()}),
        occupancy=NcuOccupancy(val("Achieved Occupancy"), val("Theoretical Occupancy"), limiter, limits),
        registers_per_thread=val("Registers Per Thread"),
        shared_bytes_per_block=None if static is None and dynamic is None else int(round((static or 0) + (dynamic or 0))),
        waves_per_sm=val("Waves Per SM"),
        stalls=[s for s in stalls if s.reason != "selected"][:5],
        warp_cycles_per_issued=val("Warp Cycles Per Issued Instruction"),
        tensor_pipe_pct=tensor,
        rules=[r for r in item["rules"] if r.type in ("OPT", "WRN", "ERR")][:8])
