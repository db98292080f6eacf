"""The speed judgement against noise: generated A/B rounds shaped like a short kernel's on a busy
GPU (rounds drift between 0.020 and 0.071 ms together, each sample jitters on its own, one sample
in twenty catches a clock dip). A candidate identical to the original is never accepted; a real
1.10x gain is, once the worker's stopping rule has timed enough rounds."""

from __future__ import annotations

import math
import random

from tritonlens.profiling.worker.timing import ratio_interval, rounds_enough
from tritonlens.rewrite.verify import judge_speed

BASE_MS = 0.02


def _round(rng: random.Random, gain: float) -> tuple[float, float]:
    drift = min(3.55, math.exp(abs(rng.gauss(0.0, 0.55))))  # 0.020 .. 0.071 ms, shared by the pair

    def sample(ms: float) -> float:
        dip = 2.5 if rng.random() < 0.05 else 1.0
        return ms * drift * math.exp(rng.gauss(0.0, 0.04)) * dip

    return sample(BASE_MS), sample(BASE_MS / gain)


def _adaptive(rng: random.Random, gain: float, min_rounds=7, max_rounds=41) -> tuple[list, list]:
    """Rounds as the worker's time_ab takes them: at least `min_rounds`, then until narrow or capped."""
    orig, cand = [], []
    while not rounds_enough(orig, cand, min_rounds, max_rounds):
        a, b = _round(rng, gain)
        orig.append(a)
        cand.append(b)
    return orig, cand


def test_identical_candidates_under_noise_are_never_accepted():
    rng = random.Random(1)
    spans = []
    for trial in range(400):
        n = (7, 11, 21, 41)[trial % 4]
        orig, cand = zip(*(_round(rng, 1.0) for _ in range(n)))
        spans.append(max(orig) / min(orig))
        verdict = judge_speed(list(orig), list(cand))
        assert not verdict["ok"], (trial, verdict["reason"])
    for trial in range(100):  # and when the worker decides how many rounds
        orig, cand = _adaptive(rng, 1.0)
        assert not judge_speed(orig, cand)["ok"]
    assert max(spans) > 3.0  # the noise is as wide as the original's own 0.020 .. 0.071 ms


def test_a_real_gain_of_1_10x_under_the_same_noise_is_accepted():
    rng = random.Random(2)
    accepted, rounds = 0, []
    for _ in range(100):
        orig, cand = _adaptive(rng, 1.10)
        rounds.append(len(orig))
        verdict = judge_speed(orig, cand)
        accepted += verdict["ok"]
        if verdict["ok"]:
            assert 1.05 < verdict["speedup"] < 1.16 and verdict["low"] > 1.0, verdict
    assert accepted >= 95, (accepted, rounds)
    assert min(rounds) >= 7 and max(rounds) <= 41


def test_seven_rounds_of_a_1_29x_gain_under_noise_are_enough():
    rng = random.Random(3)
    assert sum(judge_speed(*zip(*(_round(rng, 1.29) for _ in range(7))))["ok"] for _ in range(50)) >= 45


def test_the_interval_narrows_with_rounds_and_stopping_does_not_look_at_the_answer():
    rng = random.Random(4)
    orig, cand = zip(*(_round(rng, 1.10) for _ in range(41)))
    wide, narrow = ratio_interval(orig[:7], cand[:7]), ratio_interval(orig, cand)
    assert narrow["high"] / narrow["low"] < wide["high"] / wide["low"]
    assert narrow["low"] < 1.10 < narrow["high"]
    # the same spread around 0.9x or 1.1x stops at the same round: width decides, not the ratio
    slow = [b * 1.21 for b in cand]
    for n in range(7, 42):
        assert rounds_enough(orig[:n], cand[:n], 7, 41) == rounds_enough(orig[:n], slow[:n], 7, 41)
    assert ratio_interval([1.0, 2.0], [1.0, 2.0]) is None
