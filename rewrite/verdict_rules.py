"""Deciding from the evidence: the pure rules that accept or refuse a candidate from what the
worker measured (checks, launches, timings), the physical floor of a claimed time, and the line
that says where the worker's time went. Tested directly with injected evidence as well as end to
end through the verifier (rewrite/verify.py)."""

from __future__ import annotations

import statistics

from tritonlens.analysis import gpus
from tritonlens.profiling.worker.messages import Check, Evidence
from tritonlens.profiling.worker.timing import ratio_interval

from .candidate import NOT_TIMED, short_device

MIN_SPEEDUP = 1.05
SUSPICIOUS_SPEEDUP = 10.0
# rounds: the least; max_rounds and budget_s bound the rounds added until the ratio's interval is narrow
DEFAULT_TIMING = {"rounds": 7, "rep_ms": 40, "max_rounds": 41, "budget_s": 12}


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
        elif kind == "budget":
            reason = first  # "not run: the optimize's time budget ..."
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
