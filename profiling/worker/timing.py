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
