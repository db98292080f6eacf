"""A kernel handed a table of memory addresses (an int64 tensor of other tensors' data pointers, as
paged KV-cache copies take them) is marked at capture; its launch read back from the project's
records is not replayed on fresh tensors, where small integers as pointers fault the GPU."""

import pytest
import torch
from tritonlens.profiling.worker.messages import LaunchDescriptor
from worker_modules import load_worker_module, worker_imports


@pytest.fixture(scope="module")
def worker():
    """capture and replay as the worker has them, in this process."""
    with worker_imports():
        yield load_worker_module("capture"), load_worker_module("replay")


def test_a_table_of_data_pointers_holds_addresses_and_an_index_does_not(worker):
    holds_addresses = worker[0].holds_addresses
    caches = [torch.zeros(4), torch.zeros(4)]
    assert holds_addresses(torch.tensor([c.data_ptr() for c in caches] + [0], dtype=torch.int64))
    assert not holds_addresses(torch.tensor([0, 5, 3], dtype=torch.int64))
    assert not holds_addresses(torch.tensor([1 << 33, 7], dtype=torch.int64))  # a large offset beside a small one
    assert not holds_addresses(torch.zeros(3, dtype=torch.int64))
    assert not holds_addresses(torch.tensor([1 << 41], dtype=torch.float64))  # not an integer table


def _descriptor(marked: bool) -> LaunchDescriptor:
    table = {"name": "ptrs", "kind": "tensor", "dtype": "int64", "shape": [2], "strides": [1],
             "storage_offset": 0, "device": "cpu"}
    if marked:
        table["addresses"] = True
    out = {"name": "out", "kind": "tensor", "dtype": "float32", "shape": [4], "strides": [1], "storage_offset": 0,
           "device": "cpu", "written": True}
    return LaunchDescriptor.from_json({"kernel": "copy_blocks_kernel", "key": "k", "grid": [1, 1, 1],
                                       "args": [table, out]}, "record")


def test_a_launch_from_records_with_an_address_table_is_not_replayed(worker):
    capture, replay = worker
    LaunchRecord = capture.LaunchRecord  # noqa: N806
    desc = _descriptor(marked=True)
    assert desc.to_json()["args"][0]["addresses"] is True  # kept through the records' JSON
    with pytest.raises(ValueError, match="^ptrs is a table of memory addresses .* cannot rebuild; profile "
                                         r"this kernel with a harness that builds the table \(tritonlens_cases\)$"):
        replay.build_args(LaunchRecord(None, desc.to_json(), {}))
    # captured in this process, the table's values are at hand and still point at live tensors
    live = torch.tensor([torch.zeros(4).data_ptr(), torch.zeros(4).data_ptr()])
    values = replay.build_args(LaunchRecord(None, desc.to_json(), {"ptrs": live}))
    assert torch.equal(values["ptrs"], live)
    unmarked = replay.build_args(LaunchRecord(None, _descriptor(marked=False).to_json(), {}))
    assert unmarked["ptrs"].max() < 64  # an index table: small values, as before
