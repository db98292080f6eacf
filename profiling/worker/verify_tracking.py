"""The verifier's instruments: launch and torch-op accounting around the user's code, NaN-poisoned
allocations, and guard zones around every buffer (a missing mask shows as a changed zone or a NaN)."""

from __future__ import annotations

import os
import threading

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from triton.runtime import autotuner as _autotuner
from triton.runtime import jit as _jit
from tuner_choice import run_one
from verify_clock import CLOCK

try:
    from triton.runtime.interpreter import InterpretedFunction as _Interpreted
except Exception:  # pragma: no cover
    _Interpreted = None

try:
    from torch.utils._python_dispatch import TorchDispatchMode
except Exception:  # pragma: no cover - very old torch
    TorchDispatchMode = None

GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"
DEVICE = "cuda" if GPU else "cpu"

# aten ops that allocate, view or describe tensors: they do no work a kernel should do.
BOOKKEEPING = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "zero_", "fill_", "full", "full_like", "ones", "ones_like", "new_zeros", "new_full", "new_ones",
    "view", "_unsafe_view", "as_strided", "reshape", "t", "transpose", "permute", "expand", "unsqueeze",
    "squeeze", "slice", "select", "detach", "alias", "lift_fresh", "lift_fresh_copy", "view_as",
    "flatten", "unflatten", "split", "chunk", "unbind", "narrow", "_reshape_alias", "is_nonzero",
    "_local_scalar_dense", "item", "sym_size", "sym_stride", "sym_numel", "size", "stride",
    "scalar_tensor", "arange", "resize_", "set_", "isnan", "any", "_has_compatible_shallow_copy_type",
    "record_stream", "equal",
}
_POISON_INT = -123456789
MAX_DISCOVERED = 512  # launches one precompile call may make


class Tracker:
    """Counts Triton launches per source file; records aten ops run outside kernel launches;
    poisons torch.empty* allocations made outside kernel launches; forces autotune configs."""

    def __init__(self):
        self.local = threading.local()
        self.launches: dict[str, int] = {}
        self.ops: set[str] = set()
        self.poison = False
        self.record_ops = False
        self.force_config: int | None = None
        self.kernel_error = False
        self.violations: list[str] = []
        self.ghost_path: str | None = None  # launches of kernels defined in this file do nothing
        self.ghost_launches = 0
        # precompile: every launch only compiles (warm-up), under Triton's AsyncCompileMode
        self.discover = False
        self.discovered = 0
        self._saved = []

    def in_kernel(self) -> bool:
        return getattr(self.local, "depth", 0) > 0

    def __enter__(self):
        tracker = self

        def wrap(cls):
            original = cls.run

            def run(kernel, *args, grid, warmup, **kwargs):
                if warmup:
                    return original(kernel, *args, grid=grid, warmup=warmup, **kwargs)
                fn = getattr(kernel, "fn", None)
                code = getattr(fn, "__code__", None)
                if tracker.discover:
                    tracker.discovered += 1
                    if tracker.discovered > MAX_DISCOVERED:  # a wrapper looping on what its kernels never wrote
                        raise RuntimeError("precompile: too many launches in one call")
                    return original(kernel, *args, grid=grid, warmup=True, **kwargs)
                if code is not None:
                    path = os.path.realpath(code.co_filename)
                    if path == tracker.ghost_path:
                        tracker.ghost_launches += 1
                        return None
                    tracker.launches[path] = tracker.launches.get(path, 0) + 1
                tracker.local.depth = getattr(tracker.local, "depth", 0) + 1
                try:
                    return original(kernel, *args, grid=grid, warmup=warmup, **kwargs)
                except BaseException:
                    tracker.kernel_error = True  # raised while compiling / running a kernel
                    raise
                finally:
                    tracker.local.depth -= 1

            self._saved.append((cls, "run", original))
            cls.run = run

        wrap(_jit.JITFunction)
        do_compile = getattr(_jit.JITFunction, "_do_compile", None)  # where a cache miss compiles
        if do_compile is not None:
            def timed_compile(*args, **kwargs):
                with CLOCK.phase("compile"):
                    return do_compile(*args, **kwargs)

            self._saved.append((_jit.JITFunction, "_do_compile", do_compile))
            _jit.JITFunction._do_compile = timed_compile
        if _Interpreted is not None:
            wrap(_Interpreted)

        tuner_run = _autotuner.Autotuner.run

        def autotuner_run(tuner, *args, **kwargs):
            # The interpreter has no timer to tune with, and every config must be correct anyway:
            # each check runs one config, chosen round-robin, so all of them get verified.
            if tracker.discover:  # compile every config; timing launches that never ran would pick one
                for i in range(len(tuner.configs)):
                    run_one(tuner_run, tuner, i, args, kwargs)
                return None
            if tracker.force_config is None or len(tuner.configs) <= 1:
                return tuner_run(tuner, *args, **kwargs)
            return run_one(tuner_run, tuner, tracker.force_config, args, kwargs)

        self._saved.append((_autotuner.Autotuner, "run", tuner_run))
        _autotuner.Autotuner.run = autotuner_run
        if GPU and "do_bench" in _autotuner.Autotuner.__dict__:
            # An autotuner picks its config with do_bench, whose L2 flush leaves dirty lines that a
            # 10 µs kernel pays for: its configs all look alike and the pick is a draw. A/B rounds
            # between an original and a candidate that each drew differently measured a swiglu
            # backward 1.60x faster that another process timed at 0.98x. Both sides pick with the
            # timer the rounds use.
            self._saved.append((_autotuner.Autotuner, "do_bench", _autotuner.Autotuner.__dict__["do_bench"]))
            _autotuner.Autotuner.do_bench = property(
                lambda tuner: getattr(tuner, "_do_bench", None) or _autotune_timer)

        for name in ("empty", "empty_like", "empty_strided"):
            original = getattr(torch, name)

            def poisoned(*args, __original=original, **kwargs):
                out = __original(*args, **kwargs)
                if tracker.poison and not tracker.in_kernel() and isinstance(out, torch.Tensor):
                    out = _guarded_copy_of(out)
                return out

            self._saved.append((torch, name, original))
            setattr(torch, name, poisoned)
        new_empty = torch.Tensor.new_empty

        def poisoned_new_empty(self_, *args, **kwargs):
            out = new_empty(self_, *args, **kwargs)
            if tracker.poison and not tracker.in_kernel():
                out = _guarded_copy_of(out)
            return out

        self._saved.append((torch.Tensor, "new_empty", new_empty))
        torch.Tensor.new_empty = poisoned_new_empty
        return self

    def __exit__(self, *exc):
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved.clear()


def _autotune_timer(kernel_call, quantiles=None, **_):
    import timing  # the worker's folder is on sys.path

    ms = timing.bench(kernel_call, warmup_ms=10.0, rep_ms=50.0)
    return [ms] * len(quantiles) if quantiles else ms


raw_empty = torch.empty


def span_of(t: torch.Tensor) -> int:
    if t.numel() == 0:
        return 0
    return t.storage_offset() + sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1


def _guarded_copy_of(t: torch.Tensor) -> torch.Tensor:
    """A NaN-poisoned, guarded tensor with t's shape, strides and dtype (t's contents are garbage anyway)."""
    if t.numel() == 0 or t.requires_grad:
        poison_(t)
        return t
    base, off = guarded_empty(span_of(t), t.dtype, t.device)
    return base.as_strided(t.shape, t.stride(), off + t.storage_offset())


if TorchDispatchMode is not None:
    class OpRecorder(TorchDispatchMode):
        def __init__(self, tracker: Tracker):
            super().__init__()
            self.tracker = tracker

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if self.tracker.record_ops and not self.tracker.in_kernel():
                name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
                self.tracker.ops.add(name)
            return func(*args, **(kwargs or {}))
else:  # pragma: no cover
    OpRecorder = None


# Every buffer a check hands to a kernel, and every torch.empty* the wrapper makes, sits between two
# poisoned guard zones. A write past either end changes a zone (caught after the run); a read past
# an end loads NaN, which poisons the result. That is how a missing mask shows in the interpreter,
# where an out-of-bounds access is otherwise silent.
GUARD = 4096  # elements on each side
GUARDS: list = []


_GUARD_BITS = {  # (integer view, quiet-NaN base, payload range): each buffer gets its own NaN payload,
    torch.float32: (torch.int32, 0x7FC00000, 0x3FFFFF),  # so data copied out of one buffer's guard
    torch.float16: (torch.int16, 0x7E00, 0x1FF),  # into another's is still a change
    torch.bfloat16: (torch.int16, 0x7FC0, 0x3F),
    torch.float64: (torch.int64, 0x7FF8000000000000, 0xFFFFFFFF),
}
_guard_count = [0]


# A finite pattern instead, for an original whose results do not depend on what it reads past
# an end (V loaded unmasked past the last key, then weighted by p = 0): NaN there made each of its
# outputs NaN, and nothing could be verified. Writes past an end still change the zone.
_FINITE_GUARD_BITS = {
    torch.float32: (torch.int32, 0x3F800000, 0x3FFF),  # 1.0 and the floats just above it
    torch.float16: (torch.int16, 0x3C00, 0x1FF),
    torch.bfloat16: (torch.int16, 0x3F80, 0x3F),
    torch.float64: (torch.int64, 0x3FF0000000000000, 0xFFFFFFFF),
}
_finite_guards = [False]


def use_finite_guards(on: bool) -> None:
    _finite_guards[0] = bool(on)


def finite_guards() -> bool:
    return _finite_guards[0]


def _guard_pattern(zone: torch.Tensor, index: int):
    spec = (_FINITE_GUARD_BITS if _finite_guards[0] else _GUARD_BITS).get(zone.dtype)
    if spec is not None:
        itype, base, span = spec
        return zone.view(itype), base + 1 + index % span
    if zone.dtype.is_floating_point or zone.dtype.is_complex:
        return None, None
    if zone.dtype == torch.bool:
        return zone, True
    info = torch.iinfo(zone.dtype)
    return zone, (info.max - index % 97) if info.min == 0 else (_POISON_INT + index % 9973) if info.bits >= 32 else (info.min + index % 97)


def guarded_empty(need: int, dtype, device) -> tuple[torch.Tensor, int]:
    """(base, offset): a buffer of need + 2*GUARD elements; the payload starts at `offset`, both
    guard zones hold this buffer's own poison pattern."""
    base = raw_empty(max(need, 1) + 2 * GUARD, dtype=dtype, device=device)
    poison_(base)
    _guard_count[0] += 1
    index = _guard_count[0]
    view, value = _guard_pattern(base, index)
    if view is not None:
        with torch.no_grad():
            view[:GUARD].fill_(value)
            view[GUARD + max(need, 1):].fill_(value)
    GUARDS.append((base, GUARD, max(need, 1), index))
    return base, GUARD


def guard_violations() -> list[str]:
    """Describe guard zones that changed since allocation; clears the registry."""
    bad = []
    for base, off, need, index in GUARDS:
        view, value = _guard_pattern(base, index)
        if view is None:
            continue
        for name, zone in (("before the start", view[:off]), ("past the end", view[off + need:])):
            changed = int((zone != value).sum())
            if changed:
                dtype = str(base.dtype).replace("torch.", "")
                bad.append(f"{changed} element(s) written {name} of a {need}-element {dtype} buffer")
    GUARDS.clear()
    return bad


# The poison of a float buffer is a NaN with its own sign and payload, unlike the NaN arithmetic
# makes (0/0) and the guard zones' patterns: an element still holding these bits was never written.
_POISON_BITS = {
    torch.float32: (torch.int32, 0xFFC0DEAD - (1 << 32)),
    torch.float16: (torch.int16, 0xFE5A - (1 << 16)),
    torch.bfloat16: (torch.int16, 0xFFDA - (1 << 16)),
    torch.float64: (torch.int64, 0xFFF80000DEADBEEF - (1 << 64)),
}


def _int_poison(dtype) -> int:
    info = torch.iinfo(dtype)
    return max(info.min, min(info.max, _POISON_INT)) if info.min < 0 else info.max


def poison_(t: torch.Tensor) -> None:
    with torch.no_grad():
        spec = _POISON_BITS.get(t.dtype)
        if spec is not None:
            t.view(spec[0]).fill_(spec[1])
        elif t.dtype.is_floating_point or t.dtype.is_complex:
            t.fill_(float("nan"))
        elif t.dtype == torch.bool:
            t.fill_(True)
        else:
            t.fill_(_int_poison(t.dtype))


def unwritten(t: torch.Tensor) -> torch.Tensor | None:
    """Where `t` still holds the poison (a bool mask), or None where poison cannot be told from a
    value (booleans, and floats without a payload of their own: any NaN counts there)."""
    with torch.no_grad():
        spec = _POISON_BITS.get(t.dtype)
        if spec is not None:
            return t.view(spec[0]) == spec[1]
        if t.dtype.is_floating_point or t.dtype.is_complex:
            return torch.isnan(t)
        if t.dtype == torch.bool:
            return None
        return t == _int_poison(t.dtype)
