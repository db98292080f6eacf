"""Job "capture": run the file's harness / tests / __main__ block and record every launch.

Job fields: path (the kernel file), harness ("file.py::func", optional), kernel (only this
kernel's launches, optional), max_cases (run only the first N entries, optional).
Result: {"mode", "source", "cases": [...], "launches": [descriptor...], "total_launches", "errors"}
(descriptor format: capture.py's docstring and README.md).
"""

from __future__ import annotations


def run_capture(job: dict, detect_writes: bool = True):
    import capture
    import harness

    path = job["path"]
    cap = capture.Capture(file=path, detect_writes=detect_writes)
    sync = None
    if not capture.interpreter_mode():
        import torch

        sync = torch.cuda.synchronize
    with cap:
        entries, source = harness.entry_points(path, job.get("harness"))
        cases = harness.run_entries(entries, cap, stop_after=job.get("max_cases"), synchronize=sync)
    kernel = job.get("kernel")
    if kernel:
        for key in list(cap.order):
            if cap.records[key].descriptor["kernel"] != kernel:
                cap.order.remove(key)
                del cap.records[key]
    summary = {"mode": "interpreter" if capture.interpreter_mode() else "gpu", "source": source,
               "cases": cases, "total_launches": cap.total_launches, "errors": cap.errors}
    return cap, summary


def handle(job: dict) -> dict:
    cap, summary = run_capture(job)
    summary["launches"] = cap.descriptors()
    return summary
