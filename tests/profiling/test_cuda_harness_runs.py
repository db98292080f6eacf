"""A harness written for a GPU (device="cuda") runs as it is in the run and bench jobs on this
GPU-less machine: "cuda" means the CPU while the harness runs, as in a project capture, and the
worker sees the real torch.cuda again afterwards. torch.cuda.is_available() keeps answering False,
so a harness that sizes its cases by it keeps its CPU sizes."""

import os

from tritonlens.profiling.client import WorkerClient

HARNESS = os.path.join(os.path.dirname(__file__), "data", "cuda_written.py")


def test_run_and_bench_map_cuda_to_the_cpu_and_undo_it():
    with WorkerClient() as client:
        ran = client.run({"kind": "run", "path": HARNESS})
        assert ran.ok, ran.error
        assert ran.result["mode"] == "interpreter" and ran.result["kernels"] == {"shift_kernel": 1}
        assert all(case["ok"] for case in ran.result["cases"]), ran.result["cases"]
        bench = client.run({"kind": "bench", "path": HARNESS})
        assert bench.ok, bench.error
        (launch,) = bench.result["launches"]
        assert launch["replayed"] is True and "error" not in launch
        assert launch["grid"] == [8, 1, 1]  # its CPU size: 1000 elements in blocks of 128
        info = client.run({"kind": "info"})
        assert info.ok and info.result["cuda"] is False  # the same worker: the mapping is undone
