"""Job "run": execute the file's harness cases (or tests / __main__ block) and report each one.

Same fields as "capture"; no write detection, no descriptors: the cheap "does it run" check.
Result: {"mode", "source", "cases": [{"index", "label", "ok", "error"?, "seconds"}], "kernels": {name: launches}}
"""

from __future__ import annotations

from job_capture import run_capture


def handle(job: dict) -> dict:
    cap, summary = run_capture(job, detect_writes=False)
    kernels: dict[str, int] = {}
    for desc in cap.descriptors():
        kernels[desc["kernel"]] = kernels.get(desc["kernel"], 0) + desc["count"]
    summary["kernels"] = kernels
    return summary
