"""A worker whose client dies (killed by a timeout) exits on its own instead of compiling on alone."""

import os
import signal
import subprocess
import sys
import time

from tritonlens.profiling.client import WORKER_DIR

CLIENT = """
import json, subprocess, sys, time
worker = subprocess.Popen([sys.executable, "-u", sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          start_new_session=True, text=True)
worker.stdout.readline()  # its hello
worker.stdin.write(json.dumps({"kind": "capture", "id": "1", "path": sys.argv[2]}) + "\\n")
worker.stdin.flush()
print(worker.pid, flush=True)
time.sleep(600)
"""
# A harness that keeps the worker busy in a job: an idle worker already stops when its stdin closes.
SLOW = """
import time

def tritonlens_cases():
    time.sleep(120)
    return []
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie awaiting its reaper has exited too
        return fh.read().split()[2] != "Z"


def test_an_orphaned_worker_busy_in_a_job_exits(tmp_path):
    slow = tmp_path / "slow_harness.py"
    slow.write_text(SLOW)
    client = subprocess.Popen([sys.executable, "-c", CLIENT, os.path.join(WORKER_DIR, "worker_main.py"), str(slow)],
                              stdout=subprocess.PIPE, text=True)
    pid = int(client.stdout.readline())
    time.sleep(3)
    assert _alive(pid)
    client.send_signal(signal.SIGKILL)
    client.wait()
    deadline = time.monotonic() + 15
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(pid)
