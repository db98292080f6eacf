"""Job "capture" (a messages.LaunchJob): run the file's harness / tests / __main__ block and
record every launch (the "run" and "bench" jobs run it too). Result: {"mode", "source", "cases",
"total_launches", "errors", "launches": [descriptor, ...]} (descriptors: capture.py)."""

from __future__ import annotations


def run_capture(job, detect_writes: bool = True):
    """`job`: a messages.LaunchJob. Without a GPU, device "cuda" means the CPU while the harness
    runs (cuda_on_cpu.py), as in a project capture: a harness written for a GPU runs as it is;
    torch.cuda.is_available() stays False, so one that sizes its cases by it keeps its CPU sizes."""
    import capture
    import cuda_on_cpu
    import harness

    path = job.path
    cap = capture.Capture(file=path, detect_writes=detect_writes)
    sync = None
    if not capture.interpreter_mode():
        import torch

        sync = torch.cuda.synchronize
    with cuda_on_cpu.mapped(claim_gpu=False), cap:
        entries, source = harness.entry_points(path, job.harness, records=job.records, sys_path=job.sys_path)
        cases = harness.run_entries(entries, cap, stop_after=job.max_cases, synchronize=sync)
    kernel = job.kernel
    if kernel:
        for key in list(cap.order):
            if cap.records[key].descriptor["kernel"] != kernel:
                cap.order.remove(key)
                del cap.records[key]
    summary = {"mode": "interpreter" if capture.interpreter_mode() else "gpu", "source": source,
               "cases": cases, "total_launches": cap.total_launches, "errors": cap.errors}
    return cap, summary


def handle(job) -> dict:
    cap, summary = run_capture(job)
    summary["launches"] = cap.descriptors()
    return summary
