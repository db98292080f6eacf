"""Untrusted code runs only in the worker, without the editor's secrets, in a temporary folder,
under resource limits; trying to write outside it, spawn processes or reach the network is
refused and reported. A candidate that reaches for the key is refused before anything runs it."""

from __future__ import annotations

import json
import os
import resource
import shutil
from pathlib import Path

import pytest
from tritonlens.profiling.client import WorkerClient
from tritonlens.rewrite.static_check import screen

pytestmark = pytest.mark.slow
DATA = Path(__file__).parent / "data"


def test_worker_contains_escape_attempts(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-reliability-FAKE-0123456789")
    monkeypatch.setenv("TRITONLENS_TEST_TOKEN", "tok-FAKE")
    outside = Path.home() / f"tritonlens-escape-{os.getpid()}.txt"  # not temp, not a cache
    monkeypatch.setenv("ESCAPE_TARGET", str(outside))
    src = tmp_path / "escape_attempts.py"
    shutil.copy(DATA / "escape_attempts.py", src)
    try:
        with WorkerClient(timeout=120) as worker:
            reply = worker.run({"kind": "run", "path": str(src)})
            assert reply.ok, reply
            workdir = Path(worker.hello.cwd)
            assert workdir.name.startswith("tritonlens-worker-")
            attempts = json.loads((workdir / "attempts.json").read_text())
            limits = worker.limits
    finally:
        leaked = outside.exists()
        outside.unlink(missing_ok=True)
    assert not leaked, "the worker wrote outside its folders"
    assert attempts["key"] is None and attempts["token"] is None and not attempts["secret_names"], attempts
    assert attempts["write_inside"] == "allowed", attempts
    for what in ("write_outside", "subprocess", "system", "fork", "network"):
        assert attempts[what].startswith("refused: tritonlens worker sandbox"), (what, attempts[what])
    assert not attempts["loopback"].startswith("refused"), attempts  # loopback stays open
    # every refusal is reported with the job's reply, even though the code caught it
    kinds = sorted(a["kind"] for a in reply.sandbox)
    assert kinds == ["network", "process", "process", "process", "write"], reply.sandbox
    # resource limits: open files, CPU time, and address space on a host without a GPU
    assert limits["nofile"] and limits["cpu"]
    if not any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/nvidia0")):
        assert limits["as"] and limits["as"] < os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert resource.getrlimit(resource.RLIMIT_NOFILE)  # the test process itself is untouched


@pytest.mark.parametrize("snippet, why", [
    ("    key = __import__('os').environ['OPENAI_API_KEY']\n", "__import__"),
    ("    import os\n    key = os.environ.get('OPENAI_API_KEY')\n", "os"),
    ("    open('/etc/passwd_copy', 'w').write('x')\n", "open"),
    ("    import subprocess\n    subprocess.run(['curl', 'x'])\n", "subprocess"),
])
def test_candidate_reaching_for_secrets_is_refused_statically(snippet, why):
    original = (Path(__file__).resolve().parents[2] / "examples" / "vector_add.py").read_text()
    anchor = "    out = torch.empty_like(x)\n"
    assert anchor in original
    candidate = original.replace(anchor, snippet + anchor)
    problems = screen(original, candidate)
    assert problems and any(why in p for p in problems), problems
