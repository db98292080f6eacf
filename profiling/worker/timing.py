"""One GPU timer for every figure tritonlens reports: verifier A/B rounds, profile benches and the
roofline ceilings they are divided by. Standalone (torch imported on first use).

Why not `triton.testing.do_bench` as it is: its L2 flush zeroes a 256 MB buffer, so the timed
window opens with an L2 (50 MB on an H100) full of the flush's dirty lines, and the kernel under
test pays to write them back. A 1 GB copy hides that; a short kernel cannot. Measured on an H100
(bench/results/probe_memory_bound_timers.txt): a 64 MB torch.sum takes 39.5 µs under do_bench and
30.0 µs here, while a 1 GiB copy moves the same 3.0 TB/s under both. Here the buffer is zeroed and
then read, so those lines are written back before the window opens and L2 holds only clean lines
of memory the kernel never touches: every byte the kernel reads comes from DRAM, and it pays for no
writes but its own. Nsight Compute's default cache control (flush and invalidate before each
replay) starts kernels from the same state.

Otherwise do_bench's shape: a first call (compilation, autotuning), an estimate over 5 calls, warm-up
calls for `warmup_ms`, then `rep_ms` worth of individually event-timed calls; the median in ms.
"""

from __future__ import annotations

METHOD = "median of event-timed calls, each after an L2 flush that leaves L2 clean (256 MB zeroed, then read)"

_FLUSH_BYTES = 256 << 20
_buffers: dict = {}


def _flush_buffer(device):
    import torch

    key = str(device)
    buf = _buffers.get(key)
    if buf is None:
        buf = _buffers[key] = torch.empty(_FLUSH_BYTES // 4, dtype=torch.int32, device=device)
    return buf


def flush_l2(device="cuda") -> None:
    buf = _flush_buffer(device)
    buf.zero_()  # evicts everything the last call left, dirty lines included...
    buf.max()  # ...and reading it back writes the flush's own dirty lines out before timing starts


def bench(fn, warmup_ms: float = 25.0, rep_ms: float = 100.0, device="cuda") -> float:
    """Median time of `fn()` in ms, each call starting from a clean L2."""
    import torch

    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        flush_l2(device)
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate = max(start.elapsed_time(end) / 5, 1e-3)  # flush included, as do_bench counts it
    n_warmup = max(1, int(warmup_ms / estimate))
    n_repeat = max(3, int(rep_ms / estimate))  # a median of at least 3, even for a kernel of seconds
    for _ in range(n_warmup):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for s, e in zip(starts, ends):
        flush_l2(device)
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    mid = len(times) // 2
    return times[mid] if len(times) % 2 else 0.5 * (times[mid - 1] + times[mid])


# -- judging A/B rounds ----------------------------------------------------------------------------
# Paired rounds (original, candidate) share whatever the GPU's clocks and neighbours did at the time,
# so their ratio cancels it; what is left is judged by a trimmed mean of the log-ratios (Yuen's
# interval: the fifth of rounds at each end, outliers such as a round that caught a clock dip, carry
# no weight) at 99.5% one-sided. The verifier accepts only what clears 1 there; the worker times more
# rounds until the interval is narrow, never until it says what a caller hoped.
CONFIDENCE = 0.995
_T995 = (63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169, 3.106, 3.055, 3.012, 2.977,
         2.947, 2.921, 2.898, 2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763,
         2.756, 2.750)  # Student's t at 0.995, 1 to 30 degrees of freedom


def _t995(df: int) -> float:
    if df <= len(_T995):
        return _T995[max(df, 1) - 1]
    z = 2.5758293035489  # beyond the table, the Cornish-Fisher series (within 0.001 there)
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


def ratio_interval(orig_ms, cand_ms) -> dict | None:
    """orig/cand over paired rounds: {"n", "ratio" (trimmed geometric mean), "low", "high"} (the
    99.5% one-sided bounds, each), or None with fewer than 3 usable pairs."""
    import math

    logs = sorted(math.log(a / b) for a, b in zip(orig_ms, cand_ms) if a and b and a > 0 and b > 0)
    n = len(logs)
    if n < 3:
        return None
    g = int(0.2 * n)
    kept = logs[g:n - g]
    h = len(kept)
    centre = sum(kept) / h
    wins = [logs[g]] * g + kept + [logs[n - g - 1]] * g  # winsorised: the trimmed ends at their edge values
    w_mean = sum(wins) / n
    w_var = sum((x - w_mean) ** 2 for x in wins) / (n - 1)
    half = _t995(h - 1) * math.sqrt((n - 1) * w_var / (h * (h - 1)))
    return {"n": n, "ratio": math.exp(centre), "low": math.exp(centre - half), "high": math.exp(centre + half)}


def rounds_enough(orig_ms, cand_ms, min_rounds: int, max_rounds: int, width: float = 0.03) -> bool:
    """Stop timing? After `min_rounds`, once the interval's half-width is within ±`width` (a
    fraction), or at `max_rounds`. The interval's width, not where it lies, decides: stopping
    once the answer looks good would make noise look like a gain."""
    import math

    n = min(len(orig_ms), len(cand_ms))
    if n >= max_rounds:
        return True
    if n < min_rounds:
        return False
    found = ratio_interval(orig_ms, cand_ms)
    return found is not None and math.log(found["high"] / found["low"]) / 2 <= math.log1p(width)
