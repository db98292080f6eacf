"""An autotuned kernel run with one of its configs, chosen by index, without benchmarking.

The autotuner times every config before its first launch, and its timer asks Triton's driver for a
GPU: in the interpreter that raises ("0 active drivers"). The verifier cycles through the configs
(every one must be correct), the capture takes the first (its launches must run at all); both go
through `run_one`. Standalone (triton only): imported by bare name in the worker.
"""

from __future__ import annotations


def run_one(tuner_run, tuner, index: int, args: tuple, kwargs: dict):
    """`tuner_run(tuner, *args, **kwargs)` (Autotuner.run, unpatched) with only config `index`
    (modulo their number) left to it, so that it launches that one untimed."""
    saved = tuner.configs
    tuner.configs = [saved[index % len(saved)]]
    try:
        return tuner_run(tuner, *args, **kwargs)
    finally:
        tuner.configs = saved


def describe(tuner, index: int) -> str:
    """What `run_one` ran, for a report: "config 1 of 6 (BLOCK_N=64, num_warps=2)"."""
    configs = tuner.configs
    config = configs[index % len(configs)]
    values = [f"{k}={v}" for k, v in (getattr(config, "kwargs", None) or {}).items()]
    for opt in ("num_warps", "num_stages"):
        v = getattr(config, opt, None)
        if v is not None:
            values.append(f"{opt}={v}")
    return f"config {index % len(configs) + 1} of {len(configs)} ({', '.join(values)})"


def untimed_note(tuner, index: int) -> str:
    return f"autotuned: ran {describe(tuner, index)} without benchmarking (the interpreter cannot time configs)"
