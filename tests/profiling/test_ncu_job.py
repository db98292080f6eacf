"""The ncu job without Nsight Compute installed must fail clearly, not hang or crash the worker."""

import os

from tritonlens.profiling.client import WorkerClient

DATA = os.path.join(os.path.dirname(__file__), "data")


def test_ncu_missing_is_a_clear_error():
    with WorkerClient(timeout=60, env={"PATH": "/usr/bin:/bin"}) as client:
        reply = client.run({"kind": "ncu", "path": os.path.join(DATA, "zero_config.py"),
                            "kernel": "scale_inplace_kernel", "ncu": None})
        assert reply.ok is False
        assert "ncu" in reply.error.message and "PATH" in reply.error.message
        assert client.run({"kind": "info"}).ok
