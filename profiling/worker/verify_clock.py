"""Where a verify job's time goes: wall seconds per phase (inputs, the original's runs, the
candidates' runs, comparisons, timing, Triton compiles), each counted once. A phase inside another
(a compile inside a candidate's first run) is taken out of the outer one, so the phases add up to
the time they cover. Standard library only; the caller supplies how to wait for the device."""

from __future__ import annotations

import contextlib
import time

PHASES = ("inputs", "reference", "candidate", "compare", "timing", "compile")


class PhaseClock:
    def __init__(self, sync=None):
        self.sync = sync  # waits for queued device work, so it is charged to the phase that queued it
        self.reset()

    def reset(self) -> None:
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.started = time.perf_counter()
        self._stack: list[list] = []

    @contextlib.contextmanager
    def phase(self, name: str):
        if self.sync is not None and self._stack:
            self.sync()
        start = time.perf_counter()
        self._stack.append([name, 0.0])
        try:
            yield
        finally:
            if self.sync is not None:
                with contextlib.suppress(Exception):  # a dead context: the job's own error says so
                    self.sync()
            _, inner = self._stack.pop()
            took = time.perf_counter() - start
            self.seconds[name] += took - inner
            if self._stack:
                self._stack[-1][1] += took

    def as_json(self) -> dict:
        """The verify result's `phases` (messages.PhaseTimes): seconds per phase, the job's total,
        and `other` (loading modules, guard-zone checks, bookkeeping)."""
        total = time.perf_counter() - self.started
        out = {k: round(v, 3) for k, v in self.seconds.items()}
        out["total"] = round(total, 3)
        out["other"] = round(max(0.0, total - sum(self.seconds.values())), 3)
        return out


CLOCK = PhaseClock()
