"""The line profile the editor tests replay: a recorded one of examples/softmax.py when
tests/fixtures/line_profiles/ holds it, else the one written by hand in tests/server/data/ (on the
timings of the H100 run in bench/results/, with the kernel's real source hash)."""

from __future__ import annotations

import json
from pathlib import Path

TESTS = Path(__file__).resolve().parent
RECORDED = TESTS / "fixtures" / "line_profiles"
WRITTEN = TESTS / "server" / "data" / "line_profile_softmax.json"


def softmax_profile() -> Path:
    recorded = sorted(RECORDED.glob("softmax*.json")) if RECORDED.is_dir() else []
    return recorded[0] if recorded else WRITTEN


def line_profile(profile: Path, kernel: str = "softmax_kernel"):
    """The LineProfile of the kernel's first launch in the report at `profile`."""
    from tritonlens.profiling.worker.reports import ProfileReport

    report = ProfileReport.from_json(json.loads(profile.read_text()))
    return report.kernel(kernel).launches[0].lines


def expected(profile: Path, kernel: str = "softmax_kernel") -> list[tuple[int, str]]:
    """(1-based line in the profiled file, the hint's label) of the hottest lines, hottest first."""
    from tritonlens.server.line_hints import label

    return [(s.line, label(s)) for s in line_profile(profile, kernel).hottest()]
