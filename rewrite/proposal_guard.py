"""The one guard between proposers and the report: a proposer that raises, a candidate that could
not be written, a verification that broke, each becomes a refused verdict saying why in one short
line, and the verdicts computed before it stand."""

from __future__ import annotations

from dataclasses import dataclass

from .candidate import Candidate, Verdict

MAX_REASON = 200


@dataclass
class FailedCandidate(Candidate):
    """A candidate its proposer could not write (`source` is the text it started from)."""

    failure: str = ""


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    return first if len(first) <= MAX_REASON else first[:MAX_REASON - 1] + "…"


def failed(proposer: str, title: str, source: str, exc: BaseException, kernel: str | None = None) -> FailedCandidate:
    return FailedCandidate(proposer, title, source, f"{title} could not be written", kernel=kernel,
                           failure=one_line(exc))


def propose_and_verify(proposer: str, propose, verify, text: str) -> list[Verdict]:
    """`propose()` -> candidates, `verify(candidates)` -> their verdicts in order. Never raises
    (but for KeyboardInterrupt and its kind): what fails is refused with its reason."""
    try:
        cands = list(propose())
    except Exception as exc:  # noqa: BLE001 - a proposer's bug must not cost the other verdicts
        cands = [failed(proposer, f"{proposer} proposer", text, exc)]
    runnable = [c for c in cands if not isinstance(c, FailedCandidate)]
    try:
        checked = list(verify(runnable)) if runnable else []
    except Exception as exc:  # noqa: BLE001
        checked = [Verdict(c, False, f"verification failed: {one_line(exc)}", mode="unknown") for c in runnable]
    by_id = {id(c): v for c, v in zip(runnable, checked)}
    out = []
    for c in cands:
        if isinstance(c, FailedCandidate):
            out.append(Verdict(c, False, f"not proposed: {c.failure}", mode="static", evidence={"error": c.failure}))
        else:
            out.append(by_id.get(id(c)) or Verdict(c, False, "not verified", mode="unknown"))
    return out


def verified_by_proposer(proposer: str, run, text: str) -> list[Verdict]:
    """The verdicts of a proposer that verifies its own candidates (the LLM loop), guarded alike."""
    try:
        return list(run())
    except Exception as exc:  # noqa: BLE001
        c = failed(proposer, f"{proposer} proposer", text, exc)
        return [Verdict(c, False, f"not proposed: {c.failure}", mode="static", evidence={"error": c.failure})]
