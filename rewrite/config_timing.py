"""Timing the config search's variants on the GPU within the optimize's budget.

The variants go to the worker a few at a time, each batch with a limit of its own: a variant that
runs long (a huge tile that spills, a compile that takes minutes) is cut with its batch, named in
the report, and the search goes on with what was timed. A variant whose fault ends the worker
(a CUDA error) costs only itself: the rest of its batch is timed one by one. Once the budget is spent the rest are not
timed, and the search ranks what it has: the best so far is returned, never nothing.
"""

from __future__ import annotations

from collections import deque

from .verify import PRECOMPILE_S, VerifyError

BATCH = 2  # variants a job: small enough that one slow variant costs little, large enough to amortise a job
PER_VARIANT_S = 20.0  # compile + a quick check + one timing of a variant at real size, with room
SETUP_S = 40.0  # a fresh worker builds the inputs and runs the original first
MIN_PRECOMPILE_LEFT_S = 15.0  # with less of the budget left, compiling ahead cannot pay for itself


def budgeted_tuner(verifier, budget, say=None, cancel=None):
    """A `tuner(sources) -> [{"id", "ok", "ms", "reason"}]` for propose_config, one result per source."""

    def tune(sources: list[str]) -> list[dict]:
        out: list[dict] = []
        fresh = True
        timed_any = False
        if (len(sources) > 1 and verifier.mode == "gpu"
                and not (budget is not None and budget.left() is not None and budget.left() < MIN_PRECOMPILE_LEFT_S)):
            if say is not None:
                say(f"compiling {len(sources)} configs in parallel on {verifier.device or 'the GPU'}")
            limit = budget.job_timeout(PRECOMPILE_S) if budget is not None else PRECOMPILE_S
            verifier.precompile(sources, quick=True, cancel=cancel, limit=limit)
        queue = deque(list(range(start, min(start + BATCH, len(sources)))) for start in range(0, len(sources), BATCH))
        while queue:
            ids = queue.popleft()
            batch = [sources[i] for i in ids]
            if (cancel is not None and cancel.is_set()) or (budget is not None and budget.spent()):
                out += [_untimed(i, "not timed: the time budget is spent") for i in ids]
                continue
            limit = PER_VARIANT_S * len(batch) + (SETUP_S if fresh else 0.0)
            if budget is not None:
                limit = budget.job_timeout(limit)  # what the job is given: the report says that figure
            which = f"{ids[0] + 1}" if len(ids) == 1 else f"{ids[0] + 1}-{ids[-1] + 1}"
            if say is not None:
                say(f"timing config{'s' if len(batch) > 1 else ''} {which} of {len(sources)} "
                    f"on {verifier.device or 'the GPU'}")
            try:
                results = verifier.tune(batch, cancel=cancel, limit=limit)
            except VerifyError as exc:
                text = str(exc)
                fresh = True  # a killed worker starts over: its next job builds the inputs again
                if len(ids) > 1 and text.startswith("cuda:"):
                    # one variant's fault (an address past a buffer) ends the worker and its batch:
                    # the others are timed on their own
                    queue.extendleft([i] for i in reversed(ids))
                    continue
                why = (f"cut after {limit:.0f} s" if text.startswith("timeout") or "exceeded" in text
                       else f"not timed: {text.splitlines()[0][:160]}")
                if budget is not None:
                    budget.note_cut(f"config timing {which} of {len(sources)} {why}")
                out += [_untimed(i, why) for i in ids]
                continue
            fresh = False
            for r in results:
                out.append({**r, "id": ids[int(r["id"])]})
                timed_any = timed_any or bool(r.get("ms"))
        out.sort(key=lambda r: r["id"])
        if not timed_any and sources and budget is not None and verifier.mode == "gpu":
            failed = [r.get("reason") for r in out if r.get("reason") and not str(r["reason"]).startswith(("cut", "not timed"))]
            why = (f"{len(failed)} failed a quick check on the performance case (first: {str(failed[0])[:120]})"
                   if failed else "none was timed")
            budget.note_cut(f"config search: of {len(sources)} variants {why}; heuristic picks verified instead")
        return out

    return tune


def _untimed(i: int, reason: str) -> dict:
    return {"id": i, "ok": False, "ms": None, "reason": reason}
