"""The verify job's timing: interleaved A/B rounds of the original and a candidate on the
performance case (the first), as many as it takes for the ratio's interval to narrow
(timing.rounds_enough), a tune's one timing, the original's baseline. GPU only; the timer itself
is timing.py's."""

from __future__ import annotations

import time

import torch
from verify_inputs import clone_tree
from verify_session import Session, Side


def timer(fn, args, kwargs, rep_ms: float):
    import timing  # the worker's folder is on sys.path

    def call():
        fn(*args, **kwargs)

    return timing.bench(call, warmup_ms=max(5, int(rep_ms // 4)), rep_ms=rep_ms)


SHORT_MS = 0.1  # a kernel this short is timed with more calls per sample: launch jitter is most of it


def time_ab(session: Session, side: Side, rounds: int, rep_ms: float, max_rounds: int = 41,
            budget_s: float = 12.0) -> dict:
    """Interleaved A/B on the performance case: original, candidate, original, candidate, ... on the
    same inputs, `rounds` at least, then more until the ratio's interval is narrow
    (timing.rounds_enough), `max_rounds` or `budget_s` is reached."""
    import timing  # the worker's folder is on sys.path

    fn_a, args, kwargs = session.inputs(0, session.timed_case())
    fn_b = side.resolve(fn_a, session.original)
    a_args = clone_tree((args, kwargs))
    b_args = clone_tree((args, kwargs))
    for _ in range(3):  # compile, autotune, allocator warm-up
        fn_a(*a_args[0], **a_args[1])
        fn_b(*b_args[0], **b_args[1])
    torch.cuda.synchronize()
    orig, cand = [], []
    started = time.perf_counter()
    stopped, r = "max_rounds", 0
    while True:
        first, second = ((orig, fn_a, a_args), (cand, fn_b, b_args))
        if r % 2:  # alternate who goes first, so drift does not favour one side
            first, second = second, first
        for store, fn, (a, k) in (first, second):
            store.append(float(timer(fn, a, k, rep_ms)))
        r += 1
        if r == 1 and min(orig[0], cand[0]) < SHORT_MS:
            rep_ms *= 4
            orig.clear()  # the first pair was timed with fewer calls: not a sample like the rest
            cand.clear()
            continue
        if timing.rounds_enough(orig, cand, rounds, max_rounds):
            stopped = "narrow" if len(orig) < max_rounds else "max_rounds"
            break
        if time.perf_counter() - started > budget_s and len(orig) >= rounds:
            stopped = "budget"
            break
    return {"orig_ms": orig, "cand_ms": cand, "rounds": len(orig), "rep_ms": rep_ms, "stopped": stopped,
            "case": session.timed_case()}


def time_candidate(session: Session, side: Side, job, action: str, timing: dict | None) -> dict | None:
    if action == "tune":
        rep = float((job.tune or {}).get("rep_ms", 25))
        fn_a, args, kwargs = session.inputs(0, session.timed_case())
        fn_b = side.resolve(fn_a, session.original)
        a, k = clone_tree((args, kwargs))
        fn_b(*a, **k)
        return {"cand_ms": [float(timer(fn_b, a, k, rep))]}
    if timing:
        return time_ab(session, side, int(timing.get("rounds", 7)), float(timing.get("rep_ms", 40)),
                       int(timing.get("max_rounds", 41)), float(timing.get("budget_s", 12.0)))
    return None
