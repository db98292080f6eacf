"""The worker protocol end to end with real processes: replies, failures, restarts, isolation."""

import os
import threading
import time

from tritonlens.profiling.client import WorkerClient, worker_bundle
from tritonlens.profiling.worker.supervisor import Supervisor

MISBEHAVE = '''
import ctypes, os, sys, time

def handle(job):  # a messages.Job: this kind's fields are in job.more
    what = job.more["what"]
    if what == "echo":
        print("noise on stdout that must not reach the protocol")
        return {"echo": job.more.get("value"), "pid": os.getpid(), "cwd": os.getcwd(),
                "env": sorted(os.environ)}
    if what == "loop":
        while True:
            pass
    if what == "exit":
        os._exit(7)
    if what == "segv":
        ctypes.string_at(0)
    if what == "raise":
        raise ValueError("bad input shape")
    if what == "oom":
        raise MemoryError("simulated allocation failure")
    if what == "cuda":
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    if what == "child":
        import subprocess
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open(job.more["pidfile"], "w").write(str(p.pid))
        while True:
            time.sleep(1)
'''


def make(worker_copy, **kw):
    (worker_copy / "job_misbehave.py").write_text(MISBEHAVE)
    return Supervisor(worker_dir=str(worker_copy), **kw)


def test_reply_channel_is_separate_from_prints_and_env_is_clean(worker_copy, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("GITHUB_TOKEN", "x")
    monkeypatch.setenv("MY_DB_PASSWORD", "x")
    with make(worker_copy, env={"EXTRA_FLAG": "1"}) as sup:
        reply = sup.run({"kind": "misbehave", "what": "echo", "value": [1, 2]})
        assert reply.ok, reply
        res = reply.result
        assert res["echo"] == [1, 2]
        assert "EXTRA_FLAG" in res["env"]
        for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "MY_DB_PASSWORD"):
            assert name not in res["env"]
        assert os.path.basename(res["cwd"]).startswith("tritonlens-worker-")
        # the same worker serves the next job
        again = sup.run({"kind": "misbehave", "what": "echo"})
        assert again.result["pid"] == res["pid"]
        assert sup.spawned == 1


def test_timeout_kills_and_next_job_gets_fresh_worker(worker_copy):
    with make(worker_copy) as sup:
        first = sup.run({"kind": "misbehave", "what": "echo"})
        t0 = time.monotonic()
        reply = sup.run({"kind": "misbehave", "what": "loop"}, timeout=1.5)
        assert time.monotonic() - t0 < 10
        assert reply.ok is False and reply.error.type == "timeout"
        with_pid = sup.run({"kind": "misbehave", "what": "echo"})
        assert with_pid.ok and with_pid.result["pid"] != first.result["pid"]


def test_timeout_kills_the_whole_process_group(worker_copy, tmp_path):
    pidfile = tmp_path / "child.pid"
    # The worker's sandbox refuses Python-level process spawns; native code can still fork, which
    # is what the group kill is for: switch the sandbox off to get a child to kill.
    with make(worker_copy, env={"TRITONLENS_WORKER_SANDBOX": "off"}) as sup:
        reply = sup.run({"kind": "misbehave", "what": "child", "pidfile": str(pidfile)}, timeout=2)
        assert reply.error.type == "timeout"
        child = int(pidfile.read_text())
        for _ in range(50):
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            # a zombie still answers kill(0); look at its state
            try:
                if open(f"/proc/{child}/stat").read().split()[2] == "Z":
                    break
            except FileNotFoundError:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("grandchild survived the timeout kill")


def test_crash_exit_and_segfault_then_recovery(worker_copy):
    with make(worker_copy) as sup:
        reply = sup.run({"kind": "misbehave", "what": "exit"})
        assert reply.error.type == "crash"
        assert "status 7" in reply.error.message
        reply = sup.run({"kind": "misbehave", "what": "segv"})
        assert reply.error.type == "crash"
        assert "SIGSEGV" in reply.error.message
        assert sup.run({"kind": "misbehave", "what": "echo"}).ok


def test_exception_oom_and_cuda_errors_are_classified(worker_copy):
    with make(worker_copy) as sup:
        reply = sup.run({"kind": "misbehave", "what": "raise"})
        assert reply.error.type == "exception"
        assert "bad input shape" in reply.error.message
        assert "Traceback" in reply.error.traceback
        pid = sup.hello.pid
        assert sup.run({"kind": "misbehave", "what": "oom"}).error.type == "oom"
        assert sup.hello.pid == pid  # an exception does not cost the worker
        reply = sup.run({"kind": "misbehave", "what": "cuda"})
        assert reply.error.type == "cuda" and reply.fatal
        assert sup.run({"kind": "misbehave", "what": "echo"}).ok
        assert sup.hello.pid != pid  # a CUDA error does


def test_cancel_kills_running_job(worker_copy):
    cancel = threading.Event()
    with make(worker_copy) as sup:
        threading.Timer(1.0, cancel.set).start()
        t0 = time.monotonic()
        reply = sup.run({"kind": "misbehave", "what": "loop"}, timeout=60, cancel=cancel)
        assert reply.error.type == "cancelled"
        assert time.monotonic() - t0 < 10


def test_bad_jobs_and_bad_interpreter():
    with WorkerClient() as client:
        assert client.run({"kind": "no_such_job"}).error.type == "bad_job"
        assert client.run({"kind": "../etc"}).error.type == "bad_job"
    with WorkerClient(python="/nonexistent/python") as client:
        assert client.run({"kind": "info"}).error.type == "spawn"


def test_info_job_and_bundle():
    with WorkerClient() as client:
        reply = client.run({"kind": "info"})
    assert reply.ok, reply
    assert reply.result["triton"] and reply.result["cuda"] is False
    bundle = worker_bundle()
    assert "worker/worker_main.py" in bundle and "worker/supervisor.py" in bundle
    for name, text in bundle.items():
        if name.endswith(".py"):
            assert "tritonlens" not in "\n".join(
                l for l in text.splitlines() if l.lstrip().startswith(("import ", "from "))), name
