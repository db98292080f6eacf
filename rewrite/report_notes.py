"""What an optimize report says beside its candidates: what the time budget cut, and whether its
cases were too small for a timing to mean anything."""

from __future__ import annotations

# Below these, a kernel's time is mostly a launch's fixed cost (a few microseconds on an H100):
# an A/B timing then compares launch overheads, not the kernels' work.
LAUNCH_BOUND_MS = 0.02
SMALL_CASE_BYTES = 16 << 20  # about 5 us of traffic at an H100's copy bandwidth
REAL_SIZE_HOWTO = ("record at real size: `tritonlens capture -- python bench.py` (or the project's own "
                   "benchmark scripts), or give a harness of real inputs with --harness")


def budget_notes(budget, verdicts) -> list[str]:
    """What the budget stopped: cut config timings, candidates never run, and the total."""
    unrun = [v.candidate.title for v in verdicts if not v.accepted and v.reason.startswith("not run:")]
    notes = list(budget.cut)
    if unrun:
        notes.append(f"{len(unrun)} candidate{'s' if len(unrun) != 1 else ''} not run within the budget: "
                     + ", ".join(unrun[:4]) + (" …" if len(unrun) > 4 else ""))
    if notes or (budget.seconds is not None and budget.spent()):
        notes.append(f"time: {budget.describe()}; the best rewrite proven so far is kept "
                     "(raise it with --budget or the optimizeBudgetS setting)")
    return notes


def small_cases_note(verifier) -> str | None:
    """A word when the cases run near a launch's fixed cost, and how to record at real size."""
    records = verifier.records if verifier.source == "records" else []
    largest = max((_moved((r.more or {}).get("bytes")) for r in records), default=None)
    if verifier.mode == "gpu" and verifier.baseline_ms is not None and verifier.baseline_ms < LAUNCH_BOUND_MS:
        where = "recorded launches" if records else "cases"
        return (f"the {where} run in {verifier.baseline_ms * 1000:.1f} us, near a launch's fixed cost: "
                f"timings compare launch overheads, not the kernel's work; {REAL_SIZE_HOWTO}")
    if largest is not None and 0 < largest < SMALL_CASE_BYTES:
        return (f"the largest recorded launch moves {_size(largest)}, too little to time on a GPU "
                f"(it runs near a launch's fixed cost); {REAL_SIZE_HOWTO}")
    return None


def _moved(recorded) -> int:
    """A record's minimum traffic: {"read": B, "written": B} as the capture writes it."""
    if isinstance(recorded, dict):
        return int(recorded.get("read") or 0) + int(recorded.get("written") or 0)
    return int(recorded or 0)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
