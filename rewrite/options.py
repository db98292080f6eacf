"""What one optimize is asked to do: the typed options the CLI, the language server and the benches
share, and the one time budget every job of it keeps.

    options = OptimizeOptions(proposers=("config", "rules"), harness="cases.py::cases", budget_s=120)
    report = optimize_file("kern.py", options, progress=..., cancel=...)

The budget covers the whole optimize: checking the original, the profile that guides the choices,
every verification and config timing, the LLM's rounds. Each worker job is given what is left of
it, a config timing past it is cut and named, and the best rewrite proven so far is returned.
With the llm proposer the LLM's own time budget is added to it (a model's replies take minutes).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

ALL_PROPOSERS = ("config", "rules", "llm")
DEFAULT_BUDGET_S = 120.0
# a worker job needs this much to be worth starting: compile, inputs and one original run
MIN_JOB_S = 5.0
# stopping a killed worker and writing the report take a moment of the budget too (measured: 2 s)
CLOSING_S = 3.0
# the rule fixes and transforms, verified first, may use this much of the budget when the config
# search follows: on real kernels the search found most of the wins
RULES_SHARE = 0.5


class OptionsError(ValueError):
    """An option the caller set is unusable (the message says which and why)."""


@dataclass(frozen=True)
class OptimizeOptions:
    proposers: tuple[str, ...] = ("config", "rules")
    kernel: str | None = None  # only this kernel; None: every kernel of the file
    harness: str | None = None  # FILE.py::FUNC yielding cases; None: the file's tritonlens_cases() or its records
    seeds: int = 3  # random inputs per shape (at least 3)
    backend: str = "local"  # local | ssh://[user@]host[:port] | ray | ray://HOST:PORT
    python: str | None = None  # the interpreter that runs kernels
    budget_s: float = DEFAULT_BUDGET_S  # the whole optimize, in seconds (plus the LLM's own); 0: no limit
    job_timeout_s: float = 600.0  # one worker job at most, within the budget
    llm: object | None = None  # LLMSettings, or a dict of its keys (editor settings, CLI flags)
    rounds: int = 3  # LLM propose→verify rounds
    parallel: int = 1  # worker processes for trusted candidates
    timing: dict | None = field(default=None, hash=False)  # A/B timing rounds; None: the verifier's default

    def __post_init__(self):
        proposers = self.proposers
        if isinstance(proposers, str):
            proposers = proposers.split(",")
        proposers = tuple(p.strip() for p in proposers if p and p.strip())
        object.__setattr__(self, "proposers", proposers)
        unknown = [p for p in proposers if p not in ALL_PROPOSERS]
        if unknown:
            raise OptionsError(f"unknown proposer(s) {', '.join(unknown)}: choose from {', '.join(ALL_PROPOSERS)}")
        if not proposers:
            raise OptionsError(f"no proposer given: choose from {', '.join(ALL_PROPOSERS)}")
        if self.budget_s < 0:
            raise OptionsError(f"the budget must be 0 (no limit) or more seconds, got {self.budget_s:g}")
        if self.rounds < 1:
            raise OptionsError(f"rounds must be at least 1, got {self.rounds}")
        if self.job_timeout_s <= 0:
            raise OptionsError(f"the job timeout must be positive, got {self.job_timeout_s:g}")

    def with_(self, **changes) -> OptimizeOptions:
        return replace(self, **changes)

    def effective_budget_s(self) -> float | None:
        """Seconds the whole optimize may take; None: no limit."""
        if not self.budget_s:
            return None
        llm_time = getattr(self.llm, "time_budget_s", None) if "llm" in self.proposers else None
        if "llm" in self.proposers and not llm_time:
            return None  # an LLM loop with no time limit of its own: the optimize has none either
        return self.budget_s + (llm_time or 0.0)


class Budget:
    """The optimize's one clock: what is left, and what a job may take of it."""

    def __init__(self, seconds: float | None, clock=time.monotonic):
        self.seconds = seconds
        self._clock = clock
        self.started = clock()
        self.cut: list[str] = []  # what the budget stopped, in words, for the report
        self._share: tuple[str, float, float] | None = None  # (phase, its seconds, when it ends)

    def elapsed(self) -> float:
        return self._clock() - self.started

    def left(self) -> float | None:
        """Seconds left (of the running phase's share, within one); None: no limit."""
        if self.seconds is None:
            return None
        now = self.elapsed()
        end = self.seconds if self._share is None else min(self.seconds, self._share[2])
        return max(0.0, end - now)

    @contextmanager
    def share(self, phase: str, fraction: float):
        """Within the block the budget ends once `fraction` of what was left at its start is spent,
        so that one phase running long (a transform verified at full size) leaves the next its time.
        What the phase does not use stays for the next."""
        left = self.left()
        if left is None or fraction >= 1.0:
            yield
            return
        self._share = (phase, left * fraction, self.elapsed() + left * fraction)
        try:
            yield
        finally:
            self._share = None

    def spent(self) -> bool:
        left = self.left()
        return left is not None and left < MIN_JOB_S

    def job_timeout(self, limit: float) -> float:
        """A job's timeout: its own limit, or what the budget has left, whichever is shorter."""
        left = self.left()
        return limit if left is None else max(1.0, min(limit, left - CLOSING_S))

    def note_cut(self, what: str) -> None:
        self.cut.append(what)

    def describe(self) -> str:
        if self.seconds is None:
            return f"no time budget; {self.elapsed():.0f} s spent"
        spent = f"{self.elapsed():.0f} s of the {self.seconds:g} s budget spent"
        if self._share is not None and self.elapsed() < self.seconds:
            return f"the {self._share[1]:.0f} s share of {self._share[0]} is spent; {spent}"
        return spent
