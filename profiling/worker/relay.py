"""What an ssh session runs on the remote host: a relay that serves the client's jobs with a local
Supervisor, so a remote worker times out, crashes and is cancelled exactly like a local one.
Standard library only (it runs from the shipped worker folder, which is on sys.path)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import sys
import threading

import messages
from supervisor import Supervisor, resolve_paths

_error = messages.Reply.failure


def materialize(bundle: dict, root: str) -> None:
    """Write {relative path: text} under root (refusing paths that escape it)."""
    root_abs = os.path.realpath(root)
    for rel, text in bundle.items():
        dest = os.path.realpath(os.path.join(root_abs, rel))
        if not dest.startswith(root_abs + os.sep):
            raise ValueError(f"bundle path escapes its folder: {rel!r}")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as fh:
            fh.write(text)


def relay_main(root: str, python: str | None = None) -> int:
    """Serve jobs read from stdin with a local Supervisor (what an ssh session runs).

    Each job may carry "timeout". When stdin closes (the client went away or cancelled), the
    running job's worker is killed and the relay exits, so nothing outlives the connection.
    """
    out = sys.stdout
    jobs: queue.Queue = queue.Queue()
    gone = threading.Event()

    def read_stdin() -> None:
        for line in sys.stdin:
            if line.strip():
                jobs.put(line)
        gone.set()
        jobs.put(None)

    threading.Thread(target=read_stdin, daemon=True).start()
    sup = Supervisor(python=python or sys.executable, worker_dir=os.path.join(root, "worker"))
    try:
        hello = messages.RelayHello(relay=1, host=os.uname().nodename, root=root)
        out.write(json.dumps({"hello": hello.to_json()}) + "\n")
        out.flush()
        while True:
            line = jobs.get()
            if line is None:
                break
            try:
                job = json.loads(line)
            except ValueError as exc:
                reply = _error(None, "bad_job", f"not JSON: {exc}")
            else:
                timeout = float(job.pop("timeout", sup.timeout) or sup.timeout)
                try:
                    materialize(job.pop("files", None) or {}, root)  # this job's user files
                except (OSError, ValueError) as exc:
                    reply = _error(job.get("id"), "bad_job", f"cannot write shipped files: {exc}")
                else:
                    reply = sup.run(resolve_paths(job, root), timeout=timeout, cancel=gone)
            out.write(json.dumps(reply.to_json()) + "\n")
            out.flush()
    finally:
        sup.close()
        shutil.rmtree(root, ignore_errors=True)
    return 0
