"""Idle workers exit and come back: real worker processes with a short idle limit."""

import os
import time

from tritonlens.profiling.client import IDLE_EXIT_S, WorkerClient
from tritonlens.profiling.worker.supervisor import Supervisor

NAP = '''
import os, time

def handle(job):
    time.sleep(job.more.get("sleep", 0))
    return {"pid": os.getpid()}
'''


def make(worker_copy, idle_exit):
    (worker_copy / "job_nap.py").write_text(NAP)
    return Supervisor(worker_dir=str(worker_copy), idle_exit=idle_exit)


def wait_for(predicate, limit: float = 60.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_idle_worker_exits_and_the_next_job_starts_another(worker_copy):
    with make(worker_copy, idle_exit=0.5) as sup:
        first = sup.run({"kind": "nap"})
        assert first.ok, first
        pid = first.result["pid"]
        assert wait_for(lambda: sup.idle_exits == 1), "the idle worker did not exit"
        assert not sup.alive() and gone(pid)
        second = sup.run({"kind": "nap"})
        assert second.ok, second
        assert second.result["pid"] != pid
        assert sup.spawned == 2


def test_a_job_longer_than_the_idle_limit_is_not_cut(worker_copy):
    with make(worker_copy, idle_exit=0.3) as sup:
        assert sup.run({"kind": "nap"}).ok
        long = sup.run({"kind": "nap", "sleep": 1.5})
        assert long.ok, long
        # the limit counts from the end of the last job, not from the worker's start
        assert sup.spawned == 1 and sup.idle_exits == 0


def test_without_a_limit_the_worker_stays(worker_copy):
    with make(worker_copy, idle_exit=None) as sup:
        pid = sup.run({"kind": "nap"}).result["pid"]
        time.sleep(1.0)
        assert sup.alive() and not gone(pid)
        assert sup.run({"kind": "nap"}).result["pid"] == pid


def test_local_workers_take_their_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv("TRITONLENS_WORKER_IDLE_S", "7.5")
    assert WorkerClient().idle_exit == 7.5
    monkeypatch.setenv("TRITONLENS_WORKER_IDLE_S", "not a number")
    assert WorkerClient().idle_exit == IDLE_EXIT_S
    assert WorkerClient(idle_exit=3).idle_exit == 3
