"""The line samples an optimize is given count only for the kernel source they were taken on: the
text's hash is the worker's, an edited kernel's samples are dropped with a note, and a kernel that
only moved down the file takes its lines along."""

from __future__ import annotations

import importlib.util
import json

import pytest
from hot_line_support import hot, line_of, profile
from rewrite_support import FIXTURES
from tritonlens.profiling.worker.launch_source import source_hash
from tritonlens.profiling.worker.messages import LaunchProfile
from tritonlens.profiling.worker.ncu_result import NcuResult
from tritonlens.profiling.worker.reports import KernelProfile, ProfileReport
from tritonlens.rewrite.hot_lines import (
    SampledLines,
    current,
    from_report,
    kernel_source_hash,
    measured,
    read_report,
)

ROW_SUM = (FIXTURES / "hot_row_sum.py").read_text()
KERNEL = "row_sum_kernel"


def _report(text: str, lines, *, tensor_pct: float | None = None, first_launch_lines: bool = True) -> ProfileReport:
    def_line = line_of(text, f"def {KERNEL}(")
    sampled = LaunchProfile(kernel=KERNEL, key="k1", source_hash=kernel_source_hash(text, KERNEL), lines=lines,
                            ncu=NcuResult(tensor_pipe_pct=tensor_pct) if tensor_pct is not None else None)
    plain = LaunchProfile(kernel=KERNEL, key="k0", source_hash=sampled.source_hash)
    launches = [sampled, plain] if first_launch_lines else [plain, sampled]
    return ProfileReport(file="hot_row_sum.py", mode="gpu",
                         kernels=[KernelProfile(name=KERNEL, line=def_line, launches=launches)])


def _lines(text: str) -> object:
    return profile(KERNEL, hot(line_of(text, "total = tl.sum("), 0.5, {"barrier": 300}),
                   hot(line_of(text, "x = tl.load("), 0.3, {"long_sb": 100}, waits_on=[]))


def test_the_text_hash_is_the_one_the_worker_takes_from_the_imported_kernel():
    spec = importlib.util.spec_from_file_location("hot_row_sum_fixture", FIXTURES / "hot_row_sum.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert kernel_source_hash(ROW_SUM, KERNEL) == source_hash(module.row_sum_kernel.fn)
    assert kernel_source_hash(ROW_SUM, "no_such_kernel") is None


def test_samples_of_the_same_source_are_kept_and_follow_their_kernel_down_the_file():
    sampled = from_report(_report(ROW_SUM, _lines(ROW_SUM), tensor_pct=12.5))
    assert [s.kernel for s in sampled] == [KERNEL] and sampled[0].tensor_pipe_pct == 12.5
    kept, notes = current(ROW_SUM, sampled)
    assert notes == [] and kept[KERNEL].lines.lines[0].line == line_of(ROW_SUM, "total = tl.sum(")

    moved = ROW_SUM.replace("import torch\n", "import torch\n\n# two lines added above the kernel\nX = 1\n", 1)
    kept, notes = current(moved, sampled)
    assert notes == []
    assert [s.line for s in kept[KERNEL].lines.lines] == [line_of(moved, "total = tl.sum("),
                                                           line_of(moved, "x = tl.load(")]
    assert kept[KERNEL].def_line == line_of(moved, f"def {KERNEL}(")


def test_samples_of_an_edited_kernel_are_dropped_with_one_note():
    sampled = from_report(_report(ROW_SUM, _lines(ROW_SUM)))
    edited = ROW_SUM.replace("total = tl.sum(x, axis=0)", "total = tl.sum(x * 2.0, axis=0)")
    kept, notes = current(edited, sampled)
    assert kept == {}
    assert notes == [(f"line samples of {KERNEL} ignored: they were taken on another version of its source "
                      "(profile it again with --lines)")]
    gone, notes = current(ROW_SUM.replace(KERNEL, "renamed_kernel"), sampled)
    assert gone == {} and notes == [f"line samples of {KERNEL} ignored: no kernel {KERNEL} in the file"]
    unknown, notes = current(ROW_SUM, [SampledLines(sampled[0].lines, source_hash=None)])
    assert unknown == {} and "another version" in notes[0]


def test_the_first_launch_with_samples_is_taken_and_launches_without_are_not():
    report = _report(ROW_SUM, _lines(ROW_SUM), first_launch_lines=False)
    assert [s.lines.kernel for s in from_report(report)] == [KERNEL]
    empty = _report(ROW_SUM, profile(KERNEL))
    assert from_report(empty) == [] and from_report(_report(ROW_SUM, _lines(ROW_SUM)), kernel="other") == []
    latest = {KERNEL: report.kernels[0]}
    assert [s.kernel for s in measured(ROW_SUM, None, latest.get)] == [KERNEL]
    assert measured("def broken(:\n", None, latest.get) == []


def test_a_profile_report_is_read_from_its_json(tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(_report(ROW_SUM, _lines(ROW_SUM)).to_json()))
    back = from_report(read_report(str(path)))
    assert back[0].lines.lines[0].stalls[0].reason == "barrier"
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="bad.json is not JSON"):
        read_report(str(tmp_path / "bad.json"))
    with pytest.raises(ValueError, match="cannot read"):
        read_report(str(tmp_path / "missing.json"))
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(ValueError, match="expected a JSON object"):
        read_report(str(tmp_path / "list.json"))
