"""Roofline arithmetic and bound classes (pure functions of the worker's roofline module)."""

import sys

from tritonlens.profiling.client import WORKER_DIR

sys.path.insert(0, str(WORKER_DIR))
import roofline

CEIL = {"copy_gbps": 3000.0, "matmul_tflops": 750.0, "matmul_tf32_tflops": 380.0}


def t(name, shape, dtype="float16", written=False):
    return {"name": name, "kind": "tensor", "shape": shape, "dtype": dtype, "written": written}


def test_matmul_flops_from_shapes():
    d = {"args": [t("a", [64, 32]), t("b", [32, 16]), t("c", [64, 16], written=True),
                  {"name": "M", "kind": "scalar", "value": 64}]}
    assert roofline.matmul_flops(d) == 2 * 64 * 16 * 32
    batched = {"args": [t("a", [4, 64, 32]), t("b", [4, 32, 16]), t("c", [4, 64, 16], written=True)]}
    assert roofline.matmul_flops(batched) == 4 * 2 * 64 * 16 * 32
    no_match = {"args": [t("a", [64, 32]), t("b", [31, 16]), t("c", [64, 16], written=True)]}
    assert roofline.matmul_flops(no_match) is None
    assert roofline.dot_ceiling_key({"args": [t("a", [2, 2], "float32")]}) == "matmul_tf32_tflops"
    assert roofline.dot_ceiling_key({"args": [t("a", [2, 2], "bfloat16")]}) == "matmul_tflops"


def test_bound_classes():
    mem = roofline.classify(1.0, 2400.0, None, CEIL, programs=10000, sm_count=132)
    assert mem["bound"] == "memory" and mem["pct_of_peak"] == 80.0 and mem["peak"] == "copy_gbps"
    comp = roofline.classify(1.0, 300.0, 600.0, CEIL, programs=10000, sm_count=132)
    assert comp["bound"] == "compute" and comp["pct_of_peak"] == 80.0
    tf32 = roofline.classify(1.0, 10.0, 300.0, CEIL, 10000, 132, ceiling_key="matmul_tf32_tflops")
    assert tf32["bound"] == "compute"  # 300 of 380 tf32, though only 40% of the fp16 peak
    short = roofline.classify(0.005, 500.0, None, CEIL, programs=10000, sm_count=132)
    assert short["bound"] == "latency"
    small_grid = roofline.classify(1.0, 500.0, None, CEIL, programs=64, sm_count=132)
    assert small_grid["bound"] == "latency"
    slow = roofline.classify(1.0, 1200.0, None, CEIL, programs=10000, sm_count=132)
    assert slow["bound"] == "underutilized" and slow["pct_of_peak"] == 40.0
    none = roofline.classify(None, None, None, CEIL, 1, 132)
    assert none["bound"] is None and none["pct_of_peak"] is None


def test_tensor_sizes_past_the_copy_ceiling_are_not_traffic():
    # a scatter-add into a 660 MB table that touches a few rows in 6 us: whole-tensor bytes would be
    # 110 TB/s, which no GPU moves; under the ceiling, the sizes may be the traffic
    note = roofline.partial_traffic(660_000_000, 0.006, CEIL)
    assert note is not None and "36.7x" in note and "3000 GB/s" in note
    assert roofline.partial_traffic(3_000_000, 0.001, CEIL) is None  # 3000 GB/s: at the ceiling
    assert roofline.partial_traffic(3_200_000, 0.001, CEIL) is None  # within the scatter of a measurement
    assert roofline.partial_traffic(660_000_000, 0.006, None) is None  # no ceiling measured: not judged
    unknown = roofline.classify(0.006, None, None, CEIL, programs=16, sm_count=132)
    assert unknown["pct_of_peak"] is None and unknown["peak"] is None and unknown["bound"] == "latency"
