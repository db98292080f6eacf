"""Job "ncu" (a messages.LaunchJob, answered with an ncu_result.NcuResult): profile one captured launch of a kernel with Nsight Compute
and parse its CSV. Without a `key` it takes the kernel's first launch of the performance case.

A replay script re-runs the capture in a child process under ncu with profiling off from the
start (`--profile-from-start off`), warms the launch up (compiles), then brackets one replay with
cudaProfilerStart/Stop, so exactly that launch is measured, whatever the harness launched before.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

SCRIPT = '''
import json, os, sys
sys.path.insert(0, {here!r})
import sandbox
sandbox.install(os.getcwd())
import torch
import job_capture, job_bench, messages
job = messages.LaunchJob.from_json(json.loads({job!r}))
cap, summary = job_capture.run_capture(job)
records = [cap.records[k] for k in cap.order]
record = cap.records.get(job.key or "")
if record is None:
    perf = [r for r in records if r.descriptor["case"] == 0] or records
    if not perf:
        sys.exit("tritonlens-ncu: the harness made no launch of kernel " + job.kernel)
    record = perf[0]
launch = job_bench._prepare(record, seed=0)
kernel = launch()
torch.cuda.synchronize()
dump = {dump!r}
if dump and kernel is not None:  # the compiled kernel ncu will sample: its line tables
    with open(dump + ".cubin", "wb") as fh:
        fh.write(kernel.asm["cubin"])
    for stage in ("ptx", "ttgir"):
        with open(dump + "." + stage, "w", encoding="utf-8") as fh:
            fh.write(kernel.asm.get(stage, ""))
torch.cuda.profiler.start()
launch()
torch.cuda.synchronize()
torch.cuda.profiler.stop()
print("tritonlens-ncu: profiled", record.descriptor["key"], file=sys.stderr)
'''


def replay_script(job, dump: str | None = None) -> str:
    """Write the replay script for `job`'s launch (see the module docstring); with `dump`, it also
    writes the launched kernel's cubin, PTX and TTGIR to `dump`.cubin / .ptx / .ttgir. Returns its path."""
    import messages

    sub_job = messages.LaunchJob("capture", path=job.path, harness=job.harness, kernel=job.kernel, key=job.key,
                                 max_cases=job.max_cases, records=job.records, sys_path=job.sys_path).to_json()
    script = os.path.abspath(f"tritonlens_{job.kind}_replay.py")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write(SCRIPT.format(here=HERE, job=json.dumps(sub_job), dump=dump))
    return script


def ncu_binary(job) -> str:
    ncu = job.ncu or shutil.which("ncu")
    if not ncu:
        raise RuntimeError("ncu (Nsight Compute) is not on PATH of the worker's machine")
    if not job.kernel:
        raise ValueError(f"job {job.kind} needs the kernel's name")
    return ncu


def _run(cmd, timeout):
    import sandbox

    with sandbox.own_tool():
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, check=False)
    return proc.returncode, proc.stdout.decode("utf-8", "replace")


def handle(job) -> dict:
    import ncu_csv

    ncu = ncu_binary(job)
    kernel = job.kernel
    script = replay_script(job)
    report = os.path.abspath(f"tritonlens_ncu_{os.getpid()}")
    timeout = float(job.ncu_timeout or 300)
    base = [ncu, "--profile-from-start", "off", "--clock-control", "none", "-k", f"regex:{kernel}", "-c", "1"]
    for section in ncu_csv.SECTIONS:
        base += ["--section", section]
    tail = ["--export", report, "--force-overwrite", sys.executable, script]
    extra = ["--metrics", ",".join(ncu_csv.STALL_METRICS + ncu_csv.TENSOR_METRICS)]
    code, log = _run(base + extra + tail, timeout)
    used_extra = True
    if code != 0 or not os.path.exists(report + ".ncu-rep"):
        # an ncu that does not know one of the raw metrics refuses the run: retry with sections only
        code, log2 = _run(base + tail, timeout)
        log += "\n--- retry without raw stall/tensor metrics ---\n" + log2
        used_extra = False
    if code != 0 or not os.path.exists(report + ".ncu-rep"):
        raise RuntimeError(f"ncu failed (exit {code}): {log[-3000:]}")
    code, csv_text = _run([ncu, "--import", report + ".ncu-rep", "--csv", "--page", "details"], timeout)
    if code != 0:
        raise RuntimeError(f"ncu --import failed (exit {code}): {csv_text[-2000:]}")
    parsed = ncu_csv.parse(csv_text)
    if not parsed:
        raise RuntimeError(f"ncu profiled no launch of {kernel!r}; log: {log[-2000:]}")
    result = parsed[0]
    result.raw_metrics = used_extra
    if job.keep_csv:
        result.csv = csv_text
    try:
        os.remove(report + ".ncu-rep")
    except OSError:
        pass
    return result.to_json()
