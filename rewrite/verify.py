"""The verifier, client side: screen statically, run in the worker, decide from the evidence.

Nothing here executes a candidate: the worker job (profiling/worker/job_verify.py) does, in a
separate process. The rules that accept or refuse are pure functions of the evidence
(rewrite/verdict_rules.py).
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from tritonlens.profiling.worker.messages import (
    Evidence,
    MessageError,
    VerifyCandidate,
    VerifyJob,
    VerifyResult,
)

from .candidate import Candidate, Verdict
from .options import CLOSING_S

PRECOMPILE_S = 60.0  # a precompile job's limit: its threads compile a batch's kernels in about the longest one's time
from .static_check import screen
from .verdict_rules import (  # noqa: F401 (the verifier's rules, named where tests and benches look)
    DEFAULT_TIMING,
    MIN_SPEEDUP,
    SUSPICIOUS_SPEEDUP,
    decide,
    judge_speed,
    phase_line,
    physical_floor,
)


class VerifyError(Exception):
    """The verification could not run at all (no harness, original broken, worker died)."""


class Verifier:
    """Verifies candidates for one file. `backend`: "local" | "ssh://…" | "ray" | "ray://…".

    isolate=True (the default for untrusted proposers) gives each candidate a fresh worker process
    on the local backend, so one candidate's side effects cannot reach the next one's run.
    """

    def __init__(self, path: str, text: str, harness: str | None = None, python: str | None = None,
                 backend: str = "local", timeout: float = 300, seeds: int = 3, timing: dict | None = None,
                 parallel: int = 1, budget=None):
        from tritonlens.profiling.api import import_folders
        from tritonlens.profiling.launch_records import records_for

        self.path = os.path.abspath(path)
        self.text = text
        self.name = _module_name(path)
        self.harness = harness
        # the cases when the file has no tritonlens_cases(): the worker decides, they travel along
        self.records = [] if harness else records_for(self.path)
        self.source: str | None = None  # where the worker took the cases from
        self.sys_path = import_folders(self.path)
        self.python = python
        self.backend_spec = backend or "local"
        self.timeout = timeout
        self.seeds = max(3, int(seeds))
        self.timing = dict(DEFAULT_TIMING if timing is None else timing)
        self.parallel = max(1, int(parallel))
        self._shared = None
        self._lock = threading.Lock()
        self.mode: str | None = None
        self.device: str | None = None
        self.baseline_ms: float | None = None
        self._took: dict[tuple, list[float]] = {}  # seconds of finished jobs by (action, with candidates)
        self.elem_bytes: int | None = None  # the timed case's floating-point element size, from the original's check
        self.n_cases: int | None = None
        self.real_size: int | None = None  # the job's: from how many elements a case is checked on one seed
        self.phases: dict[str, float] = {}  # worker seconds by phase, summed over this verifier's jobs
        self.budget = budget  # options.Budget: the optimize's one clock, which every job keeps

    # -- backends --------------------------------------------------------------------------
    def _backend(self, fresh: bool):
        from tritonlens.profiling.backends import make_backend

        if fresh:
            return make_backend(self.backend_spec, python=self.python, timeout=self.timeout)
        with self._lock:
            if self._shared is None:
                self._shared = make_backend(self.backend_spec, python=self.python, timeout=self.timeout)
            return self._shared

    def close(self):
        with self._lock:
            if self._shared is not None:
                self._shared.close()
                self._shared = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def job(self, action: str, candidates: list[VerifyCandidate], timing: dict | None | str = "default",
            tune: dict | None = None) -> VerifyJob:
        return VerifyJob("verify", action=action, name=self.name, original=self.text, path=self.path,
                         origin_dir=os.path.dirname(self.path), harness=self.harness, seeds=self.seeds,
                         candidates=candidates, timing=self.timing if timing == "default" else timing, tune=tune,
                         records=self.records or None, sys_path=self.sys_path, real_size=self.real_size)

    def _run(self, job: VerifyJob, fresh: bool, cancel=None, limit: float | None = None,
             required: bool = False) -> VerifyResult:
        """One worker job. `required`: the original's own check, which runs whatever the budget left."""
        if not self.harness:
            from tritonlens.profiling.api import missing_cases

            missing = missing_cases(self.path, self.text, zero_config=False)
            if missing:
                raise VerifyError(missing)
        timeout = self.timeout if limit is None else min(self.timeout, limit)
        kind = (job.action, bool(job.candidates))
        if self.budget is not None:
            if self.budget.spent() and not required:
                raise VerifyError(f"not run: the time budget is spent ({self.budget.describe()})")
            quickest = min(self._took.get(kind, ()), default=None)
            left = self.budget.left()
            if not required and quickest is not None and left is not None and left - CLOSING_S < quickest:
                # a job cut short proves nothing and kills the warm worker the next phase would reuse
                raise VerifyError(f"not run: {left:.0f} s of the budget left, and a {job.action} job here has "
                                  f"taken {quickest:.0f} s or more")
            timeout = max(self.budget.job_timeout(timeout), min(timeout, 30.0) if required else 0.0)
            # the worker stops starting candidates in time to answer with those it finished
            job.deadline_s = max(1.0, timeout - min(30.0, timeout / 2))
        if job.action == "precompile":  # it answers as soon as it stops waiting on the compiles
            job.deadline_s = max(1.0, timeout - 5.0)
        backend = self._backend(fresh)
        started = time.monotonic()
        try:
            reply = backend.run(job, timeout=timeout, cancel=cancel)
        finally:
            if fresh:
                backend.close()
        if not reply.ok:
            raise VerifyError(str(reply.error) if reply.error else "error: worker failed")
        with self._lock:
            self._took.setdefault(kind, []).append(time.monotonic() - started)
        try:
            result = VerifyResult.from_json(reply.result)
        except MessageError as exc:
            raise VerifyError(f"protocol: the worker's verify result is malformed: {exc}") from exc
        self.mode = result.mode
        self.device = result.device or self.device
        self.n_cases = result.cases
        self.source = result.source or self.source
        if result.baseline_ms is not None:
            self.baseline_ms = result.baseline_ms
        if result.elem_bytes is not None:
            self.elem_bytes = result.elem_bytes
        if result.phases is not None:
            with self._lock:
                for name, seconds in result.phases.to_json().items():
                    self.phases[name] = self.phases.get(name, 0.0) + float(seconds)
        return result

    def time_line(self) -> str | None:
        """Where the worker's time went, over every job this verifier ran (phase_line)."""
        return phase_line(self.phases) if self.phases else None

    # -- public ----------------------------------------------------------------------------
    def verify(self, candidates: list[Candidate], isolate: bool = True, cancel: threading.Event | None = None,
               progress=None) -> list[Verdict]:
        """One verdict per candidate, in order. Static refusals never reach the worker."""
        verdicts: list[Verdict | None] = [None] * len(candidates)
        runnable = []
        for i, cand in enumerate(candidates):
            problems = screen(self.text, cand.source)
            if problems:
                syntax = problems[0].startswith("syntax error")
                verdicts[i] = Verdict(cand, False, problems[0] if syntax else "refused before running: " + "; ".join(problems[:4]),
                                      mode="static", evidence={"static": problems})
            else:
                runnable.append(i)

        def run_group(group: list[int], fresh: bool) -> None:
            if cancel is not None and cancel.is_set():
                return
            try:
                items = [VerifyCandidate(str(i), candidates[i].source) for i in group]
                result = self._run(self.job("check", items), fresh=fresh, cancel=cancel)
            except VerifyError as exc:
                text = str(exc)
                if len(group) > 1 and not text.startswith(("timeout", "cancelled", "not run:")):
                    for i in group:  # find the one that broke the batch
                        run_group([i], True)
                    return
                why = text if text.startswith("not run:") else f"verification failed: {text}"
                for i in group:
                    verdicts[i] = Verdict(candidates[i], False, why, mode=self.mode or "unknown",
                                          evidence={"error": text})
                return
            for ev in result.candidates:
                i = int(ev.id)
                verdicts[i] = self._verdict(candidates[i], ev, result)
                if progress:
                    progress(verdicts[i])

        if not isolate and len(runnable) > 1:  # our own candidates: compile them all at once first
            limit = self.budget.job_timeout(PRECOMPILE_S) if self.budget is not None else PRECOMPILE_S
            self.precompile([candidates[i].source for i in runnable], quick=False, cancel=cancel, limit=limit)
        if isolate:
            groups, fresh = [[i] for i in runnable], True
        elif self.parallel == 1 or len(runnable) <= 1:
            # one job a candidate in the one warm worker (its inputs and references stay cached): a
            # candidate that runs past the budget loses only itself, not those already checked
            groups, fresh = [[i] for i in runnable], False
        else:  # trusted candidates, split over `parallel` worker processes
            groups, fresh = [runnable[k::self.parallel] for k in range(self.parallel)], True
            groups = [g for g in groups if g]
        if len(groups) > 1 and self.parallel > 1:
            with ThreadPoolExecutor(min(self.parallel, len(groups))) as pool:
                list(pool.map(lambda g: run_group(g, fresh), groups))
        else:
            for g in groups:
                run_group(g, fresh)
        for i, v in enumerate(verdicts):
            if v is None:
                verdicts[i] = Verdict(candidates[i], False, "cancelled" if cancel is not None and cancel.is_set()
                                      else "not verified", mode=self.mode or "unknown")
        return verdicts  # type: ignore[return-value]

    def _verdict(self, cand: Candidate, ev: Evidence, result: VerifyResult) -> Verdict:
        d = decide(ev, result.mode, result.cases, result.seeds, source=result.source, device=result.device)
        if d["accepted"] and d.get("suspicious"):
            d = self._extra_checks(cand, d)
        evidence = {**ev.to_json(), "correct": bool(d.get("correct"))}
        return Verdict(cand, d["accepted"], d["reason"], mode=result.mode, speedup=d.get("speedup"),
                       max_rel_error=d.get("max_rel_error"), checks=d["checks"], seeds=d["seeds"],
                       shapes=d["shapes"], orig_ms=d.get("orig_ms"), cand_ms=d.get("cand_ms"),
                       device=result.device, evidence=evidence)

    def _extra_checks(self, cand: Candidate, d: dict) -> dict:
        """> 10x is more often a bug than a breakthrough: more seeds, fresh timing, agreement."""
        saved = self.seeds
        self.seeds = saved + 3
        try:
            result = self._run(self.job("check", [VerifyCandidate("0", cand.source)],
                                        timing={"rounds": 9, "rep_ms": self.timing.get("rep_ms", 40)}),
                               fresh=True)
        except VerifyError as exc:
            return {**d, "accepted": False, "reason": f"{d['speedup']:.1f}x needs extra checks, which failed: {exc}"}
        finally:
            self.seeds = saved
        again = decide(result.candidates[0], result.mode, result.cases, result.seeds, source=result.source,
                       device=result.device)
        if not again["accepted"]:
            return {**d, "accepted": False, "reason": f"{d['speedup']:.1f}x claimed, extra checks refused it: {again['reason']}"}
        if again.get("speedup") and abs(again["speedup"] / d["speedup"] - 1) > 0.3:
            return {**d, "accepted": False,
                    "reason": f"{d['speedup']:.1f}x did not reproduce ({again['speedup']:.1f}x on re-timing)"}
        return {**again, "reason": again["reason"] + f" (over {SUSPICIOUS_SPEEDUP:.0f}x: re-checked on {saved + 3} seeds and re-timed)"}

    def precompile(self, sources: list[str], quick: bool, cancel=None, limit: float = PRECOMPILE_S) -> str | None:
        """Compile the kernels that `sources` (our own edits, which share one worker) will launch,
        ahead and in parallel threads (worker/verify_precompile.py), so that their checks find them
        in Triton's cache instead of compiling one after another. `quick`: ahead of "tune" jobs,
        whose quick check runs fewer shapes. GPU only, two sources or more. The worker's note, or
        None where it did not run; never raises: what it saves is time, not evidence."""
        if self.mode != "gpu" or len(sources) < 2 or (cancel is not None and cancel.is_set()):
            return None
        items = [VerifyCandidate(str(i), s) for i, s in enumerate(sources)]
        job = self.job("precompile", items, timing=None, tune={"rep_ms": 0} if quick else None)
        try:
            result = self._run(job, fresh=False, cancel=cancel, limit=limit)
        except VerifyError as exc:
            return f"precompile: {str(exc).splitlines()[0][:160] if str(exc) else 'failed'}"
        return result.precompiled.note if result.precompiled is not None else None

    def tune(self, sources: list[str], rep_ms: float = 25, cancel=None, limit: float | None = None) -> list[dict]:
        """Quick correctness + one timing per source (GPU only; the interpreter returns no times).

        These sources are our own edits of the user's file (configs), so they share one worker.
        `limit`: seconds the job may take (within the budget); past it the worker is stopped.
        """
        items = [VerifyCandidate(str(i), s) for i, s in enumerate(sources)]
        result = self._run(self.job("tune", items, tune={"rep_ms": rep_ms}, timing=None), fresh=False, cancel=cancel,
                           limit=limit)
        out = []
        for ev in result.candidates:
            ok = ev.error is None and bool(ev.checks) and all(c.ok for c in ev.checks)
            times = (ev.timing or {}).get("cand_ms") or []
            out.append({"id": int(ev.id), "ok": ok, "ms": times[0] if times else None,
                        "reason": None if ok else (decide(ev, "interpreter", 1, 1, source=result.source)["reason"])})
        return out


def _module_name(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    clean = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in stem) or "kernel"
    return clean if not clean[0].isdigit() else "k_" + clean
