"""The line profile the editor tests replay: the one recorded on an H100 of examples/softmax.py
(tritonlens profile --lines --format json, tests/fixtures/line_profiles/)."""

from __future__ import annotations

import json
from pathlib import Path

RECORDED = Path(__file__).resolve().parent / "fixtures" / "line_profiles"


def softmax_profile() -> Path:
    return RECORDED / "softmax.json"


def recorded() -> list[Path]:
    """Every recorded profile of an example (their `file`: examples/NAME.py)."""
    return sorted(RECORDED.glob("*.json"))


def line_profile(profile: Path, kernel: str = "softmax_kernel"):
    """The LineProfile of the kernel's first launch in the report at `profile`."""
    from tritonlens.profiling.worker.reports import ProfileReport

    report = ProfileReport.from_json(json.loads(profile.read_text()))
    return report.kernel(kernel).launches[0].lines


def expected(profile: Path, kernel: str = "softmax_kernel", moved: int = 0) -> list[tuple[int, str]]:
    """(1-based line in the profiled file, the hint's label) of the hottest lines, hottest first; with
    `moved`, in a copy whose kernel sits that many lines lower (the loads a label names move too)."""
    from dataclasses import replace

    from tritonlens.server.line_hints import label

    return [(s.line, label(replace(s, waits_on=[w + moved for w in s.waits_on])))
            for s in line_profile(profile, kernel).hottest()]
