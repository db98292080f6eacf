"""One side of a verification, the original or a candidate, loaded as a module from its text
(`Side`), and how one call of it runs under the verifier's instruments (`run_call`)."""

from __future__ import annotations

import contextlib
import os
import traceback

import harness
import record_cases
import torch
from verify_clock import CLOCK
from verify_inputs import flatten
from verify_tracking import GPU, OpRecorder, Tracker, guard_violations, poison_


class Side:
    """One module (original or candidate) loaded from text, with its harness entry points."""

    def __init__(self, tag: str, name: str, text: str, workdir: str, package_path: str | None = None,
                 import_folders=()):
        folder = os.path.join(workdir, tag)
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.realpath(os.path.join(folder, f"{name}.py"))
        self.package_path = package_path
        with open(self.path, "w", encoding="utf-8") as fh:
            fh.write(text)
        self.module = harness.load_module(self.path, name=f"tritonlens_verify_{tag}_{name}",
                                          package_path=package_path, import_folders=import_folders)
        self.uses_dot = ".dot(" in text

    def resolve(self, fn, original: Side):
        """This side's counterpart of the original harness function `fn`: the function of that name,
        or a harness's own function made to call this side (a recorded launch: this side's kernel of
        that name). None: this side lacks it."""
        if self is original:
            return fn
        if isinstance(fn, record_cases.RecordLaunch):
            return fn.bind(self.module)
        return harness.counterpart(fn, self.module, [original.path, original.package_path])


def run_call(tracker: Tracker, side: Side, fn, args, kwargs, poison_args=(), config_index=None,
             phase: str = "candidate"):
    """Call fn on (args, kwargs) (already private copies); returns (ret, launches, ops). `phase`:
    whose run the clock charges it to ("reference": the original's)."""
    with CLOCK.phase(phase):
        return _run_call(tracker, side, fn, args, kwargs, poison_args, config_index)


def _run_call(tracker: Tracker, side: Side, fn, args, kwargs, poison_args, config_index):
    before = tracker.launches.get(side.path, 0)
    tracker.ops = set()
    tracker.kernel_error = False
    tracker.force_config = config_index
    for t in poison_args:
        poison_(t)
    recorder = OpRecorder(tracker) if OpRecorder is not None else contextlib.nullcontext()
    tracker.poison = True
    tracker.record_ops = True
    try:
        with recorder:
            ret = fn(*args, **kwargs)
            if GPU:
                torch.cuda.synchronize()
    finally:
        tracker.poison = False
        tracker.record_ops = False
        tracker.force_config = None  # timing lets the autotuner choose
    tracker.violations = guard_violations()
    return ret, tracker.launches.get(side.path, 0) - before, set(tracker.ops)


def arg_tensors(args, kwargs) -> list:
    return [t for _, t in flatten((args, kwargs), [])]


def candidate_error(stage: str, exc: BaseException, in_kernel: bool = False) -> dict:
    text = str(exc)
    kind = type(exc).__name__
    if "CUDA error" in text or kind in ("AcceleratorError", "CudaError"):
        raise exc  # the context is gone: let the worker classify it and restart
    compile_like = in_kernel or "Compil" in kind or "compil" in text[:200].lower()
    return {"stage": stage, "type": "compile" if (stage == "run" and compile_like) else ("syntax" if isinstance(exc, SyntaxError) else "exception"),
            "message": f"{kind}: {text}"[:2000], "traceback": traceback.format_exc(limit=12)[-4000:]}
