"""The verifier, client side: screen statically, run in the worker, decide from the evidence.

Nothing here executes a candidate: the worker job (profiling/worker/job_verify.py) does, in a
separate process. `decide` and `judge_speed` are pure functions of the evidence, so the rules that
accept or refuse are tested directly (timings injected) as well as end to end.
"""

from __future__ import annotations

import os
import statistics
import threading
from concurrent.futures import ThreadPoolExecutor

from tritonlens.analysis import gpus
from tritonlens.profiling.worker.messages import (
    Check,
    Evidence,
    MessageError,
    VerifyCandidate,
    VerifyJob,
    VerifyResult,
)
from tritonlens.profiling.worker.timing import ratio_interval

from .candidate import NOT_TIMED, Candidate, Verdict, short_device
from .static_check import screen

MIN_SPEEDUP = 1.05
SUSPICIOUS_SPEEDUP = 10.0
# rounds: the least; max_rounds and budget_s bound the rounds added until the ratio's interval is narrow
DEFAULT_TIMING = {"rounds": 7, "rep_ms": 40, "max_rounds": 41, "budget_s": 12}


class VerifyError(Exception):
    """The verification could not run at all (no harness, original broken, worker died)."""


def judge_speed(orig_ms: list[float], cand_ms: list[float], min_speedup: float = MIN_SPEEDUP) -> dict:
    """Interleaved A/B timings → {"ok", "speedup", "reason", "ratios", "q25", "low"}.

    The speedup is the paired estimate (worker/timing.py's ratio_interval: a trimmed geometric mean
    of the per-round ratios orig/cand, so drift shared by a round cancels). Accept only if it
    reaches `min_speedup` and the spread of the ratios says it is not noise: their lower quartile
    must itself be above 1, and so must the interval's 99.5% lower bound.
    """
    pairs = [(a, b) for a, b in zip(orig_ms, cand_ms) if a and b and a > 0 and b > 0]
    if len(pairs) < 3:
        return {"ok": False, "speedup": None, "reason": "too few timing rounds to judge speed"}
    a_med = statistics.median(a for a, _ in pairs)
    b_med = statistics.median(b for _, b in pairs)
    bounds = ratio_interval([a for a, _ in pairs], [b for _, b in pairs])
    speedup, low = bounds["ratio"], bounds["low"]
    ratios = sorted(a / b for a, b in pairs)
    q25 = ratios[max(0, (len(ratios) - 1) // 4)]
    out = {"speedup": speedup, "ratios": ratios, "q25": q25, "orig_ms": a_med, "cand_ms": b_med, "low": low}
    if speedup < 0.97:
        out.update(ok=False, reason=f"slower: {speedup:.2f}x ({b_med:.4g} ms vs {a_med:.4g} ms)")
    elif q25 <= 1.0:
        out.update(ok=False, reason=f"{speedup:.2f}x is within the A/B noise (lower-quartile ratio {q25:.3f}x)")
    elif low <= 1.0:
        out.update(ok=False, reason=f"{speedup:.2f}x is within the A/B noise ({len(pairs)} rounds: the ratio may be "
                                    f"as low as {low:.3f}x)")
    elif speedup < min_speedup:
        out.update(ok=False, reason=f"not faster: {speedup:.3f}x is below the {min_speedup}x bar")
    else:
        out.update(ok=True, reason=f"{speedup:.2f}x faster ({a_med:.4g} → {b_med:.4g} ms, median of {len(pairs)} interleaved rounds)")
    out["suspicious"] = bool(out["ok"] and speedup > SUSPICIOUS_SPEEDUP)
    return out


def _check_failure(checks: list[Check]) -> str | None:
    bad = next((c for c in checks if not c.ok), None)
    if bad is None:
        return None
    if bad.range is not None:  # the label names the range: range "zeros"
        return f"wrong result on {bad.label} ({bad.case if bad.case == 'ragged' else f'case {bad.case}'}, " \
               f"{bad.shapes}): {bad.reason or 'wrong result'}"
    where = f"{bad.label} ({bad.shapes}, seed {bad.seed})"
    reason = bad.reason or "wrong result"
    if "unstable" in reason:
        return f"race: {reason} on {where}"
    if bad.case == "ragged":
        earlier_ok = any(c.ok for c in checks if c.case != "ragged")
        prefix = ("fails only on the ragged shape (a missing mask?)" if earlier_ok
                  else "fails on the ragged shape")
        return f"{prefix} {bad.shapes}: {reason}"
    if "out-of-bounds" in reason:
        return f"{reason} on {where}"
    if "NaN" in reason:
        return f"unwritten or invalid output on {where}: {reason}"
    return f"wrong result on {where}: {reason}"


def decide(ev: Evidence, mode: str, n_cases: int, n_seeds: int, timing_ok: dict | None = None,
           source: str = "", device: str = "") -> dict:
    """Evidence of one candidate → {"accepted", "reason", ...}. `source` "records": the cases are
    recorded launches replayed at kernel level (worker/record_cases.py). `device`: the GPU's name
    as the worker reports it, for the physical floor of a claimed time (physical_floor)."""
    err = ev.error
    checks = [c for c in ev.checks if c.range is None]  # the seeds × shapes grid
    ranges = [c for c in ev.checks if c.range is not None]
    shapes = n_cases + (1 if ev.ragged_sizes and not ev.ragged_note else 0)
    base = {"checks": len(checks), "seeds": n_seeds, "shapes": shapes, "ranges": len(ranges),
            "max_rel_error": max((c.rel_err for c in checks if c.rel_err is not None), default=None)}
    if err:
        kind = err.type
        first = err.message.splitlines()[0][:300] if err.message else ""
        if kind == "unexercised":
            reason = f"not checked: {first}"
        elif kind == "syntax":
            reason = f"syntax error: {first}"
        elif err.stage == "import":
            reason = f"import failed: {first}"
        elif kind == "compile":
            reason = f"compile error: {first}"
        elif err.stage == "timing":
            reason = f"failed while timing: {first}"
        else:
            reason = f"runtime error: {first}"
        return {**base, "accepted": False, "reason": reason}
    failure = _check_failure(ev.checks)
    if failure:
        return {**base, "accepted": False, "reason": failure}
    if not checks:
        return {**base, "accepted": False, "reason": "no check ran"}
    if ev.launches == 0:
        return {**base, "accepted": False, "reason": "torch fallback: the candidate launched no Triton kernel"}
    if ev.launches < ev.calls:
        return {**base, "accepted": False,
                "reason": "torch fallback: some calls of the candidate launched no Triton kernel"}
    if ev.ops_added:
        return {**base, "accepted": False,
                "reason": "torch fallback: the wrapper now runs torch ops the original did not: "
                          + ", ".join(ev.ops_added[:6])}
    if ev.ghost_failure:
        return {**base, "accepted": False, "reason": ev.ghost_failure}
    expected = ev.planned if ev.planned is not None else n_seeds * shapes
    if len(checks) < expected:
        return {**base, "accepted": False, "reason": f"only {len(checks)} of {expected} checks ran"}
    scope = f"{n_seeds} seeds × {shapes} shapes"
    if source == "records":
        scope = f"{n_seeds} seeds × {shapes} recorded launch{'es' if shapes != 1 else ''}"
    if ev.one_seed:
        scope += f" (the largest, {ev.one_seed}, on one seed)"
    caveat = "".join(f"; {note}" for note in ev.notes[:2]) + ("; …" if len(ev.notes) > 2 else "")
    if mode != "gpu" or not ev.timing:
        # Correct is all that is shown: never offered as faster (no quick fix, no speedup).
        return {**base, "accepted": True, "correct": True, "speedup": None,
                "reason": f"{NOT_TIMED}; checked on {scope}{caveat}" if mode != "gpu"
                else f"correct on {scope}; not timed{caveat}"}
    speed = timing_ok or judge_speed(ev.timing.get("orig_ms", []), ev.timing.get("cand_ms", []))
    result = {**base, "correct": True, "speedup": speed.get("speedup"), "orig_ms": speed.get("orig_ms"),
              "cand_ms": speed.get("cand_ms"), "suspicious": speed.get("suspicious", False)}
    if not speed["ok"]:
        return {**result, "accepted": False, "reason": speed["reason"]}
    floor = physical_floor(ev.out_bytes, device)
    if floor is not None and speed.get("cand_ms") is not None and speed["cand_ms"] < floor["ms"]:
        return {**result, "accepted": False, "suspicious": True,
                "reason": (f"claimed {speed['cand_ms']:.4g} ms is below the physical minimum {floor['ms']:.4g} ms "
                           f"for {floor['mb']:.3g} MB at {floor['tbps']:.3g} TB/s ({floor['gpu']}): not shown")}
    return {**result, "accepted": True, "reason": f"correct on {scope}; {speed['reason']}{caveat}"}


PHASE_WORDS = (("compile", "compile"), ("inputs", "inputs"), ("reference", "original runs"),
               ("candidate", "candidate runs"), ("compare", "comparisons"), ("timing", "timing"), ("other", "other"))


def phase_line(phases: dict) -> str:
    """"time: 84 s in the worker: compile 12 s, inputs 3 s, …" from a verify result's phases
    (messages.PhaseTimes as JSON, or their sums); phases under 0.05 s are left out."""
    secs = lambda x: f"{x:.0f} s" if x >= 10 else f"{x:.1f} s"
    parts = [f"{word} {secs(phases[key])}" for key, word in PHASE_WORDS if phases.get(key, 0.0) >= 0.05]
    return f"time: {secs(phases.get('total', 0.0))} in the worker" + (": " + ", ".join(parts) if parts else "")


def physical_floor(out_bytes: int | None, device: str | None) -> dict | None:
    """The least time writing `out_bytes` of output can take on `device` (its datasheet DRAM
    bandwidth), or None where it proves nothing: bytes unknown, a GPU not in the table, or output
    that fits in its L2 (written back after the kernel ends, so the timing never sees DRAM)."""
    if not out_bytes or not device:
        return None
    try:
        gpu = gpus.get(short_device(device))
    except KeyError:
        return None
    if gpu.l2_bytes is None or out_bytes <= gpu.l2_bytes or not gpu.datasheet_bandwidth:
        return None
    return {"ms": out_bytes / gpu.datasheet_bandwidth * 1e3, "mb": out_bytes / 1e6,
            "tbps": gpu.datasheet_bandwidth / 1e12, "gpu": gpu.name}


class Verifier:
    """Verifies candidates for one file. `backend`: "local" | "ssh://…" | "ray" | "ray://…".

    isolate=True (the default for untrusted proposers) gives each candidate a fresh worker process
    on the local backend, so one candidate's side effects cannot reach the next one's run.
    """

    def __init__(self, path: str, text: str, harness: str | None = None, python: str | None = None,
                 backend: str = "local", timeout: float = 300, seeds: int = 3, timing: dict | None = None,
                 parallel: int = 1):
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
        self.n_cases: int | None = None
        self.real_size: int | None = None  # the job's: from how many elements a case is checked on one seed
        self.phases: dict[str, float] = {}  # worker seconds by phase, summed over this verifier's jobs

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

    def _run(self, job: VerifyJob, fresh: bool, cancel=None) -> VerifyResult:
        if not self.harness:
            from tritonlens.profiling.api import missing_cases

            missing = missing_cases(self.path, self.text, zero_config=False)
            if missing:
                raise VerifyError(missing)
        backend = self._backend(fresh)
        try:
            reply = backend.run(job, timeout=self.timeout, cancel=cancel)
        finally:
            if fresh:
                backend.close()
        if not reply.ok:
            raise VerifyError(str(reply.error) if reply.error else "error: worker failed")
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
                if len(group) > 1 and not text.startswith(("timeout", "cancelled")):
                    for i in group:  # find the one that broke the batch
                        run_group([i], True)
                    return
                for i in group:
                    verdicts[i] = Verdict(candidates[i], False, f"verification failed: {text}",
                                          mode=self.mode or "unknown", evidence={"error": text})
                return
            for ev in result.candidates:
                i = int(ev.id)
                verdicts[i] = self._verdict(candidates[i], ev, result)
                if progress:
                    progress(verdicts[i])

        if isolate:
            groups, fresh = [[i] for i in runnable], True
        elif self.parallel == 1 or len(runnable) <= 1:
            groups, fresh = ([runnable] if runnable else []), False
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

    def tune(self, sources: list[str], rep_ms: float = 25, cancel=None) -> list[dict]:
        """Quick correctness + one timing per source (GPU only; the interpreter returns no times).

        These sources are our own edits of the user's file (configs), so they share one worker.
        """
        items = [VerifyCandidate(str(i), s) for i, s in enumerate(sources)]
        result = self._run(self.job("tune", items, tune={"rep_ms": rep_ms}, timing=None), fresh=False, cancel=cancel)
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
