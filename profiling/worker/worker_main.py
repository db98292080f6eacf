"""Worker process entry: one JSON job per stdin line, one JSON reply per line on a private channel.

Standalone on purpose: this folder is copied as plain files to whatever interpreter runs the
kernels (local project venv, a host reached over ssh, a Ray node), where tritonlens is not
installed. Only the stdlib here; job modules may import torch and triton. The messages are
messages.py's; a job of kind K is run by job_K.py's `handle(job) -> dict` (the result object).

A "cuda" error leaves the CUDA context unusable: the worker replies, then exits, so the supervisor
starts a fresh process for the next job.

The reply channel is a private duplicate of the original stdout; fd 1 itself is pointed at stderr
so that a user's print() or a C library writing to stdout cannot corrupt the protocol.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
import threading
import time
import traceback

_KIND = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import messages  # sibling files, found through HERE
import sandbox


def _open_channel():
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", buffering=1, encoding="utf-8")


def _json_default(obj):
    # numpy / torch scalars and anything odd a job returns must not kill the reply.
    for attr in ("item", "tolist"):
        if hasattr(obj, attr):
            try:
                return getattr(obj, attr)()
            except Exception:
                pass
    return repr(obj)


def classify(exc: BaseException) -> str:
    """Map an exception to an error type the client can act on."""
    name = type(exc).__name__
    text = str(exc)
    if isinstance(getattr(exc, "worker_error_type", None), str):
        return exc.worker_error_type
    if name == "OutOfMemoryError" or isinstance(exc, MemoryError) or "out of memory" in text.lower():
        return "oom"
    if "CUDA error" in text or "cudaError" in text or name in ("AcceleratorError", "CudaError"):
        return "cuda"
    return "exception"


def handle_line(line: str) -> tuple[messages.Reply, bool]:
    """Run one job line; returns (reply, must_exit)."""
    try:
        data = json.loads(line)
    except ValueError as exc:
        return messages.Reply.failure(None, "bad_job", f"not JSON: {exc}"), False
    job_id = data.get("id") if isinstance(data, dict) else None
    try:
        job = messages.job_from_json(data)
    except messages.MessageError as exc:
        return messages.Reply.failure(job_id if isinstance(job_id, str) else None, "bad_job", str(exc)), False
    if not _KIND.match(job.kind):
        return messages.Reply.failure(job.id, "bad_job", f"bad job kind {job.kind!r}"), False
    if not os.path.exists(os.path.join(HERE, f"job_{job.kind}.py")):
        return messages.Reply.failure(job.id, "bad_job", f"unknown job kind {job.kind!r}"), False
    try:
        module = importlib.import_module(f"job_{job.kind}")
        sandbox.allow_for_job([job.cache_dir])
        result = module.handle(job)
        return _with_attempts(messages.Reply(id=job.id, ok=True, result=result)), False
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        etype = classify(exc)
        # An error the job wrote for a person (HarnessError) is shown as it is, without its class.
        text = str(exc) if hasattr(exc, "worker_error_type") else f"{type(exc).__name__}: {exc}"
        reply = messages.Reply.failure(job.id, etype, text,
                                       traceback=traceback.format_exc(limit=30))
        reply.fatal = etype == "cuda"
        return _with_attempts(reply), etype == "cuda"


def _with_attempts(reply: messages.Reply) -> messages.Reply:
    """What the job tried and the sandbox refused travels with the reply, even when the job
    caught the PermissionError and carried on."""
    tried = sandbox.take_attempts()
    if tried:
        reply.sandbox = tried
    return reply


def _exit_with_parent() -> None:
    """A worker whose client died (killed by a timeout, a lost ssh session) stops too: it runs in its
    own session, so no signal of the client's reaches it, and a long compile would run on alone."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(2)
            if os.getppid() != parent:
                os._exit(4)

    threading.Thread(target=watch, name="tritonlens-parent-watch", daemon=True).start()


def main() -> int:
    _exit_with_parent()
    channel = _open_channel()
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    if os.environ.get("TRITONLENS_WORKER_SANDBOX", "on") != "off":  # "off": set by the trusted client only
        sandbox.install(os.getcwd())  # before any job: the code jobs run is not trusted

    def send(obj: dict) -> None:
        channel.write(json.dumps(obj, default=_json_default) + "\n")
        channel.flush()

    send({"hello": messages.Hello(protocol=messages.PROTOCOL, pid=os.getpid(), python=sys.executable,
                                  version=sys.version.split()[0], cwd=os.getcwd()).to_json()})
    for line in sys.stdin:
        if not line.strip():
            continue
        reply, must_exit = handle_line(line)
        try:
            send(reply.to_json())
        except (TypeError, ValueError) as exc:
            send(messages.Reply.failure(reply.id, "exception", f"result is not JSON-serialisable: {exc}").to_json())
        if must_exit:
            sys.stderr.flush()
            os._exit(3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
