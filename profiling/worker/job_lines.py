"""Job "lines" (a messages.LaunchJob, answered with a line_profile.SassSamples): sample where one
captured launch of a kernel stalls, per SASS instruction, with Nsight Compute's source counters.

It replays the launch as the "ncu" job does (job_ncu.py: warmed up, then exactly one launch under
ncu), in its own run after the profile timed the launch, so sampling never touches the timed
figures. The replay also writes the launched kernel's cubin, PTX and TTGIR: `nvdisasm -gi` of the
cubin is the line table the samples are folded through, and the IRs' location lines say where
helpers were inlined (the folding is the client's, profiling/line_fold.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

SECTIONS = ["SourceCounters", "WarpStateStats"]


def _nvdisasm() -> str | None:
    try:  # the one Triton ships matches the ptxas that built the cubin
        import triton

        bundled = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
        if os.path.exists(bundled):
            return bundled
    except ImportError:
        pass
    return shutil.which("nvdisasm")


def _line_table(cubin: str, timeout: float) -> str | None:
    tool = _nvdisasm()
    if not tool or not os.path.exists(cubin):
        return None
    proc = subprocess.run([tool, "-gi", "-c", cubin], capture_output=True, text=True, timeout=timeout,
                          check=False)
    return proc.stdout if proc.returncode == 0 and proc.stdout.strip() else None


def _locations(path: str, prefixes: tuple[str, ...]) -> str | None:
    """The location lines of an IR file (PTX `.loc`/`.file`, TTGIR `#loc`), each once: all the fold reads."""
    if not os.path.exists(path):
        return None
    seen: dict[str, None] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            text = line.strip()
            if text.startswith(prefixes):
                seen.setdefault(text.split("//")[0].strip() if text.startswith(".") else text, None)
    return "\n".join(seen) or None


def _tensor_pipe_pct(ncu: str, report: str, timeout: float) -> float | None:
    import job_ncu
    import ncu_csv

    code, text = job_ncu._run([ncu, "--import", report, "--csv", "--page", "details"], timeout)
    if code != 0:
        return None
    try:
        parsed = ncu_csv.parse(text)
    except (ValueError, KeyError):  # NcuCsvError is a ValueError: a page without the figure
        return None
    return parsed[0].tensor_pipe_pct if parsed else None


def handle(job) -> dict:
    import job_ncu
    import ncu_csv
    import ncu_source

    ncu = job_ncu.ncu_binary(job)
    dump = os.path.abspath(f"tritonlens_lines_{os.getpid()}")
    script = job_ncu.replay_script(job, dump=dump)
    report = dump + "_report"
    timeout = float(job.ncu_timeout or 300)
    cmd = [ncu, "--profile-from-start", "off", "--clock-control", "none", "-k", f"regex:^{job.kernel}$", "-c", "1",
           "--import-source", "no", "--export", report, "--force-overwrite"]
    for section in SECTIONS:
        cmd += ["--section", section]
    started = time.monotonic()
    # the tensor cores' use rides along (a matmul stalled at its tl.dot reads differently with it)
    metrics = ["--metrics", ",".join(ncu_csv.TENSOR_METRICS)]
    code, log = job_ncu._run(cmd + metrics + [sys.executable, script], timeout)
    if code != 0 or not os.path.exists(report + ".ncu-rep"):
        # an ncu that does not know a raw metric refuses the whole run: sample without it
        code, retry = job_ncu._run(cmd + [sys.executable, script], timeout)
        log += "\n--- retry without the tensor-pipe metrics ---\n" + retry
    if code != 0 or not os.path.exists(report + ".ncu-rep"):
        raise RuntimeError(f"ncu failed (exit {code}): {log[-3000:]}")
    views = {}
    for view in ("sass", "cuda,sass"):
        code, text = job_ncu._run([ncu, "--import", report + ".ncu-rep", "--csv", "--page", "source",
                                   "--print-source", view], timeout)
        if code != 0:
            raise RuntimeError(f"ncu --import --page source failed (exit {code}): {text[-2000:]}")
        views[view] = text
    result = ncu_source.parse(views["sass"], views["cuda,sass"])
    if not result.instructions:
        raise RuntimeError(f"ncu sampled no instruction of {job.kernel!r}; log: {log[-2000:]}")
    result.kernel = result.kernel or job.kernel
    result.key = job.key
    result.line_table = _line_table(dump + ".cubin", timeout)
    result.ptx_locs = _locations(dump + ".ptx", (".file", ".loc"))
    result.ir_locs = _locations(dump + ".ttgir", ("#loc",))
    result.cost_s = round(time.monotonic() - started, 2)
    result.tensor_pipe_pct = _tensor_pipe_pct(ncu, report + ".ncu-rep", timeout)
    for leftover in (report + ".ncu-rep", dump + ".cubin", dump + ".ptx", dump + ".ttgir", script):
        try:
            os.remove(leftover)
        except OSError:
            pass
    return result.to_json()
