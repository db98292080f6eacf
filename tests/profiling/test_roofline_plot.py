"""The roofline picture: where launches sit (roofline_points) and what the SVG draws
(roofline_plot), read back from the SVG's own coordinates."""

from __future__ import annotations

import io
import math
import re
import xml.etree.ElementTree as ET

import pytest
from tritonlens.profiling.roofline_plot import render, roofline_png, roofline_svg
from tritonlens.profiling.roofline_points import NothingToPlot, roofline_data
from tritonlens.profiling.worker.reports import (
    CandidateReport,
    OptimizeReport,
    ProfileReport,
)

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
# the H100's, as bench/results/profile_2026-11-22_NVIDIA-H100-80GB-HBM3.txt measured them
CEILINGS = {"copy_gbps": 3000.9, "matmul_bf16_tflops": 724.2, "matmul_fp16_tflops": 658.0,
            "matmul_tf32_tflops": 360.2, "matmul_tflops": 724.2}
MATMUL_BYTES = 3 * 4096 * 4096 * 2
MATMUL_FLOPS = 2 * 4096 ** 3


def launch(kernel, time_ms, read, written, flops=None, **more):
    return {"kernel": kernel, "time_ms": time_ms, "bytes": {"read": read, "written": written}, "flops": flops, **more}


def report(*kernels, mode="gpu", ceilings=CEILINGS) -> ProfileReport:
    return ProfileReport.from_json({
        "file": "/somewhere/kernels.py", "mode": mode, "device": {"name": "NVIDIA H100 80GB HBM3"},
        "ceilings": ceilings,
        "kernels": [{"name": name, "line": 1, "launches": launches} for name, launches in kernels]})


def optimized(kernel, speedup, mode="gpu", accepted=True) -> OptimizeReport:
    best = CandidateReport(proposer="config", title="BLOCK_M=128", accepted=accepted, speedup=speedup, kernel=kernel)
    return OptimizeReport(path="/somewhere/kernels.py", kernel=kernel, mode=mode, baseline_ms=1.0, best=best)


MATMUL = ("matmul_kernel", [launch("matmul_kernel", 1.5458, 2 * 4096 * 4096 * 2, 4096 * 4096 * 2, MATMUL_FLOPS)])
LAYERNORM = ("layer_norm_fwd_kernel", [launch("layer_norm_fwd_kernel", 0.0579, 4096 * 8192 * 2 + 2 * 8192 * 2,
                                              4096 * 8192 * 2 + 2 * 4096 * 4)])
UNTIMED = ("add_kernel", [launch("add_kernel", None, 800, 400)])


def svg_tree(text: str) -> ET.Element:
    return ET.fromstring(text)


def group(root: ET.Element, gid: str) -> ET.Element:
    found = root.find(f".//{SVG}g[@id='{gid}']")
    assert found is not None, f"no <g id={gid!r}> in the picture; ids: {ids(root)}"
    return found


def ids(root: ET.Element) -> list[str]:
    return [g.get("id") for g in root.iter(f"{SVG}g") if ":" in (g.get("id") or "")]


def marker_xy(root: ET.Element, gid: str) -> tuple[float, float]:
    (use,) = group(root, gid).iter(f"{SVG}use")
    return float(use.get("x")), float(use.get("y"))


def line_points(root: ET.Element, gid: str) -> list[tuple[float, float]]:
    (path,) = group(root, gid).iter(f"{SVG}path")
    nums = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", path.get("d"))]
    return list(zip(nums[::2], nums[1::2]))


def texts(root: ET.Element) -> str:
    return "\n".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))


def test_points_from_the_reports_work_and_times():
    data = roofline_data(report(MATMUL, LAYERNORM, UNTIMED), [optimized("matmul_kernel", 4.0)])
    mm, rewrite, ln = data.points
    assert (mm.label, mm.rewrite, rewrite.rewrite, ln.label) == ("matmul_kernel", False, True, "layer_norm_fwd_kernel")
    assert mm.intensity == pytest.approx(MATMUL_FLOPS / MATMUL_BYTES)  # 1365 FLOP/byte
    assert mm.tflops == pytest.approx(88.91, abs=0.01) and mm.gbps == pytest.approx(65.12, abs=0.01)
    assert rewrite.time_ms == pytest.approx(1.5458 / 4) and rewrite.intensity == mm.intensity
    assert rewrite.tflops == pytest.approx(4 * mm.tflops)
    assert ln.flops is None and ln.intensity is None and ln.gbps == pytest.approx(2319, rel=0.01)
    assert data.on_roofline == [mm, rewrite] and data.by_bandwidth == [ln]
    assert data.left_out == ["add_kernel: not timed"]
    assert data.ceilings.ridge == pytest.approx(724.2e3 / 3000.9)
    assert data.title == "kernels.py on NVIDIA H100 80GB HBM3"


def test_only_a_proven_gpu_rewrite_gets_a_point():
    for opt in (optimized("matmul_kernel", None), optimized("matmul_kernel", 2.0, accepted=False),
                optimized("matmul_kernel", 2.0, mode="interpreter"), optimized("other_kernel", 2.0)):
        assert [p.rewrite for p in roofline_data(report(MATMUL), [opt]).points] == [False]


def test_svg_draws_points_against_the_measured_ceilings():
    root = svg_tree(roofline_svg(report(MATMUL, LAYERNORM, UNTIMED), [optimized("matmul_kernel", 4.0)]))
    assert {"roof:copy", "roof:matmul", "roof:tf32", "point:matmul_kernel", "rewrite:matmul_kernel",
            "roof:copy-bandwidth", "point-bandwidth:layer_norm_fwd_kernel"} <= set(ids(root))
    (_, y0), (ridge_x, ridge_y) = line_points(root, "roof:copy")
    (flat0_x, flat_y), (_, flat1_y) = line_points(root, "roof:matmul")
    assert (flat0_x, flat_y) == (ridge_x, ridge_y) and flat1_y == flat_y  # the slope meets the flat roof
    assert y0 > ridge_y  # SVG y grows downward: the slope climbs to the ridge
    # log-log: one decade of intensity is one decade of FLOP/s on the copy slope
    px, py = marker_xy(root, "point:matmul_kernel")
    rx, ry = marker_xy(root, "rewrite:matmul_kernel")
    assert rx == pytest.approx(px) and ry < py  # same intensity, 4x the FLOP/s: higher
    decade = (y0 - ridge_y) / math.log10(724.2e3 / 3000.9 / 1.0)  # pixels per decade (x from 1)
    assert (py - ry) == pytest.approx(decade * math.log10(4), rel=0.02)
    assert (py - flat_y) == pytest.approx(decade * math.log10(724.2 / 88.91), rel=0.02)
    words = texts(root)
    assert "copy 3.00 TB/s" in words and "matmul 724 TFLOP/s" in words and "tf32 360 TFLOP/s" in words
    assert "matmul_kernel" in words and "rewrite 4x" in words and "77% of copy" in words
    assert "left out: add_kernel: not timed" in words
    assert "rewrite: the original's work in its time ÷ the verified speedup" in words


def test_bandwidth_panel_places_a_memory_kernel_against_the_copy_ceiling():
    half = ("copy_kernel", [launch("copy_kernel", 1.0, 750_225_000, 750_225_000)])  # 1500.45 GB/s: 50% of copy
    root = svg_tree(roofline_svg(report(half)))
    assert "roof:matmul" not in ids(root) and "point:copy_kernel" not in ids(root)  # no FLOP count: no roofline
    x, _ = marker_xy(root, "point-bandwidth:copy_kernel")
    (copy_x, _), _ = line_points(root, "roof:copy-bandwidth")
    zero_x = line_points(root, "bandwidth-stem:copy_kernel")[0][0]
    assert (x - zero_x) == pytest.approx((copy_x - zero_x) / 2, rel=0.01)
    assert "50% of copy" in texts(root)


def test_rewrite_of_a_memory_kernel_sits_on_its_row():
    root = svg_tree(roofline_svg(report(LAYERNORM), [optimized("layer_norm_fwd_kernel", 1.25)]))
    x, y = marker_xy(root, "point-bandwidth:layer_norm_fwd_kernel")
    rx, ry = marker_xy(root, "rewrite-bandwidth:layer_norm_fwd_kernel")
    zero_x = line_points(root, "bandwidth-stem:layer_norm_fwd_kernel")[0][0]
    assert ry == pytest.approx(y) and (rx - zero_x) == pytest.approx(1.25 * (x - zero_x), rel=0.01)


def test_same_reports_same_picture():
    a = roofline_svg(report(MATMUL, LAYERNORM), [optimized("matmul_kernel", 2.0)])
    b = roofline_svg(report(MATMUL, LAYERNORM), [optimized("matmul_kernel", 2.0)])
    assert a == b and "<dc:date>" not in a
    png = roofline_png(report(MATMUL))
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png == roofline_png(report(MATMUL))


def test_png_is_an_image_of_the_figure_size():
    from PIL import Image

    img = Image.open(io.BytesIO(roofline_png(report(MATMUL, LAYERNORM))))
    assert img.format == "PNG" and img.size[0] > img.size[1] > 400


def test_nothing_to_plot_says_why_in_one_line():
    with pytest.raises(NothingToPlot, match="^no roofline: the kernels ran in Triton's interpreter"):
        roofline_data(report(UNTIMED, mode="interpreter", ceilings=None))
    with pytest.raises(NothingToPlot, match="^no roofline: the profile has no measured ceilings"):
        roofline_data(report(MATMUL, ceilings={"copy_gbps": 3000.9}))
    failed = ("bad_kernel", [launch("bad_kernel", 1.0, 8, 8, error="CompilationError: ...")])
    with pytest.raises(NothingToPlot) as info:
        roofline_data(report(UNTIMED, failed, ("nobytes", [{"kernel": "nobytes", "time_ms": 1.0}]),
                             ("gather", [{"kernel": "gather", "time_ms": 0.006, "traffic": "its tensors ..."}])))
    assert str(info.value) == ("no roofline: no launch was timed with a byte count "
                               "(add_kernel: not timed; bad_kernel: failed; nobytes: no byte count; "
                               "gather: touches only part of its tensors)")
    assert "\n" not in str(info.value)


def test_launches_of_one_kernel_are_numbered():
    two = ("matmul_kernel", MATMUL[1] + [launch("matmul_kernel", 0.006, 100 * 70 * 2 + 70 * 45 * 2, 100 * 45 * 2,
                                                2 * 100 * 45 * 70)])
    root = svg_tree(roofline_svg(report(two)))
    assert {"point:matmul_kernel (1)", "point:matmul_kernel (2)"} <= set(ids(root))


def test_render_refuses_other_formats():
    with pytest.raises(ValueError, match="svg or png"):
        render(roofline_data(report(MATMUL)), "pdf")
