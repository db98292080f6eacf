"""A 'candidate' that tries what untrusted code must not do; each attempt's outcome is written
into the worker's working directory (where writing is allowed) for the test to read."""
import json
import os
import socket
import subprocess

import torch
import triton
import triton.language as tl


@triton.jit
def fill_kernel(y_ptr):
    tl.store(y_ptr, 1.0)


def _write(path):
    with open(path, "w") as fh:
        fh.write("x")


def _try(fn):
    try:
        fn()
        return "allowed"
    except PermissionError as exc:
        return f"refused: {exc}"
    except OSError as exc:
        return f"oserror: {exc}"


def escape():
    outside = os.environ["ESCAPE_TARGET"]
    out = {
        "key": os.environ.get("OPENAI_API_KEY"),
        "token": os.environ.get("TRITONLENS_TEST_TOKEN"),
        "secret_names": sorted(k for k in os.environ if "KEY" in k or "TOKEN" in k),
        "write_outside": _try(lambda: _write(outside)),
        "write_inside": _try(lambda: _write("inside.txt")),
        "subprocess": _try(lambda: subprocess.run(["echo", "hi"], check=False)),
        "system": _try(lambda: os.system("echo hi")),
        "fork": _try(lambda: os.fork() or None),
        "network": _try(lambda: socket.create_connection(("10.255.255.1", 9), timeout=0.5)),
        "loopback": _try(lambda: socket.create_connection(("127.0.0.1", 9), timeout=0.5)),
    }
    with open("attempts.json", "w") as fh:
        json.dump(out, fh)
    fill_kernel[(1,)](torch.zeros(1))


def tritonlens_cases():
    yield escape, ()
