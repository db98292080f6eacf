"""The worker protocol's message types: malformed messages fail with a short message naming the
field, through a real worker too; well-formed ones read back to the same JSON."""

import json
import os
import subprocess
import sys

import pytest
from tritonlens.profiling.client import WORKER_DIR, WorkerClient
from tritonlens.profiling.worker.messages import (
    Evidence,
    Hello,
    LaunchJob,
    MessageError,
    Reply,
    VerifyJob,
    job_from_json,
)
from tritonlens.profiling.worker.reports import OptimizeReport, ProfileReport

DATA = os.path.join(os.path.dirname(__file__), "data")


@pytest.mark.parametrize(("cls", "data", "message"), [
    (Reply, {"id": "j1", "ok": "yes"}, "Reply.ok: expected bool, got str"),
    (Reply, {"id": "j1"}, "Reply.ok: missing"),
    (Reply, {"id": "j1", "ok": None}, "Reply.ok: must not be null"),
    (Reply, {"id": "j1", "ok": False, "error": {"message": "x"}}, "Reply.error.type: missing"),
    (Reply, [1, 2], "Reply: expected a JSON object, got list"),
    (ProfileReport, {"file": "f.py", "kernels": [{"name": "k", "line": "12"}]},
     "ProfileReport.kernels[0].line: expected int, got str"),
    (Evidence, {"id": "0", "checks": [{"seed": 0, "case": 1.5}]},
     "Evidence.checks[0].case: expected int or str, got float"),
])
def test_malformed_messages_name_the_field(cls, data, message):
    with pytest.raises(MessageError) as err:
        cls.from_json(data)
    assert str(err.value) == message


def test_jobs_by_kind_and_unknown_fields_kept():
    job = job_from_json({"kind": "bench", "path": "/k.py", "skip": [], "future_option": 3})
    assert isinstance(job, LaunchJob) and job.skip == [] and job.more == {"future_option": 3}
    assert job.to_json() == {"kind": "bench", "path": "/k.py", "skip": [], "future_option": 3}
    verify = job_from_json({"kind": "verify", "original": "x = 1\n", "candidates": [{"id": "0", "source": "y"}]})
    assert isinstance(verify, VerifyJob) and verify.candidates[0].source == "y"
    with pytest.raises(MessageError, match=r"^job\.kind: missing$"):
        job_from_json({"path": "/k.py"})


def test_reports_read_back_to_the_same_json():
    profile = {"file": "/k.py", "backend": "local", "mode": "interpreter", "device": {"name": "cpu"},
               "ceilings": None, "source": "tests", "cases": [{"index": 0, "label": "t", "ok": True, "error": None}],
               "kernels": [{"name": "k", "line": 3, "error": None, "launches": [
                   {"kernel": "k", "key": "ab", "source_hash": "cd", "grid": [4, 1, 1], "num_warps": 4,
                    "num_stages": 3, "constexprs": {"B": 64}, "time_ms": None, "gbps": None, "tflops": None,
                    "pct_of_peak": None, "bound": None, "registers": None, "spills": None, "shared_bytes": None,
                    "ncu": None, "cached": False, "error": None, "signature": "x=float32[8]", "replayed": True}]}],
               "error": None}
    assert ProfileReport.from_json(profile).to_json() == profile
    optimize = {"path": "/k.py", "kernel": "k", "device": "cpu", "mode": "interpreter", "baseline_ms": None,
                "cancelled": False, "candidates": [], "best": None, "refusals": None, "notes": ["n"],
                "time_line": "time: 9.0 s in the worker: original runs 6.0 s, candidate runs 3.0 s",
                "budget_s": 120, "seconds": 9.5}
    assert OptimizeReport.from_json(optimize).to_json() == optimize


def test_a_malformed_job_is_refused_before_it_reaches_the_worker():
    with WorkerClient(timeout=60) as client:
        reply = client.run({"kind": "capture", "path": os.path.join(DATA, "zero_config.py"), "max_cases": "two"})
        assert reply.ok is False and reply.error.type == "bad_job"
        assert reply.error.message == "capture job.max_cases: expected int or null, got str"
        assert client.spawned == 0  # the supervisor refused it: no worker was started for it
        again = client.run({"kind": "capture", "path": os.path.join(DATA, "zero_config.py"), "max_cases": 1})
        assert again.ok and json.dumps(again.to_json())


def test_the_worker_itself_refuses_a_malformed_job_line(tmp_path):
    # What a peer that skips the client's checks sends: the worker answers bad_job and carries on.
    lines = [json.dumps({"id": "j1", "kind": "capture", "path": 3}), json.dumps({"id": "j2", "kind": "info"})]
    proc = subprocess.run([sys.executable, str(WORKER_DIR / "worker_main.py")], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False)
    hello, bad, info = (json.loads(line) for line in proc.stdout.splitlines())
    assert Hello.from_json(hello["hello"]).pid > 0
    bad, info = Reply.from_json(bad), Reply.from_json(info)
    assert (bad.id, bad.ok, bad.error.type) == ("j1", False, "bad_job")
    assert bad.error.message == "capture job.path: expected str, got int"
    assert info.id == "j2" and info.ok and "name" in info.result
