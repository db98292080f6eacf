"""The one line an optimize ends with (editor notification, hover, report, CLI), fed reports
directly: timed outcomes need a GPU, so their verdicts are written here as the verifier words them."""

from __future__ import annotations

from tritonlens.profiling.worker.reports import CandidateReport, OptimizeReport
from tritonlens.rewrite.api import best_of, proven, summary
from tritonlens.rewrite.candidate import NOT_TIMED
from tritonlens.rewrite.cli import render_text


def cand(title: str, accepted: bool, reason: str, speedup: float | None = None, checks: int = 12) -> CandidateReport:
    return CandidateReport(proposer="config", title=title, accepted=accepted, reason=reason, speedup=speedup,
                           source="def k(): pass\n" if accepted else None, more={"checks": checks})


def report(mode: str, *candidates: CandidateReport, cancelled: bool = False) -> OptimizeReport:
    cands = list(candidates)
    return OptimizeReport(path="/x/k.py", kernel="k", mode=mode, candidates=cands, cancelled=cancelled,
                          best=best_of([c for c in cands if c.accepted]))


def test_a_proven_rewrite_is_named_with_its_speedup_and_checks():
    r = report("gpu", cand("autotune 4 configs", True, "correct on 3 seeds × 4 shapes; 1.38x faster (…)", 1.376),
               cand("BLOCK=1024", True, "correct on 3 seeds × 4 shapes; 2.5x faster (…)", 2.5, checks=15),
               cand("BLOCK=64", False, "slower: 0.80x (1.2 ms vs 1 ms)"))
    assert proven(r.best) and r.best.title == "BLOCK=1024"
    assert summary(r) == "2.5x faster (best of 3 rewrites), verified on 15 checks"


def test_without_timings_correct_rewrites_are_not_called_faster():
    r = report("interpreter", cand("autotune 4 configs", True, f"{NOT_TIMED}; checked on 3 seeds × 4 shapes"),
               cand("BLOCK=64", False, "compile error: out of resources"))
    assert not proven(r.best)  # the report's best, but nothing proves it faster
    assert summary(r) == f"{NOT_TIMED} (1 of 2 rewrites correct)"
    assert "faster (best of" not in summary(r)


def test_nothing_offered_says_why_in_counts():
    gpu = report("gpu", cand("a", False, "slower: 0.80x (1.2 ms vs 1 ms)"),
                 cand("b", False, "not faster: 1.031x is below the 1.05x bar"),
                 cand("c", False, "1.08x is within the A/B noise (lower-quartile ratio 0.990x)"),
                 cand("d", False, "not faster: 1.01x is below the 1.05x bar"),
                 cand("e", False, "fails only on the ragged shape (a missing mask?) 512, 512: wrong result"))
    assert summary(gpu) == "no faster rewrite (5 tried: 2 not faster, 1 slower, 1 within noise, 1 wrong result)"
    cpu = report("interpreter", cand("a", False, "syntax error: invalid syntax"),
                 cand("b", False, "torch fallback: the candidate launched no Triton kernel"))
    assert summary(cpu) == "no correct rewrite (2 tried: 1 did not compile, 1 torch fallback)"
    assert summary(report("interpreter")) == "no rewrite to try"
    assert summary(report("gpu", cand("a", False, "cancelled"), cancelled=True)) == "cancelled after 1 rewrite"


def test_the_cli_ends_with_the_same_summary():
    r = report("interpreter", cand("autotune 4 configs", True, f"{NOT_TIMED}; checked on 3 seeds × 4 shapes"))
    r.device = "cpu (triton interpreter)"
    assert render_text(r).splitlines()[-1] == f"result: {summary(r)}"


def test_apply_writes_only_a_rewrite_proven_faster(tmp_path, capsys):
    """`optimize --apply` on the CPU: the config rewrite is correct but untimed, so the file stays as
    it is and the command says so (it used to write the first correct rewrite)."""
    from pathlib import Path

    from tritonlens.cli import main

    path = tmp_path / "vector_add.py"
    original = (Path(__file__).resolve().parents[2] / "examples" / "vector_add.py").read_text()
    path.write_text(original)
    status = main(["optimize", str(path), "--proposers", "config", "--apply"])
    out = capsys.readouterr()
    assert status == 0, out.err
    assert f"result: {NOT_TIMED}" in out.out
    assert "left as it is" in out.err
    assert path.read_text() == original
