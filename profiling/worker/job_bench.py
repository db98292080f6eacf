"""Job "bench" (a messages.LaunchJob): capture the file's launches (its harness, or its launch
records replayed on fresh data: record_cases.py), replay the chosen ones and time them on the GPU.
Result: a messages.BenchResult.

Timing (GPU): one warm-up launch (compiles), a 10-launch estimate, then
- >= 20 us: `timing.bench` (do_bench's shape, warmup 25 ms, rep 100 ms), whose flush before each
  launch leaves L2 clean and holding nothing of the inputs (timing.py says why not do_bench's own);
- <  20 us: `do_bench_cudagraph` (launch gaps would dominate) over a rotation of input sets
  whose total size exceeds twice the L2, so consecutive launches do not hit in cache.
Without a GPU the chosen launches are replayed once in Triton's interpreter and every timing
field is null: an interpreter time says nothing about the GPU.
"""

from __future__ import annotations

import inspect
import math

CUDAGRAPH_BELOW_MS = 0.020
MAX_ROTATION_SETS = 64
ROTATION_BUDGET_BYTES = 2 << 30


def select(cap, source: str, max_launches: int) -> list:
    """The launches to time: a harness's performance case per kernel; otherwise (tests, __main__,
    launch records) each kernel's `max_launches` largest."""
    records = [cap.records[k] for k in cap.order]
    by_kernel: dict[str, list] = {}
    for r in records:
        by_kernel.setdefault(r.descriptor["kernel"], []).append(r)
    chosen = []
    for name, recs in by_kernel.items():
        if source in ("tritonlens_cases", "harness"):
            perf = [r for r in recs if r.descriptor["case"] == 0]
            chosen.extend(perf or recs[:1])  # the first case is the performance shape
        else:
            recs = sorted(recs, key=lambda r: -(r.descriptor["bytes"]["read"] + r.descriptor["bytes"]["written"]))
            chosen.extend(recs[:max_launches])
    return chosen


def _uses_dot(record) -> bool:
    try:
        src = inspect.getsource(record.kernel.fn)
    except (OSError, TypeError, AttributeError):
        return False
    return ".dot(" in src or ".dot_scaled(" in src


def compile_stats(kernel) -> dict:
    stats = {"registers": None, "spills": None, "shared_bytes": None}
    if kernel is None or not hasattr(kernel, "metadata"):
        return stats
    if getattr(kernel, "n_regs", None) is None and hasattr(kernel, "_init_handles"):
        try:
            kernel._init_handles()
        except Exception:
            pass
    stats["registers"] = getattr(kernel, "n_regs", None)
    stats["spills"] = getattr(kernel, "n_spills", None)
    stats["shared_bytes"] = getattr(kernel.metadata, "shared", None)
    stats["num_warps"] = getattr(kernel.metadata, "num_warps", None)
    stats["num_stages"] = getattr(kernel.metadata, "num_stages", None)
    return stats


def _prepare(record, seed):
    import replay

    values = replay.build_args(record, seed=seed)
    written = set(record.descriptor["written"])
    for name in written:  # clone: the pristine inputs stay for the next replay
        if hasattr(values[name], "clone"):
            values[name] = values[name].clone()
    return replay.launch_fn(record, values)


def bench_gpu(record, l2_bytes: int | None, compare_bare: bool) -> dict:
    import torch
    from triton.testing import do_bench, do_bench_cudagraph

    import timing

    launch = _prepare(record, seed=0)
    kernel = launch()
    torch.cuda.synchronize()
    out = compile_stats(kernel)

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    launch()
    start.record()
    for _ in range(10):
        launch()
    end.record()
    torch.cuda.synchronize()
    estimate = start.elapsed_time(end) / 10

    nbytes = record.descriptor["bytes"]["read"] + record.descriptor["bytes"]["written"]
    if estimate < CUDAGRAPH_BELOW_MS:
        target = 2 * (l2_bytes or 50 << 20)
        sets = max(1, min(MAX_ROTATION_SETS, math.ceil(target / max(nbytes, 1)),
                          ROTATION_BUDGET_BYTES // max(nbytes, 1)))
        fns = [launch] + [_prepare(record, seed=i) for i in range(1, sets)]
        for fn in fns:
            fn()
        counter = [0]

        def rotating():
            fns[counter[0] % len(fns)]()
            counter[0] += 1

        time_ms = do_bench_cudagraph(rotating, rep=100, return_mode="median")
        method = f"do_bench_cudagraph median, {len(fns)} rotated input sets"
    else:
        time_ms = timing.bench(launch, warmup_ms=25, rep_ms=100)
        method = timing.METHOD
    out.update({"time_ms": float(time_ms), "timing_method": method, "estimate_ms": round(estimate, 5)})
    if compare_bare:
        out["bare_ms"] = float(do_bench(launch, return_mode="median"))
    return out


def handle(job) -> dict:
    import capture
    import ceilings as ceilings_mod
    import cuda_on_cpu
    import job_info
    import replay
    import roofline
    from job_capture import run_capture

    cap, summary = run_capture(job)
    gpu = not capture.interpreter_mode()
    device = job_info.device_info()
    ceil = ceilings_mod.get(device["name"], refresh=bool(job.refresh_ceilings)) if gpu else None
    launches = []
    skip = set(job.skip or ())
    for record in select(cap, summary["source"], int(job.max_launches or 3)):
        d = record.descriptor
        entry = {k: d[k] for k in ("kernel", "key", "source_hash", "case", "count", "autotuned", "grid",
                                   "num_warps", "num_stages", "constexprs", "bytes")}
        if d.get("tuning"):  # an autotuned kernel the interpreter ran with one config, untimed
            entry["tuning"] = d["tuning"]
        if f"{d['source_hash']}:{d['key']}" in skip:
            entry["cached"] = True
            launches.append(entry)
            continue
        entry["signature"] = ", ".join(
            f"{a['name']}={a['dtype']}{a['shape']}" if a["kind"] == "tensor" else f"{a['name']}={a.get('value')}"
            for a in d["args"] if a["kind"] in ("tensor", "scalar"))
        entry.update({"time_ms": None, "gbps": None, "tflops": None, "pct_of_peak": None, "bound": None,
                      "registers": None, "spills": None, "shared_bytes": None, "ncu": None})
        flops = roofline.matmul_flops(d) if _uses_dot(record) else None
        entry["flops"] = flops
        entry["flops_source"] = ("harness_shapes" if flops is not None
                                 else "unknown" if _uses_dot(record) else "none: no tl.dot")
        try:
            if gpu:
                stats = bench_gpu(record, device.get("l2_bytes"), bool(job.compare_bare))
                entry.update(stats)
                t = entry["time_ms"]
                nbytes = d["bytes"]["read"] + d["bytes"]["written"]
                entry["gbps"] = round(nbytes / (t * 1e-3) / 1e9, 2) if t else None
                partial = roofline.partial_traffic(nbytes, t, ceil)
                if partial:  # the sizes are not the traffic: no bandwidth, no roofline point
                    entry.update(gbps=None, bytes=None, traffic=partial)
                entry["tflops"] = round(flops / (t * 1e-3) / 1e12, 2) if t and flops else None
                programs = d["grid"][0] * d["grid"][1] * d["grid"][2]
                entry.update(roofline.classify(t, entry["gbps"], entry["tflops"], ceil, programs,
                                               device.get("sm_count"), roofline.dot_ceiling_key(d)))
            else:  # as the launch was captured: "cuda" the CPU, the interpreter's gaps shimmed
                with cuda_on_cpu.mapped(claim_gpu=False):
                    replay.replay(record, seed=1)
                entry["replayed"] = True
        except Exception as exc:
            if "CUDA error" in str(exc) or type(exc).__name__ == "AcceleratorError":
                raise
            entry["error"] = f"{type(exc).__name__}: {exc}"
        launches.append(entry)
    summary.update({"device": device, "ceilings": ceil, "launches": launches,
                    "descriptors": cap.descriptors()})
    return summary
