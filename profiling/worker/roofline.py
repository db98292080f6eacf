"""Achieved throughput, % of roofline and the bound class of one timed launch. Pure Python.

Bound classes and their thresholds:
- "memory" / "compute": the launch reaches >= 60% of the measured copy bandwidth / matmul peak
  (whichever fraction is larger). Tuned Triton kernels reach 85-100% of these ceilings on the
  H100 (h100.md: vector add 3.0 of 2.97 TB/s, matmul 691 of 714 TFLOP/s), while the naive
  configurations there sit at 40-50%; 60% separates "this unit is the limit, cut traffic or
  FLOPs" from "the unit is idle much of the time".
- "latency": under both thresholds AND either the launch is short (< 15 us: a launch costs
  ~3-5 us and a DRAM round trip ~0.6 us, so fixed costs are a large share) or the grid has fewer
  programs than the GPU has SMs (the chip cannot fill, so each program's dependency chain is the
  critical path). More parallelism or fusing with neighbours helps, tuning the inner loop does not.
- "underutilized": under both thresholds with enough work to fill the chip: the configuration
  or the access pattern wastes the machine (block size, num_warps, uncoalesced or re-read data).
"""

from __future__ import annotations

BOUND_FRACTION = 0.60
LATENCY_MS = 0.015
# measured bandwidth scatters a few percent about the measured copy ceiling; far over it, the bytes
# counted are not what the launch moved
OVER_CEILING = 1.10


def partial_traffic(nbytes: int, time_ms: float | None, ceilings: dict | None) -> str | None:
    """Why a launch's tensor sizes are not its traffic, or None when they may be. Traffic is counted
    as each tensor read or written whole, once; a kernel that touches part of a large tensor (a
    gather, a scatter into a table, a few rows of it) then 'moves' its tensors faster than the GPU's
    measured copy ceiling allows. Its bandwidth is not known from sizes, and a % of roofline made
    from them would be made up."""
    copy = (ceilings or {}).get("copy_gbps")
    if not copy or not time_ms or not nbytes:
        return None
    gbps = nbytes / (time_ms * 1e-3) / 1e9
    if gbps <= OVER_CEILING * copy:
        return None
    return (f"its tensors ({nbytes / 1e6:.1f} MB) would move at {gbps:.0f} GB/s, {gbps / copy:.1f}x this "
            f"GPU's measured copy ceiling ({copy:.0f} GB/s): it touches only part of them, so its bandwidth "
            "is not known from their sizes")


def matmul_flops(descriptor: dict) -> int | None:
    """2*M*N*K from the launch's tensors: A (.., M, K) and B (.., K, N) read, C (.., M, N) written."""
    tensors = [a for a in descriptor["args"] if a["kind"] == "tensor"]
    reads = [t for t in tensors if not t["written"] and len(t["shape"]) in (2, 3)]
    writes = [t for t in tensors if t["written"] and len(t["shape"]) in (2, 3)]
    for a in reads:
        for b in reads:
            if a is b or len(a["shape"]) != len(b["shape"]):
                continue
            *batch_a, m, k = a["shape"]
            *batch_b, k2, n = b["shape"]
            if k != k2 or batch_a != batch_b:
                continue
            for c in writes:
                if list(c["shape"]) == [*batch_a, m, n]:
                    batch = 1
                    for s in batch_a:
                        batch *= s
                    return 2 * batch * m * n * k
    return None


def dot_ceiling_key(descriptor: dict) -> str:
    dtypes = {a["dtype"] for a in descriptor["args"] if a["kind"] == "tensor" and not a["written"]}
    if "float32" in dtypes and not dtypes & {"float16", "bfloat16"}:
        return "matmul_tf32_tflops"
    return "matmul_tflops"


def classify(time_ms: float | None, gbps: float | None, tflops: float | None, ceilings: dict,
             programs: int, sm_count: int | None, ceiling_key: str = "matmul_tflops") -> dict:
    if time_ms is None:
        return {"pct_of_peak": None, "peak": None, "bound": None, "mem_fraction": None, "compute_fraction": None}
    mem = gbps / ceilings["copy_gbps"] if gbps is not None and ceilings.get("copy_gbps") else None
    peak = ceilings.get(ceiling_key) or ceilings.get("matmul_tflops")
    comp = tflops / peak if tflops is not None and peak else None
    fractions = {"memory": mem or 0.0, "compute": comp or 0.0}
    top = max(fractions, key=fractions.get)
    known = mem is not None or comp is not None  # neither known: no % of anything
    if fractions[top] >= BOUND_FRACTION:
        bound = top
    elif time_ms < LATENCY_MS or (sm_count and programs < sm_count):
        bound = "latency"
    else:
        bound = "underutilized"
    peak_name = "copy_gbps" if top == "memory" else ceiling_key
    return {"pct_of_peak": round(100 * fractions[top], 1) if known else None, "peak": peak_name if known else None,
            "bound": bound,
            "mem_fraction": None if mem is None else round(mem, 4),
            "compute_fraction": None if comp is None else round(comp, 4)}
