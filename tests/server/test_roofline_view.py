"""The report's roofline section from the server's own stores (kernel_results.KernelResultStore):
a rewrite an optimize proved faster on the GPU is drawn beside the profiled launch only while both
were taken of the same kernel text; without matplotlib the section is one line. The recordings
are the H100's in tests/fixtures/roofline/ (no GPU here can prove a rewrite faster)."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import sys
from pathlib import Path

from tritonlens.profiling.worker.reports import OptimizeReport, ProfileReport
from tritonlens.server import roofline_view
from tritonlens.server.kernel_results import (
    KernelResultStore,
    Measurement,
    OptimizeOutcome,
)

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "roofline"
URI = "file:///work/matmul.py"


class Server:
    """What roofline_view reads of the language server: its measurements."""

    def __init__(self):
        self.measurements = KernelResultStore()


def recorded(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def profiled(ls: Server, kernel_hash: str = "h1") -> ProfileReport:
    profile = ProfileReport.from_json(recorded("matmul.profile.json"))
    (entry,) = profile.kernels
    ls.measurements.record(URI, Measurement("matmul_kernel", kernel_hash, 21, entry, "gpu", profile.device or {}))
    ls.measurements.last_report[URI] = {"markdown": "# Profile of matmul.py", "json": profile.to_json(),
                                        "head": "# Profile of matmul.py", "sections": {"matmul_kernel": "..."}}
    return profile


def optimized(ls: Server, kernel_hash: str = "h1") -> OptimizeReport:
    report = OptimizeReport.from_json(recorded("matmul.optimize.json"))
    ls.measurements.record_optimize(URI, OptimizeOutcome("matmul_kernel", kernel_hash, report))
    ls.measurements.last_report[URI] = {"markdown": "# Optimization of matmul_kernel", "json": report.to_json()}
    return report


def svg_of(section: str) -> str:
    (data,) = re.findall(r"\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)", section)
    return base64.b64decode(data).decode("utf-8")


def section(ls: Server) -> str | None:
    return asyncio.run(roofline_view.section(ls, URI))


def test_a_proven_rewrite_of_the_profiled_text_is_drawn_beside_it():
    ls = Server()
    profiled(ls)
    roofline_view.keep_profile(ls, URI)  # as the optimize command starts
    report = optimized(ls)
    svg = svg_of(section(ls))
    assert 'id="point:matmul_kernel"' in svg and 'id="rewrite:matmul_kernel"' in svg
    assert f"rewrite {report.best.speedup:.3g}x" in svg  # 8.09x, verified on the H100


def test_a_rewrite_of_other_text_is_not_drawn():
    ls = Server()
    profiled(ls, kernel_hash="before-an-edit")
    roofline_view.keep_profile(ls, URI)
    optimized(ls, kernel_hash="after-an-edit")
    svg = svg_of(section(ls))
    assert 'id="point:matmul_kernel"' in svg and "rewrite:" not in svg


def test_without_the_kept_profile_an_optimize_alone_has_no_picture():
    ls = Server()
    optimized(ls)
    assert section(ls) is None


def test_without_matplotlib_one_line(monkeypatch):
    ls = Server()
    profiled(ls)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    assert section(ls) == ("## Roofline\n\n_The roofline picture needs matplotlib where the server runs: "
                           "pip install 'tritonlens[plot]'._")


def test_the_section_follows_the_report():
    ls = Server()
    profiled(ls)
    answer = asyncio.run(roofline_view.with_picture(ls, URI, {"markdown": "# Profile of matmul.py", "json": None}))
    assert answer["markdown"].startswith("# Profile of matmul.py\n\n---\n\n## Roofline\n\n![roofline of matmul.py](")
    assert answer["json"] is None
    assert asyncio.run(roofline_view.with_picture(Server(), URI, {"markdown": "x", "json": None})) == \
        {"markdown": "x", "json": None}
