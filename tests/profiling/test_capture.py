"""Launch capture and replay, in-process on the worker modules (interpreter mode) and via jobs."""

import os
import sys
import time

import pytest
from tritonlens.profiling.client import WorkerClient
from worker_modules import load_worker_module, worker_imports

DATA = os.path.join(os.path.dirname(__file__), "data")
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


@pytest.fixture(scope="module")
def wmods():
    with worker_imports(interpret=True):
        yield load_worker_module("capture"), load_worker_module("harness")


def _capture(wmods, path, harness_spec=None):
    capture, harness = wmods
    with capture.Capture(file=path) as cap:
        entries, source = harness.entry_points(path, harness_spec)
        cases = harness.run_entries(entries, cap)
    return cap, source, cases


def test_zero_config_capture_fields(wmods):
    path = os.path.join(DATA, "zero_config.py")
    cap, source, cases = _capture(wmods, path)
    assert source == "tests"
    assert [c["label"] for c in cases] == ["test_scale", "test_gather"]  # fixture test skipped
    assert all(c["ok"] for c in cases), cases
    by_kernel = {d["kernel"]: d for d in cap.descriptors()}
    scale = by_kernel["scale_inplace_kernel"]
    assert scale["def_line"] == 8
    assert scale["grid"] == [8, 1, 1]  # grid lambda evaluated on the launch's meta-parameters
    assert scale["num_warps"] == 2 and scale["options"] == {"num_warps": 2}
    assert scale["constexprs"] == {"BLOCK": 128}
    assert scale["mode"] == "interpreter" and scale["case"] == 0
    x, n, factor, block = scale["args"]
    assert x == {"name": "x_ptr", "kind": "tensor", "dtype": "float32", "shape": [1000], "strides": [1],
                 "storage_offset": 0, "device": "cpu", "alias_of": None, "written": True}
    assert n == {"name": "n", "kind": "scalar", "type": "int", "value": 1000}
    assert factor == {"name": "factor", "kind": "scalar", "type": "float", "value": 2.5}
    assert block == {"name": "BLOCK", "kind": "constexpr", "value": 128}
    assert scale["written_by"] == {"x_ptr": ["compare", "static"]}
    # read-modify-write: the buffer is both read and written
    assert scale["bytes"] == {"read": 4000, "written": 4000}

    gather = by_kernel["copy_rows_kernel"]
    src, dst, idx = gather["args"][:3]
    assert src["shape"] == [50, 33] and src["strides"] == [40, 1] and not src["written"]
    assert idx["dtype"] == "int32" and not idx["written"]
    assert gather["written"] == ["dst_ptr"]
    assert gather["bytes"]["written"] == 4 * 33 * 4


def test_replay_uses_fresh_data_and_clones_written_buffers(wmods):
    capture = load_worker_module("replay")
    cap, _, _ = _capture(wmods, os.path.join(DATA, "zero_config.py"))
    records = {r.descriptor["kernel"]: r for r in cap.records.values()}

    scale = records["scale_inplace_kernel"]
    values = capture.build_args(scale, seed=1)
    assert values["x_ptr"].shape == (1000,) and values["n"] == 1000
    pristine = values["x_ptr"].clone()
    _, ran = capture.replay(scale, values=values)
    assert ran["x_ptr"] is not values["x_ptr"]
    assert (values["x_ptr"] == pristine).all()  # the input buffer was cloned, not written
    assert (ran["x_ptr"] - pristine * 2.5).abs().max() < 1e-5
    other = capture.build_args(scale, seed=2)
    assert not (other["x_ptr"] == values["x_ptr"]).all()  # fresh random data per seed

    gather = records["copy_rows_kernel"]
    values, ran = capture.replay(gather, seed=3)
    src, idx = values["src_ptr"], values["idx_ptr"]
    assert src.stride() == (40, 1) and src.shape == (50, 33)
    assert idx.tolist() == [3, 0, 49, 7]  # integer (index) tensors keep the captured values
    assert (ran["dst_ptr"] == src[idx.long()]).all()


def test_identical_launches_are_counted_once(wmods):
    capture, _ = wmods
    import torch
    sys.path.insert(0, DATA)
    try:
        import zero_config
    finally:
        sys.path.remove(DATA)
    with capture.Capture(file=zero_config.__file__) as cap:
        for _ in range(5):
            zero_config.scale_(torch.ones(256), 1.0)
        zero_config.scale_(torch.ones(512), 1.0)
    descs = cap.descriptors()
    assert [d["count"] for d in descs] == [5, 1]
    # a store of unchanged values is still a write: the static scan catches it
    assert descs[0]["written_by"] == {"x_ptr": ["static"]}


def test_autotuned_launch_records_chosen_config():
    # Through the capture job (a fresh worker process): in-process, an earlier test that imported
    # Triton without the interpreter leaves the autotuner looking for a GPU driver.
    with WorkerClient(timeout=120) as client:
        reply = client.run({"kind": "capture", "path": os.path.join(EXAMPLES, "rmsnorm_autotune.py")})
    assert reply.ok, reply
    res = reply.result
    assert res["cases"] and all(c["ok"] for c in res["cases"]), res["cases"]
    first = res["launches"][0]
    assert first["autotuned"] is True
    assert first["constexprs"]["BLOCK_SIZE"] in (256, 1024, 2048, 4096)
    assert "num_warps" in first["options"]


def test_capture_job_main_block_and_broken_harness():
    with WorkerClient(timeout=60) as client:
        reply = client.run({"kind": "capture", "path": os.path.join(DATA, "main_block.py")})
        assert reply.ok, reply
        res = reply.result
        assert res["source"] == "main" and res["cases"][0]["ok"]
        assert [d["kernel"] for d in res["launches"]] == ["negate_kernel"]
        # user prints land on stderr, not the protocol; its reader thread may see them after the reply
        deadline = time.monotonic() + 10
        while "main block ran" not in client.stderr_tail() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "main block ran" in client.stderr_tail()

        reply = client.run({"kind": "capture", "path": os.path.join(DATA, "broken_harness.py")})
        assert reply.ok, reply
        cases = reply.result["cases"]
        assert cases[0]["ok"] and not cases[1]["ok"]
        assert "harness failure for n=7" in cases[1]["error"]
        assert len(reply.result["launches"]) == 1

        reply = client.run({"kind": "capture", "path": os.path.join(DATA, "zero_config.py"),
                            "harness": os.path.join(DATA, "nope.py") + "::cases"})
        # a harness that cannot be loaded is the user's to fix: its own error type, said without a class name
        assert reply.error.type == "harness" and "no such file" in reply.error.message
        assert "Error" not in reply.error.message.split(":")[0]
        reply = client.run({"kind": "run", "path": os.path.join(DATA, "zero_config.py")})
        assert reply.ok and reply.result["kernels"] == {"scale_inplace_kernel": 1, "copy_rows_kernel": 1}
