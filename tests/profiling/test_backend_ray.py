"""The Ray backend on a real local Ray (one module-scoped cluster: Ray starts slowly)."""

import os

import pytest

pytestmark = pytest.mark.slow
DATA = os.path.join(os.path.dirname(__file__), "data")
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


@pytest.fixture(scope="module")
def ray_backend():
    ray = pytest.importorskip("ray")
    from tritonlens.profiling.backend_ray import RayBackend

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    backend = RayBackend(timeout=120)
    yield backend
    backend.close()
    ray.shutdown()


def test_jobs_run_as_parallel_ray_tasks(ray_backend):
    assert ray_backend.parallel and ray_backend.gpus == 0
    jobs = [{"id": "a", "kind": "bench", "path": os.path.abspath(os.path.join(EXAMPLES, "vector_add.py"))},
            {"id": "b", "kind": "capture", "path": os.path.join(DATA, "zero_config.py")},
            {"id": "c", "kind": "capture", "path": os.path.join(DATA, "hang.py")}]
    replies = ray_backend.run_many(jobs[:2]) + [ray_backend.run(jobs[2], timeout=3)]
    a, b, c = replies
    assert [r.id for r in replies] == ["a", "b", "c"]
    assert a.ok, a
    assert a.result["mode"] == "interpreter" and a.result["launches"][0]["kernel"] == "add_kernel"
    assert "tritonlens-ray-" in a.result["descriptors"][0]["file"]  # ran on the shipped copy
    assert b.ok and {d["kernel"] for d in b.result["launches"]} == {"scale_inplace_kernel", "copy_rows_kernel"}
    assert c.ok is False and c.error.type == "timeout"
    # per-line sampling is shipped too; here it stops where the node has no Nsight Compute
    d = ray_backend.run({"id": "d", "kind": "lines", "path": jobs[0]["path"], "kernel": "add_kernel"})
    assert not d.ok and "ncu (Nsight Compute) is not on PATH" in d.error.message
