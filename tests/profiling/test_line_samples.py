"""Per-line stall samples: ncu's source page parsed, samples folded onto the kernel's lines, and
the "lines" job's plumbing, on the CPU.

The raw fixtures are the "lines" job's own results for the bundled examples on an H100
(bench/per_line_gpu.py --reports, paths made relative); the fold runs here on them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tritonlens.profiling.ir_line_map import mlir_call_sites, sass_locations
from tritonlens.profiling.line_fold import fold, producer_lines
from tritonlens.profiling.worker import ncu_source
from tritonlens.profiling.worker.line_profile import SassSamples, instruction_kind, stall_text
from tritonlens.profiling.worker.ncu_csv import NcuCsvError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "line_profiles"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _raw(stem: str) -> SassSamples:
    return SassSamples.from_json(json.loads((FIXTURES / "raw" / f"{stem}.json").read_text()))


def _statement(stem: str, line: int) -> str:
    return (EXAMPLES / f"{stem}.py").read_text().splitlines()[line - 1]


# A source page as ncu 2025.3 writes it, cut to three instructions and the columns read.
SASS_VIEW = '''"Kernel Name","add_kernel",
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","stall_long_sb","stall_wait","stall_long_sb (Not Issued)"
"0x7fb7ad7a2800","      LDC R1, c[0x0][0x28]","26","20","0","6","0"
"0x7fb7ad7a2980","@!P0  LDG.E.128 R16, desc[UR4][R20.64]","293","250","0","40","0"
"0x7fb7ad7a2a10","      FADD R12, R12, R16","1,204","1,100","1,150","4","1,100"
"0x7fb7ad7a2a20","      EXIT","0","0","0","0","0"
'''
CUDA_SASS_VIEW = '''"File Path","examples/vector_add.py"
"Function Name","add_kernel"
"Line No","Source","Address","Source","Warp Stall Sampling (All Samples)"
"20","def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):","-","-","26"
"","","0x7fb7ad7a2800","      LDC R1, c[0x0][0x28]","26"
"25","x = tl.load(x_ptr + offsets, mask=mask)","-","-","293"
"","","0x7fb7ad7a2980","@!P0  LDG.E.128 R16, desc[UR4][R20.64]","293"
"27","tl.store(out_ptr + offsets, x + y, mask=mask)","-","-","1204"
"","","...","...","-"
"","","0x7fb7ad7a2a10","      FADD R12, R12, R16","1204"
'''


def test_source_page_gives_each_sampled_instruction_its_offset_stalls_and_innermost_line():
    raw = ncu_source.parse(SASS_VIEW, CUDA_SASS_VIEW)
    assert raw.kernel == "add_kernel"
    assert raw.total_samples == 26 + 293 + 1204
    assert [(i.offset, i.samples, i.line) for i in raw.instructions] == [(0, 26, 20), (0x180, 293, 25), (0x210, 1204, 27)]
    fadd = raw.instructions[-1]
    assert fadd.stalls == {"long_sb": 1150, "wait": 4}  # the "(Not Issued)" twins are not counted twice
    assert fadd.file == "examples/vector_add.py"


def test_a_source_page_without_source_counters_is_refused_by_name():
    with pytest.raises(NcuCsvError, match="SourceCounters"):
        ncu_source.parse_sass('"Kernel Name","k",\n"ID","Metric Name"\n')


def test_instruction_classes_and_stall_words():
    assert instruction_kind("@!P0  LDG.E.128 R16, desc[UR4][R20.64]") == "global load"
    assert instruction_kind("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24") == "tensor core"
    assert instruction_kind("BAR.SYNC.DEFER_BLOCKING 0x0") == "barrier"
    assert instruction_kind("WHATEVER R1") == "other"
    assert stall_text("long_sb") == "waiting on global memory"
    assert stall_text("some_new_reason") == "some new reason"


def test_softmax_samples_land_on_the_reduction_that_waits_for_the_row_load():
    """Triton's tl.max is inlined from standard.py; its samples count at the kernel's line that
    called it, and its long-scoreboard wait names the load it waits for."""
    profile = fold(_raw("softmax"), "examples/softmax.py", source_hash="abc")
    top = profile.lines[0]
    assert "tl.max" in _statement("softmax", top.line)
    assert top.top_reason == "long_sb"
    assert "tl.load" in _statement("softmax", top.waits_on[0])
    assert any(v.startswith("standard.py:") for v in top.via)
    assert top.label() == f"{100 * top.share:.0f}% · waiting on the load on line {top.waits_on[0]}"
    assert profile.unattributed == 0 and profile.source_hash == "abc"
    assert sum(s.samples for s in profile.lines) == profile.total_samples
    shares = [s.share for s in profile.lines]
    assert shares == sorted(shares, reverse=True)


def test_vector_add_time_is_the_store_waiting_on_both_loads():
    profile = fold(_raw("vector_add"), "examples/vector_add.py")
    top = profile.lines[0]
    assert "tl.store" in _statement("vector_add", top.line) and top.share > 0.5
    assert sorted(top.waits_on) == sorted(ln for ln in (25, 26) if "tl.load" in _statement("vector_add", ln))


def test_matmul_time_is_in_the_k_loop():
    profile = fold(_raw("matmul"), "examples/matmul.py")
    source = (EXAMPLES / "matmul.py").read_text().splitlines()
    loop = next(i for i, text in enumerate(source, 1) if text.strip().startswith("for "))
    dot = next(i for i, text in enumerate(source, 1) if "tl.dot" in text)
    hottest = [s.line for s in profile.hottest(3)]
    assert all(loop < ln <= dot for ln in hottest), hottest
    kinds = {k.kind for s in profile.hottest(3) for k in s.instructions}
    assert "tensor core" in kinds


def test_a_kernel_file_under_another_name_still_folds():
    """The Triton cache returns a compile first made from another copy of the same file."""
    here = fold(_raw("softmax"), "examples/softmax.py")
    elsewhere = fold(_raw("softmax"), "/some/checkout/examples/softmax.py")
    assert [(s.line, s.samples) for s in here.lines] == [(s.line, s.samples) for s in elsewhere.lines]


def test_without_a_line_table_ncu_correlation_is_used():
    raw = _raw("vector_add")
    raw.line_table = None
    profile = fold(raw, "examples/vector_add.py")
    assert profile.lines[0].line == fold(_raw("vector_add"), "examples/vector_add.py").lines[0].line
    assert profile.lines[0].waits_on == []  # the producer walk needs the listing


def test_callsite_locations_name_the_kernel_line_of_each_helper_line():
    ttgir = "\n".join([
        '#loc1 = loc("k.py":8:13)',
        '#loc2 = loc("lib/standard.py":216:16)',
        '#loc3 = loc("lib/standard.py":196:12)',
        '#loc4 = loc("x"(#loc1))',
        '#loc5 = loc(callsite(#loc2 at #loc4))',
        '#loc6 = loc(callsite(#loc3 at #loc5))',
    ])
    assert mlir_call_sites(ttgir, "k.py") == {("lib/standard.py", 216): {8}, ("lib/standard.py", 196): {8}}


def test_the_producer_walk_follows_a_wide_load_to_its_line():
    listing = [(0, "LDG.E.128 R16, desc[UR4][R20.64]", 25, None), (16, "LDG.E R30, desc[UR4][R22.64]", 26, None),
               (32, "MOV R2, R3", 27, None), (48, "FADD R12, R19, R30", 27, None)]
    assert producer_lines(listing, 3) == {25, 26}
    assert producer_lines(listing, 2) == set()


def test_sass_locations_keep_the_innermost_line():
    text = '\t//## File "k.py", line 4\n        /*0000*/                   LDC R1, c[0x0][0x28] ;\n' \
           '\t//## File "lib/standard.py", line 170\n        /*0010*/                   FMNMX R3, R2, R3, !PT ;\n'
    assert sass_locations(text) == [(0, "LDC R1, c[0x0][0x28]", "k.py", 4), (16, "FMNMX R3, R2, R3, !PT", "lib/standard.py", 170)]


class _RecordedWorker:
    """Answers each "lines" job with a worker reply recorded on the H100 (or with a failure)."""

    def __init__(self, replies: dict):
        self.replies = replies
        self.jobs = []

    def run(self, job, timeout=None, cancel=None):
        from tritonlens.profiling.worker.messages import Reply

        self.jobs.append(job)
        found = self.replies[job.kernel]
        return Reply(id=job.id, ok=True, result=found) if isinstance(found, dict) else \
            Reply.failure(job.id, "exception", found)


def test_profile_folds_each_kernels_first_launch_and_keeps_a_failure_beside_the_timing():
    from tritonlens.profiling import api
    from tritonlens.profiling.worker.messages import LaunchJob, LaunchProfile
    from tritonlens.profiling.worker.reports import ProfileReport

    softmax = LaunchProfile(kernel="softmax_kernel", key="k1", source_hash="h1", time_ms=0.087)
    other = LaunchProfile(kernel="other_kernel", key="k2", source_hash="h2", time_ms=0.01)
    report = ProfileReport(file=str(EXAMPLES / "softmax.py"), mode="gpu")
    worker = _RecordedWorker({"softmax_kernel": _raw("softmax").to_json(),
                              "other_kernel": "RuntimeError: ncu failed (exit 1): ERR_NVGPUCTRPERM"})
    api._sample_lines(worker, report, {"softmax_kernel": [softmax], "other_kernel": [other]},
                      LaunchJob("bench", path=report.file), 60, None, None)
    assert [(j.kind, j.kernel, j.key) for j in worker.jobs] == [("lines", "softmax_kernel", "k1"), ("lines", "other_kernel", "k2")]
    assert softmax.lines.source_hash == "h1" and "tl.max" in _statement("softmax", softmax.lines.lines[0].line)
    assert softmax.time_ms == 0.087  # the timing stands as it was
    assert other.lines.error.message.endswith("ERR_NVGPUCTRPERM") and other.time_ms == 0.01
    back = LaunchProfile.from_json(json.loads(json.dumps(softmax.to_json())))
    assert back.lines.lines[0].label() == softmax.lines.lines[0].label()


def test_the_lines_job_without_ncu_says_so(tmp_path):
    """Through a real worker process on this machine, which has no Nsight Compute."""
    import shutil

    from tritonlens.profiling.backends import get_backend
    from tritonlens.profiling.worker.messages import LaunchJob

    if shutil.which("ncu"):
        pytest.skip("this machine has ncu")
    reply = get_backend("local", timeout=60).run(
        LaunchJob("lines", id="x", path=str(EXAMPLES / "vector_add.py"), kernel="add_kernel"), timeout=60)
    assert not reply.ok
    assert "ncu (Nsight Compute) is not on PATH" in reply.error.message


def test_profile_cli_prints_the_hottest_lines():
    from tritonlens.profiling.cli import line_samples_text

    profile = fold(_raw("vector_add"), "examples/vector_add.py")
    profile.cost_s = 11.1
    text = line_samples_text(profile)
    assert text[0] == f"  lines ({profile.total_samples} samples, sampling took 11.1 s):"
    assert text[1].startswith(f"    line {profile.lines[0].line}: {profile.lines[0].label()} [arithmetic ")


def test_profile_lines_on_a_cpu_says_nothing_was_sampled():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "tritonlens", "profile", str(EXAMPLES / "vector_add.py"), "--lines"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "--lines samples on a GPU only" in proc.stderr
    assert "lines (" not in proc.stdout


def test_the_tensor_pipe_figure_of_the_sampling_run_reaches_the_rewriters():
    """Measured in the same ncu run as the samples (13.6% for the example matmul on an H100): a
    profile without --ncu still tells the proposers whether the tensor cores are starved."""
    from tritonlens.profiling.worker.messages import LaunchProfile
    from tritonlens.profiling.worker.reports import KernelProfile
    from tritonlens.rewrite.hot_lines import from_kernel

    raw = _raw("matmul")
    raw.tensor_pipe_pct = 13.6
    lines = fold(raw, "examples/matmul.py", source_hash="h")
    assert lines.tensor_pipe_pct == 13.6
    sampled = from_kernel(KernelProfile(name="matmul_kernel", line=22, launches=[
        LaunchProfile(kernel="matmul_kernel", source_hash="h", pct_of_peak=13.0, lines=lines)]))
    assert sampled.tensor_pipe_pct == 13.6 and sampled.roofline_pct == 13.0
