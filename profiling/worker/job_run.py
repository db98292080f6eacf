"""Job "run" (a messages.LaunchJob): execute the file's harness cases and report each one; no
write detection, no descriptors: the cheap "does it run" check. Result: capture's summary with
"kernels": {name: launches} instead of the descriptors."""

from __future__ import annotations

from job_capture import run_capture


def handle(job) -> dict:
    cap, summary = run_capture(job, detect_writes=False)
    kernels: dict[str, int] = {}
    for desc in cap.descriptors():
        kernels[desc["kernel"]] = kernels.get(desc["kernel"], 0) + desc["count"]
    summary["kernels"] = kernels
    return summary
