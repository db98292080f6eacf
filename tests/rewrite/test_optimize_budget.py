"""One time budget for the whole optimize: the options object that carries it, the worker that stops
starting candidates past its deadline, config timings cut and named, and a report (never nothing)
when the budget runs out. Real worker processes, Triton's interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from rewrite_support import FIXTURES
from tritonlens.profiling.worker.messages import VerifyCandidate
from tritonlens.rewrite.candidate import Candidate
from tritonlens.rewrite import config_timing
from tritonlens.rewrite.api import OptimizeOptions, OptionsError, optimize_file
from tritonlens.rewrite.llm_client import LLMSettings
from tritonlens.rewrite.options import DEFAULT_BUDGET_S, Budget
from tritonlens.rewrite.verify import Verifier, VerifyError

VADD = (FIXTURES / "vadd.py").read_text()


@pytest.mark.parametrize("kwargs,message", [
    ({"proposers": ("config", "magic")}, "unknown proposer(s) magic"),
    ({"proposers": ()}, "no proposer given"),
    ({"budget_s": -1}, "the budget must be 0 (no limit) or more seconds"),
    ({"rounds": 0}, "rounds must be at least 1"),
])
def test_bad_options_say_which(kwargs, message):
    with pytest.raises(OptionsError) as err:
        OptimizeOptions(**kwargs)
    assert message in str(err.value)


def test_the_budget_is_one_number_and_the_llm_adds_its_own():
    assert OptimizeOptions().effective_budget_s() == DEFAULT_BUDGET_S == 120
    assert OptimizeOptions(proposers="config,rules", budget_s=0).effective_budget_s() is None
    llm = OptimizeOptions(proposers=("config", "llm"), llm=LLMSettings(time_budget_s=600))
    assert llm.effective_budget_s() == 720
    assert OptimizeOptions(proposers=("llm",), llm=LLMSettings(time_budget_s=None)).effective_budget_s() is None


def test_budget_gives_each_job_what_is_left():
    now = [100.0]
    budget = Budget(60, clock=lambda: now[0])
    assert budget.job_timeout(300) == 57 and not budget.spent()  # 3 s kept to stop a worker and report
    now[0] += 50
    assert budget.job_timeout(300) == 7 and budget.job_timeout(4) == 4
    now[0] += 8
    assert budget.spent() and budget.left() == 2
    assert budget.describe() == "58 s of the 60 s budget spent"


def test_a_phase_share_ends_the_budget_early_and_leaves_the_rest_to_the_next():
    now = [0.0]
    budget = Budget(100, clock=lambda: now[0])
    now[0] = 20.0
    with budget.share("rule fixes and transforms", 0.5):  # half of the 80 s left: until 60 s
        assert budget.left() == 40 and budget.job_timeout(300) == 37
        now[0] = 58.0
        assert budget.spent()
        assert budget.describe() == ("the 40 s share of rule fixes and transforms is spent; "
                                     "58 s of the 100 s budget spent")
    assert budget.left() == 42 and not budget.spent()  # the next phase gets the rest
    with budget.share("whatever", 1.0):
        assert budget.left() == 42
    assert Budget(None).left() is None


@pytest.mark.slow
def test_the_originals_check_gives_the_element_size_the_config_search_sizes_tiles_by(tmp_path):
    path = tmp_path / "vadd.py"
    half = VADD.replace("torch.randn(n, generator=gen)", "torch.randn(n, generator=gen).half()")
    assert half != VADD
    path.write_text(half)
    with Verifier(str(path), half, timeout=300) as verifier:
        verifier._run(verifier.job("check", []), fresh=False, required=True)
    assert verifier.elem_bytes == 2


@pytest.mark.slow
def test_a_job_that_cannot_finish_in_what_is_left_is_not_started(tmp_path):
    # cut short it would prove nothing and kill the warm worker the next phase reuses
    path = tmp_path / "vadd.py"
    path.write_text(VADD)
    now = [0.0]
    budget = Budget(1000, clock=lambda: now[0])
    bigger = Candidate("config", "BLOCK_SIZE=128", VADD.replace("BLOCK_SIZE = 64", "BLOCK_SIZE = 128"))
    smaller = Candidate("config", "BLOCK_SIZE=32", VADD.replace("BLOCK_SIZE = 64", "BLOCK_SIZE = 32"))
    with Verifier(str(path), VADD, timeout=300, budget=budget) as verifier:
        [first] = verifier.verify([bigger], isolate=False)
        assert first.evidence["correct"], first.reason
        assert verifier._took[("check", True)], "a finished job's time is kept"
        verifier._took[("check", True)] = [30.0]  # as if a check took 30 s here (at real size, say)
        now[0] = 1000 - 20.0  # 20 s left: more than MIN_JOB_S, less than that with the 3 s closing
        [second] = verifier.verify([smaller], isolate=False)
    assert second.reason.startswith("not run: ") and "job here has taken" in second.reason, second.reason


@pytest.mark.slow
def test_the_worker_starts_no_candidate_past_its_deadline(tmp_path):
    path = tmp_path / "vadd.py"
    path.write_text(VADD)
    with Verifier(str(path), VADD, timeout=300) as verifier:
        job = verifier.job("check", [VerifyCandidate("0", VADD.replace("BLOCK_SIZE = 64", "BLOCK_SIZE = 128")),
                                     VerifyCandidate("1", VADD.replace("BLOCK_SIZE = 64", "BLOCK_SIZE = 32"))])
        job.deadline_s = 0.0
        result = verifier._run(job, fresh=False)
    assert [ev.error.type for ev in result.candidates] == ["budget", "budget"]
    assert result.candidates[0].error.message == "not run: the optimize's time budget left this job 0 s"


@pytest.mark.slow
def test_a_config_timing_that_runs_long_is_cut_and_named(tmp_path, monkeypatch):
    monkeypatch.setattr(config_timing, "BATCH", 1)
    monkeypatch.setattr(config_timing, "PER_VARIANT_S", 4.0)
    monkeypatch.setattr(config_timing, "SETUP_S", 20.0)
    path = tmp_path / "vadd.py"
    path.write_text(VADD)
    slow = VADD.replace("    out = torch.empty_like(x)\n", "    import time\n    time.sleep(120)\n    out = torch.empty_like(x)\n")
    fine = VADD.replace("BLOCK_SIZE = 64", "BLOCK_SIZE = 128")
    budget = Budget(300)
    with Verifier(str(path), VADD, timeout=300, budget=budget) as verifier:
        results = config_timing.budgeted_tuner(verifier, budget)([fine, slow, fine])
    assert [r["id"] for r in results] == [0, 1, 2]
    assert results[0]["ok"] and results[2]["ok"]  # the search goes on after the cut
    # a warm worker gives a variant PER_VARIANT_S; the killed one's successor gets SETUP_S more
    assert not results[1]["ok"] and results[1]["reason"] == "cut after 4 s"
    assert budget.cut == ["config timing 2 of 3 cut after 4 s"]


@pytest.mark.slow
def test_a_spent_budget_still_returns_a_report_that_says_so(tmp_path):
    path = tmp_path / "vadd.py"
    path.write_text(VADD)
    report = optimize_file(str(path), OptimizeOptions(proposers=("config",), budget_s=1))
    assert report.candidates, "the proposals are listed even when none could be run"
    assert all(c.reason.startswith("not run: the time budget is spent") for c in report.candidates)
    assert report.budget_s == 1 and report.seconds is not None
    assert any(n.startswith(f"{len(report.candidates)} candidate") and "not run within the budget" in n
               for n in report.notes)
    assert any("the best rewrite proven so far is kept" in n for n in report.notes)


@pytest.mark.slow
def test_cli_budget_flag_reaches_the_report(tmp_path):
    path = tmp_path / "vadd.py"
    path.write_text(VADD)
    proc = subprocess.run([sys.executable, "-m", "tritonlens", "optimize", str(path), "--proposers", "config",
                           "--budget", "1", "--format", "json"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["budget_s"] == 1
    bad = subprocess.run([sys.executable, "-m", "tritonlens", "optimize", str(path), "--budget", "-5"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "the budget must be 0 (no limit) or more seconds" in bad.stderr


def test_candidate_reasons_of_an_unrun_batch_are_not_called_failures():
    # the verdict's own words reach the summary's refusal kinds unchanged
    from tritonlens.profiling.worker.reports import CandidateReport, OptimizeReport
    from tritonlens.rewrite.api import summary

    cand = CandidateReport(proposer="config", title="config BLOCK=128", accepted=False,
                           reason="not run: the time budget is spent (2 s of the 1 s budget spent)",
                           kernel="add_kernel", quick_fix_title="", speedup=None, max_rel_error=None, diff="")
    report = OptimizeReport(path="x.py", mode="gpu", candidates=[cand])
    assert summary(report) == "no faster rewrite (1 tried: 1 not run)"


@pytest.mark.slow
def test_a_knob_that_cannot_move_is_named_in_the_report(tmp_path):
    path = tmp_path / "rowsum.py"
    path.write_text((FIXTURES / "knob_unmovable.py").read_text())
    report = optimize_file(str(path), OptimizeOptions(proposers=("config",), budget_s=0))
    assert "config search of rowsum_kernel left BLOCK_M: grid passed in as a parameter" in report.notes
    assert report.candidates and all("BLOCK_M=16" in (c.diff or "") or "BLOCK_M" not in (c.diff or "")
                                     for c in report.candidates)


class _FaultingGPU:
    """The verifier as the config search sees it on a GPU where one variant faults. A CUDA fault
    cannot happen on a machine without a GPU, and in the interpreter a candidate's error is its
    own; what is under test is how the search schedules the batches around a worker that died."""

    mode, device = "gpu", "H100"

    def __init__(self, faulty: str):
        self.faulty, self.jobs = faulty, []

    def precompile(self, sources, quick, cancel=None, limit=None):
        return None

    def tune(self, batch, cancel=None, limit=None):
        self.jobs.append(list(batch))
        if self.faulty in batch:
            raise VerifyError("cuda: AcceleratorError: CUDA error: an illegal memory access was encountered")
        return [{"id": i, "ok": True, "ms": float(len(s)), "reason": None} for i, s in enumerate(batch)]


def test_a_variant_that_faults_costs_only_itself_not_its_batch():
    gpu = _FaultingGPU(faulty="b")
    results = config_timing.budgeted_tuner(gpu, Budget(300))(["a", "b", "cc", "ddd"])
    assert gpu.jobs == [["a", "b"], ["a"], ["b"], ["cc", "ddd"]]
    assert [(r["id"], r["ok"], r["ms"]) for r in results] == [(0, True, 1.0), (1, False, None), (2, True, 2.0),
                                                               (3, True, 3.0)]
    assert results[1]["reason"].startswith("not timed: cuda: AcceleratorError")
