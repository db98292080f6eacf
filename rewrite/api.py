"""`optimize_file`: the one entry point the CLI and the language server share.

    options = OptimizeOptions(proposers=("config", "rules", "llm"), budget_s=600,
                              llm={"baseUrl": "http://127.0.0.1:8000/v1", "model": "m"})
    result = optimize_file("kern.py", options, progress=lambda message, fraction: ..., cancel=threading.Event())

Everything that runs a kernel runs in a worker process (the backend's); this process only parses,
proposes and decides. The result is a reports.OptimizeReport.
"""

from __future__ import annotations

import os
import threading

from tritonlens.analysis.python_ast import parse as parse_python
from tritonlens.profiling.worker.reports import (
    CandidateReport,
    OptimizeReport,
    ProfileReport,
)

from .candidate import NOT_TIMED, Verdict, unified_diff
from .context import ProposalContext
from .hot_line_hints import favour, hints_for
from .hot_line_hints import note as hint_note
from .hot_lines import SampledLines, from_report
from .hot_lines import current as current_lines
from .hot_lines import measured as measured_lines
from .llm_loop import MIN_GAIN
from .options import ALL_PROPOSERS, RULES_SHARE, Budget, OptimizeOptions, OptionsError
from .proposal_guard import propose_and_verify, verified_by_proposer
from .report_notes import budget_notes, small_cases_note
from .verify import Verifier, VerifyError

__all__ = ["ALL_PROPOSERS", "OptimizeError", "OptimizeOptions", "OptionsError", "SampledLines", "best_of",
           "measured_lines", "optimize_file", "proven", "summary"]


class OptimizeError(Exception):
    """Bad input or an unusable original (the message says which)."""


def _summarise_refusals(verdicts: list[Verdict]) -> str | None:
    refused = [v for v in verdicts if not v.accepted]
    if not refused:
        return None
    reasons = "; ".join(f"{v.candidate.title}: {v.reason}" for v in refused[:3])
    more = f"; and {len(refused) - 3} more" if len(refused) > 3 else ""
    return f"{len(refused)} candidate{'s' if len(refused) != 1 else ''} refused: {reasons}{more}"


def best_of(accepted: list[CandidateReport]) -> CandidateReport | None:
    """The fastest accepted candidate. Among the LLM's rewrites a gain under MIN_GAIN is timing
    noise, as the loop judged when it stopped, so the first LLM rewrite that close stands, and the
    report names the rewrite the loop kept. Untimed: the first."""
    measured = [c for c in accepted if c.speedup]
    if not measured:
        return accepted[0] if accepted else None
    top = max(measured, key=lambda c: c.speedup)
    if top.proposer != "llm":
        return top
    return next(c for c in measured if c.proposer == "llm" and c.speedup * (1 + MIN_GAIN) >= top.speedup)


def proven(c: CandidateReport | None) -> bool:
    """Timed and faster: the verifier accepts a timed candidate only when its speed beat the noise."""
    return c is not None and c.accepted and c.speedup is not None


# Why a candidate was refused, in a word or two, from the verdict's own wording (rewrite/verify.py).
_REFUSAL_KINDS = (("not run:", "not run"), ("slower", "slower"), ("not faster", "not faster"), ("noise", "within noise"),
                  ("torch fallback", "torch fallback"), ("race:", "racy"), ("wrong result", "wrong result"),
                  ("fails", "wrong result"), ("invalid output", "wrong result"), ("syntax error", "did not compile"),
                  ("compile error", "did not compile"), ("import failed", "did not compile"),
                  ("refused before running", "refused unrun"), ("not checked", "not checked"),
                  ("out-of-bounds", "out of bounds"), ("runtime error", "crashed"), ("while timing", "crashed"), ("too few timing", "not timed"),
                  ("physical minimum", "implausible"), ("reproduce", "implausible"), ("extra checks", "implausible"),
                  ("the same rewrite", "duplicate"), ("unusable", "unusable reply"))


def _refusal_kind(reason: str) -> str:
    return next((kind for key, kind in _REFUSAL_KINDS if key in reason), "failed")


def summary(report: OptimizeReport) -> str:
    """The optimize outcome in one line, as the editor's notification and the CLI give it:
    "2.5x faster (best of 9 rewrites), verified on 12 checks", or why nothing is offered."""
    tried = len(report.candidates)
    best = report.best
    if proven(best):
        checks = best.more.get("checks")
        verified = f", verified on {checks} checks" if checks else ""
        return f"{best.speedup:.3g}x faster (best of {tried} rewrite{'s' if tried != 1 else ''}){verified}"
    correct = sum(1 for c in report.candidates if c.accepted)
    if correct:
        return f"{NOT_TIMED} ({correct} of {tried} rewrite{'s' if tried != 1 else ''} correct)"
    if report.cancelled:
        return f"cancelled after {tried} rewrite{'s' if tried != 1 else ''}"
    if not tried:
        return "no rewrite to try"
    kinds: dict[str, int] = {}
    for c in report.candidates:
        kind = _refusal_kind(c.reason)
        kinds[kind] = kinds.get(kind, 0) + 1
    why = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    return f"{'no faster rewrite' if report.mode == 'gpu' else 'no correct rewrite'} ({tried} tried: {why})"


def _candidate_report(v: Verdict, original: str, path: str) -> CandidateReport:
    ev = v.evidence or {}
    more = {"description": v.candidate.description, "mode": v.mode,
            "checks": v.checks, "seeds": v.seeds, "shapes": v.shapes, "orig_ms": v.orig_ms, "cand_ms": v.cand_ms,
            "evidence": {k: ev.get(k) for k in ("checks", "launches", "calls", "ops_added", "stability",
                                                "ragged_sizes", "ragged_note", "timing", "error", "static",
                                                "llm_error", "notes", "ranges_skipped", "ghost_ran",
                                                "ghost_failure", "out_bytes") if ev.get(k) is not None},
            "meta": dict(v.candidate.meta)}  # an LLM reply whole, with its finish_reason and usage
    if v.candidate.meta.get("favoured"):
        more["favoured"] = v.candidate.meta["favoured"]  # why the kernel's hot lines put it first
    return CandidateReport(proposer=v.candidate.proposer, title=v.candidate.title, accepted=v.accepted,
                           reason=v.reason, kernel=v.candidate.kernel, quick_fix_title=v.quick_fix_title(),
                           speedup=v.speedup, max_rel_error=v.max_rel_error,
                           diff=unified_diff(original, v.candidate.source, os.path.basename(path)),
                           source=v.candidate.source if v.accepted else None, more=more)


def optimize_file(path: str, options: OptimizeOptions | None = None, *, text: str | None = None,
                  progress=None, cancel: threading.Event | None = None,
                  profile: ProfileReport | None = None,
                  hot_lines: list[SampledLines] | tuple[SampledLines, ...] = ()) -> OptimizeReport:
    """Propose, verify and rank rewrites of `path` (its current `text`, if the editor has one),
    as `options` says, within its one time budget.

    `hot_lines`: kernels' per-line stall samples (rewrite/hot_lines.py; by default those in
    `profile`); those of the kernel's current source order the proposers' candidates and go into
    the LLM's prompt, others are dropped with a note.

    progress(message: str, fraction: float | None) is called as work advances; setting `cancel`
    stops at the next candidate boundary (the worker job in flight is killed).
    """
    options = options or OptimizeOptions()
    path = os.path.abspath(path)
    if text is None:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise OptimizeError(f"cannot read {path}: {exc}") from exc
    wanted, kernel = options.proposers, options.kernel
    try:
        tree = parse_python(text)
    except SyntaxError as exc:
        raise OptimizeError(f"{os.path.basename(path)} does not parse: line {exc.lineno}: {exc.msg}") from exc
    from .edits import kernels as kernel_defs

    names = [k.name for k in kernel_defs(tree)]
    if not names:
        raise OptimizeError(f"{os.path.basename(path)} defines no @triton.jit kernel")
    if kernel is not None and kernel not in names:
        raise OptimizeError(f"no kernel named {kernel!r} in {os.path.basename(path)} (kernels: {', '.join(names)})")
    llm = None
    if "llm" in wanted:
        if not options.llm:
            raise OptimizeError("the llm proposer needs settings: --llm-base-url / --llm-model (or the llm setting)")
        llm = _llm_settings(options.llm)  # bad settings fail here, before any work
        options = options.with_(llm=llm)
    budget = Budget(options.effective_budget_s())

    def say(message: str, fraction: float | None = None):
        if progress is not None:
            try:
                progress(message, fraction)
            except Exception:
                pass

    def cancelled() -> bool:
        return cancel is not None and cancel.is_set()

    from tritonlens.analysis.engine import Analyzer

    analysis = Analyzer().analyze(text, path)
    notes: list[str] = []
    verifier = Verifier(path, text, harness=options.harness, python=options.python, backend=options.backend,
                        timeout=options.job_timeout_s, seeds=options.seeds, timing=options.timing,
                        parallel=options.parallel, budget=budget)
    verdicts: list[Verdict] = []
    try:
        say("checking the original in the worker", 0.02)
        try:
            verifier._run(verifier.job("check", []), fresh=False, cancel=cancel, required=True)
        except VerifyError as exc:
            raise OptimizeError(f"the original cannot be verified: {exc}") from exc
        if verifier.baseline_ms is not None:
            say(f"original checked: {verifier.baseline_ms:.4g} ms a call", 0.05)
        device = {"name": verifier.device, "mode": verifier.mode}
        # the profile feeds the LLM's prompt only; a run of its own costs 10-40 s of the budget
        if profile is None and "llm" in wanted and verifier.mode == "gpu" and not budget.spent():
            profile = _try_profile(path, options, budget, notes)
        sampled = list(hot_lines) or (from_report(profile) if profile is not None else [])
        hot, stale = current_lines(text, [s for s in sampled if kernel in (None, s.kernel)])
        notes += stale
        hints = {name: hints_for(text, name, s.lines, s.tensor_pipe_pct, s.roofline_pct) for name, s in hot.items()}
        notes += [hint_note(name, hints[name], s.lines, s.roofline_pct) for name, s in hot.items()]
        ctx = ProposalContext(path, text, kernel=kernel, analysis=analysis, profile=profile, device=device,
                              elem_bytes=verifier.elem_bytes, hot_lines=hot, hints=hints)

        def verify_batch(what: str, fraction: float):
            def verify(cands):
                say(f"verifying {len(cands)} {what}(s)", fraction)
                return verifier.verify(cands, isolate=False, cancel=cancel,
                                       progress=lambda v: say(f"{v.candidate.title}: {'accepted' if v.accepted else 'refused'}"))
            return verify

        base_text, base_title = None, None
        if "rules" in wanted and not cancelled():
            from . import propose_rules

            say("proposing rule fixes and transforms", 0.08)
            # the config search finds most wins and is cheap to verify: it keeps at least half
            with budget.share("rule fixes and transforms", RULES_SHARE if "config" in wanted else 1.0):
                rv = propose_and_verify("rules", lambda: favour(propose_rules.propose(ctx), ctx.hints),
                                        verify_batch("rule fix", 0.1), text)
            verdicts += rv
            ctx.history += rv
            # structural rewrites that proved correct (fast or not yet: their tiles are still naive)
            # are a base for the config search, which may be what makes them pay off
            structural = [v for v in rv if (v.evidence or {}).get("correct")
                          and (v.candidate.meta.get("structural")
                               or set(v.candidate.meta.get("codes", ())) & {"TL010", "TL011"})]
            if structural:
                top = max(structural, key=lambda v: v.speedup or 0.0)
                base_text, base_title = top.candidate.source, top.candidate.title
        if "config" in wanted and not cancelled():
            from . import propose_config
            from .config_timing import budgeted_tuner

            say("searching launch configurations", 0.35)
            tuner = budgeted_tuner(verifier, budget, say, cancel) if verifier.mode == "gpu" else None

            def configs():
                cands = propose_config.propose(ctx, tuner=tuner)
                if base_text is not None and not budget.spent():
                    cands += propose_config.propose(ctx, tuner=tuner, base=base_text, base_title=base_title)
                return favour(cands, ctx.hints)

            cv = propose_and_verify("config", configs, verify_batch("config candidate", 0.4), text)
            verdicts += cv
            ctx.history += cv
            # a knob the search could not move is said, never a crash: "BLOCK_M: grid passed in as a parameter"
            notes += list(dict.fromkeys(f"config search of {v.candidate.kernel} left {u}"
                                        for v in cv for u in v.candidate.meta.get("unmovable", ())))
        if "llm" in wanted and not cancelled() and not budget.spent():
            verdicts += verified_by_proposer(
                "llm", lambda: _llm_rounds(ctx, verifier, llm, options, budget, notes, say, cancel), text)
    finally:
        verifier.close()
    say("done", 1.0)
    notes += budget_notes(budget, verdicts)
    size_note = small_cases_note(verifier)
    if size_note:
        notes.append(size_note)
    candidates = [_candidate_report(v, text, path) for v in verdicts]
    accepted = [c for c in candidates if c.accepted]
    best = best_of(accepted)
    return OptimizeReport(path=path, kernel=kernel or (names[0] if len(names) == 1 else ",".join(names)),
                          device=verifier.device, mode=verifier.mode, baseline_ms=verifier.baseline_ms,
                          cancelled=cancelled(), candidates=candidates, best=best,
                          refusals=_summarise_refusals(verdicts), notes=notes, time_line=verifier.time_line(),
                          budget_s=budget.seconds, seconds=round(budget.elapsed(), 1))


def _llm_settings(llm):
    from .llm_client import LLMSettings

    if llm is None or isinstance(llm, LLMSettings):
        return llm
    try:
        return LLMSettings.from_dict(llm)
    except (TypeError, ValueError) as exc:
        raise OptimizeError(f"bad llm settings: {exc}") from exc


def _llm_rounds(ctx, verifier, settings, options: OptimizeOptions, budget: Budget, notes, say,
                cancel) -> list[Verdict]:
    """The LLM loop on the verified original; its transcript and best rewrite go beside the file."""
    from dataclasses import replace

    from .llm_figures import BestFigures
    from .llm_loop import LLMProposer
    from .llm_transcript import Transcript

    left = budget.left()
    if left is not None and (settings.time_budget_s is None or settings.time_budget_s > left):
        settings = replace(settings, time_budget_s=left)  # the loop's own limit never outlasts the optimize's
    rounds, kernel = options.rounds, options.kernel
    say(f"asking {settings.model} for rewrites ({settings.candidates} per round, up to {rounds} rounds)", 0.7)
    transcript = Transcript(ctx.path, settings)
    figures = BestFigures(transcript.sibling(".best.py"), kernel=kernel, gpu=verifier.mode == "gpu",
                          backend=options.backend, python=options.python, cancel=cancel,
                          timeout=budget.job_timeout(verifier.timeout))
    run = LLMProposer(settings).run(
        ctx, lambda cs: verifier.verify(cs, isolate=True, cancel=cancel), rounds=rounds, kernel=kernel,
        progress=lambda m: say(m), cancel=cancel, figures=figures, transcript=transcript)
    notes += run.notes
    return run.verdicts


def _try_profile(path, options: OptimizeOptions, budget: Budget, notes) -> ProfileReport | None:
    from tritonlens.profiling import api as profiling_api

    try:
        return profiling_api.profile_file(path, kernel=options.kernel, backend=options.backend,
                                          python=options.python, harness=options.harness,
                                          timeout=budget.job_timeout(min(120.0, options.job_timeout_s)))
    except Exception as exc:  # the profile only enriches prompts and config choices
        notes.append(f"profile unavailable: {type(exc).__name__}: {exc}")
        return None
