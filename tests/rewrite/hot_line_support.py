"""Line samples the hot-line tests build, as the profile's contract (LineProfile) shapes them."""

from __future__ import annotations

from tritonlens.profiling.worker.line_profile import (
    LineInstructions,
    LineProfile,
    LineSamples,
    LineStall,
)


def line_of(text: str, code: str) -> int:
    """1-based number of the one line holding `code`."""
    found = [n for n, line in enumerate(text.splitlines(), 1) if code in line]
    assert len(found) == 1, (code, found)
    return found[0]


def hot(line: int, share: float, stalls: dict[str, int], kinds: tuple[str, ...] = (), waits_on=()) -> LineSamples:
    samples = sum(stalls.values()) + 10
    return LineSamples(line=line, samples=samples, share=share,
                       stalls=[LineStall(r, n) for r, n in stalls.items()],
                       instructions=[LineInstructions(k, samples // (i + 1)) for i, k in enumerate(kinds)],
                       waits_on=list(waits_on))


def profile(kernel: str, *lines: LineSamples) -> LineProfile:
    return LineProfile(kernel=kernel, total_samples=1000, lines=list(lines))
