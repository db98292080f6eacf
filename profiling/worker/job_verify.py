"""Job "verify": run an original kernel file and candidate rewrites side by side and report evidence.

Standalone (stdlib + torch + triton): shipped as a plain file like the rest of this folder. The
candidate's code is untrusted (it may come from an LLM): it only ever runs here, in the worker.
This module gathers evidence; tritonlens.rewrite.verify decides what the evidence means.

Job
  {"kind": "verify", "action": "check" | "tune",
   "name": "matmul",                      module stem (files are written as <cwd>/<tag>/<name>.py)
   "original": TEXT, "origin_dir": DIR?,  DIR (if it exists here) goes on sys.path for sibling imports
   "harness": "file.py::func"?,           else the original's tritonlens_cases()
   "candidates": [{"id": str, "source": TEXT}, ...],
   "seeds": 3, "ragged": true, "max_checks": null,
   "timing": {"rounds": 7, "rep_ms": 40} | null     (GPU only; ignored in the interpreter)
   "tune": {"rep_ms": 25}                           (action "tune": quick check + one timing each)}
Reply
  {"mode": "gpu" | "interpreter", "device": str, "original": {...}, "candidates": [EVIDENCE, ...]}
  EVIDENCE = {"id", "error": null | {"stage", "type", "message", "traceback"},
              "checks": [{"seed", "case", "label", "shapes", "ok", "reason", "rel_err", "max_err",
                          "tol", "run_diff"}],
              "launches": int (Triton launches of the candidate's own kernels, all checks),
              "calls": int, "ops_added": [aten ops the candidate ran outside kernels, the original not],
              "stability": "checked" | "interpreter is deterministic: not checked",
              "timing": null | {"orig_ms": [...], "cand_ms": [...]}, "extra": {...}}

What a check does: fresh random inputs of the case's layout (seeded; never zeros), the original run
once as the reference, the candidate on clones of the same inputs; buffers the wrapper allocates with
torch.empty* are filled with NaN (integers: a sentinel) before the kernels run, and so are in-place
outputs the original fully overwrites, so an element nobody wrote shows up; returned tensors and every
tensor argument afterwards are compared. On the GPU the candidate runs twice per check and the two
results must agree (a moving error is a race). Ragged shapes: every dimension of the first case is
scaled down to an odd size (1000 -> 609), so no power-of-two block divides it.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import sys
import threading
import time
import traceback

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from triton.runtime import autotuner as _autotuner
from triton.runtime import jit as _jit

try:
    from triton.runtime.interpreter import InterpretedFunction as _Interpreted
except Exception:  # pragma: no cover
    _Interpreted = None

try:
    from torch.utils._python_dispatch import TorchDispatchMode
except Exception:  # pragma: no cover - very old torch
    TorchDispatchMode = None

import harness

GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"
DEVICE = "cuda" if GPU else "cpu"

# aten ops that allocate, view or describe tensors: they do no work a kernel should do.
_BOOKKEEPING = {
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
                if code is not None:
                    path = os.path.realpath(code.co_filename)
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
        if _Interpreted is not None:
            wrap(_Interpreted)

        tuner_run = _autotuner.Autotuner.run

        def autotuner_run(tuner, *args, **kwargs):
            # The interpreter has no timer to tune with, and every config must be correct anyway:
            # each check runs one config, chosen round-robin, so all of them get verified.
            if tracker.force_config is None or len(tuner.configs) <= 1:
                return tuner_run(tuner, *args, **kwargs)
            saved = tuner.configs
            tuner.configs = [saved[tracker.force_config % len(saved)]]
            try:
                return tuner_run(tuner, *args, **kwargs)
            finally:
                tuner.configs = saved

        self._saved.append((_autotuner.Autotuner, "run", tuner_run))
        _autotuner.Autotuner.run = autotuner_run

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


_raw_empty = torch.empty


def _span(t: torch.Tensor) -> int:
    if t.numel() == 0:
        return 0
    return t.storage_offset() + sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1


def _guarded_copy_of(t: torch.Tensor) -> torch.Tensor:
    """A NaN-poisoned, guarded tensor with t's shape, strides and dtype (t's contents are garbage anyway)."""
    if t.numel() == 0 or t.requires_grad:
        poison_(t)
        return t
    base, off = guarded_empty(_span(t), t.dtype, t.device)
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


def _guard_pattern(zone: torch.Tensor, index: int):
    spec = _GUARD_BITS.get(zone.dtype)
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
    base = _raw_empty(max(need, 1) + 2 * GUARD, dtype=dtype, device=device)
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


def poison_(t: torch.Tensor) -> None:
    with torch.no_grad():
        if t.dtype.is_floating_point or t.dtype.is_complex:
            t.fill_(float("nan"))
        elif t.dtype == torch.bool:
            t.fill_(True)
        else:
            info = torch.iinfo(t.dtype)
            t.fill_(max(info.min, min(info.max, _POISON_INT)) if info.min < 0 else info.max)


# -- inputs ------------------------------------------------------------------------------------
def _flatten(value, out: list, path: str = "") -> list:
    if isinstance(value, torch.Tensor):
        out.append((path, value))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _flatten(v, out, f"{path}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, out, f"{path}[{k!r}]")
    elif isinstance(value, (bool, int, float)) and path.startswith("out"):
        out.append((path, torch.tensor(value)))
    return out


def ragged_size(s: int, used: set) -> int:
    if s <= 2:
        return s
    r = max(3, int(s * 0.61))
    if r % 2 == 0:
        r -= 1
    while r in used and r > 3:
        r -= 2
    return max(r, 3)


def ragged_map(args, kwargs) -> dict:
    sizes = sorted({int(d) for _, t in _flatten((args, kwargs), []) for d in t.shape if d > 2}, reverse=True)
    mapping, used = {}, set()
    for s in sizes:
        r = ragged_size(s, used)
        mapping[s] = r
        used.add(r)
    return mapping


def _layout_order(t: torch.Tensor) -> list[int]:
    """Dimensions from outermost to innermost, by stride (ties keep their order)."""
    return sorted(range(t.dim()), key=lambda d: (-t.stride(d), d))


def _random_like(t: torch.Tensor, shape, gen, exact_layout: bool) -> torch.Tensor:
    dev = t.device
    if exact_layout:
        need = max(_span(t), 1)
        base = _raw_empty(need, dtype=t.dtype, device=dev)
        out = base.as_strided(t.shape, t.stride(), t.storage_offset())
        fill = base
    else:
        order = _layout_order(t)
        dense = torch.empty([shape[d] for d in order], dtype=t.dtype, device=dev)
        inverse = [order.index(d) for d in range(t.dim())]
        out = dense.permute(*inverse) if t.dim() else dense
        fill = dense
    with torch.no_grad():
        if t.dtype.is_floating_point:
            ref = t.detach().float()
            finite = ref[torch.isfinite(ref)] if ref.numel() else ref
            std = float(finite.std()) if finite.numel() > 1 else 1.0
            mean = float(finite.mean()) if finite.numel() else 0.0
            if not math.isfinite(std) or std == 0.0:
                std = max(abs(mean), 1.0)
            cpu = torch.randn(fill.shape, generator=gen, dtype=torch.float32) * std + mean
            fill.copy_(cpu.to(t.dtype))
        elif t.dtype == torch.bool:
            fill.copy_(torch.randint(0, 2, fill.shape, generator=gen).bool())
        elif t.dtype.is_complex:
            fill.copy_(torch.randn(fill.shape, generator=gen, dtype=t.dtype))
        else:
            lo = int(t.min()) if t.numel() else 0
            hi = int(t.max()) if t.numel() else 1
            fill.copy_(torch.randint(lo, hi + 1, fill.shape, generator=gen).to(t.dtype))
    return out


def regenerate(value, gen, mapping: dict | None):
    """Same structure and layout as `value`, fresh random data; `mapping` rescales sizes."""
    if isinstance(value, torch.Tensor):
        shape = [mapping.get(int(d), int(d)) for d in value.shape] if mapping else list(value.shape)
        return _random_like(value, shape, gen, exact_layout=not mapping)
    if isinstance(value, tuple):
        return tuple(regenerate(v, gen, mapping) for v in value)
    if isinstance(value, list):
        return [regenerate(v, gen, mapping) for v in value]
    if isinstance(value, dict):
        return {k: regenerate(v, gen, mapping) for k, v in value.items()}
    if mapping and isinstance(value, int) and not isinstance(value, bool) and value in mapping:
        return mapping[value]
    return value


def clone_tree(value):
    if isinstance(value, torch.Tensor):
        if value.numel() == 0:
            return value.clone()
        # keep the layout (strides, storage offset); guard zones around it catch out-of-bounds access
        base, off = guarded_empty(_span(value), value.dtype, value.device)
        out = base.as_strided(value.shape, value.stride(), off + value.storage_offset())
        with torch.no_grad():
            out.copy_(value)
        return out
    if isinstance(value, tuple):
        return tuple(clone_tree(v) for v in value)
    if isinstance(value, list):
        return [clone_tree(v) for v in value]
    if isinstance(value, dict):
        return {k: clone_tree(v) for k, v in value.items()}
    return value


def describe_shapes(args, kwargs) -> str:
    shapes = ["×".join(str(d) for d in t.shape) or "scalar" for _, t in _flatten((args, kwargs), [])]
    return ", ".join(shapes[:6])


# -- comparing ---------------------------------------------------------------------------------
def tolerance(dtype: torch.dtype, uses_dot: bool) -> tuple[float, float]:
    """(relative-norm tolerance, max elementwise error relative to the reference's RMS)."""
    if dtype in (torch.float16, torch.bfloat16):
        return 1e-2, 6e-2
    if dtype == torch.float32:
        return (1e-3, 1e-2) if uses_dot else (1e-5, 1e-4)
    if dtype == torch.float64:
        return 1e-9, 1e-8
    if dtype.is_floating_point:  # fp8 and friends
        return 1e-1, 5e-1
    return 0.0, 0.0


def compare(ref: torch.Tensor, out: torch.Tensor, uses_dot: bool) -> dict:
    if not isinstance(out, torch.Tensor):
        return {"ok": False, "reason": f"returned {type(out).__name__} where the original returned a tensor"}
    if tuple(ref.shape) != tuple(out.shape):
        return {"ok": False, "reason": f"shape {list(out.shape)} instead of {list(ref.shape)}"}
    if ref.dtype != out.dtype:
        return {"ok": False, "reason": f"dtype {out.dtype} instead of {ref.dtype}".replace("torch.", "")}
    tol, elem_tol = tolerance(ref.dtype, uses_dot)
    r = ref.detach().to("cpu")
    o = out.detach().to("cpu")
    if not (r.dtype.is_floating_point or r.dtype.is_complex):
        bad = int((r != o).sum())
        return {"ok": bad == 0, "reason": None if bad == 0 else f"{bad} of {r.numel()} elements differ",
                "rel_err": 0.0 if bad == 0 else float(bad) / max(1, r.numel()), "max_err": float(bad), "tol": 0.0}
    r = r.double()
    o = o.double()
    ref_nan = int(torch.isnan(r).sum())
    if ref_nan:
        return {"ok": False, "reason": f"the original's output holds {ref_nan} NaN: cannot verify this check",
                "tol": tol, "original_nan": True}
    out_nan = int(torch.isnan(o).sum())
    if out_nan:
        return {"ok": False, "reason": f"{out_nan} of {o.numel()} elements are NaN (unwritten or invalid)",
                "rel_err": float("inf"), "max_err": float("inf"), "tol": tol, "nan": out_nan}
    if r.numel() == 0:
        return {"ok": True, "rel_err": 0.0, "max_err": 0.0, "tol": tol}
    finite_r = torch.isfinite(r)
    if not torch.equal(finite_r, torch.isfinite(o)) or not torch.equal(r[~finite_r], o[~finite_r]):
        return {"ok": False, "reason": "infinities differ from the original's", "rel_err": float("inf"),
                "max_err": float("inf"), "tol": tol}
    diff = (o[finite_r] - r[finite_r])
    rf = r[finite_r]
    norm = float(rf.norm())
    rms = norm / math.sqrt(max(1, rf.numel()))
    abs_diff = float(diff.norm())
    rel = abs_diff / norm if norm > 0 else abs_diff
    max_err = float(diff.abs().max()) if diff.numel() else 0.0
    max_rel = max_err / rms if rms > 0 else max_err
    ok = rel <= tol and max_rel <= elem_tol
    reason = None
    if not ok:
        worst = int(diff.abs().argmax()) if diff.numel() else 0
        reason = (f"relative error {rel:.3g} (tolerance {tol:g})" if rel > tol else
                  f"an element is off by {max_rel:.3g}× the output's RMS (tolerance {elem_tol:g})")
        reason += f", worst at flat index {worst}"
    return {"ok": ok, "reason": reason, "rel_err": rel, "max_err": max_err, "tol": tol}


def outputs_of(ret, args, kwargs) -> list:
    """[(name, tensor)]: what the call returned, then every tensor argument after the call."""
    out = _flatten(ret, [], "out")
    out += [("arg" + p, t) for p, t in _flatten((args, kwargs), [])]
    return out


# -- running -----------------------------------------------------------------------------------
class Side:
    """One module (original or candidate) loaded from text, with its harness entry points."""

    def __init__(self, tag: str, name: str, text: str, workdir: str):
        folder = os.path.join(workdir, tag)
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.realpath(os.path.join(folder, f"{name}.py"))
        with open(self.path, "w", encoding="utf-8") as fh:
            fh.write(text)
        self.module = harness.load_module(self.path, name=f"tritonlens_verify_{tag}_{name}")
        self.uses_dot = ".dot(" in text

    def resolve(self, fn, original: Side):
        """This side's counterpart of the original harness function `fn`, looked up by name."""
        if self is original:
            return fn
        if getattr(fn, "__module__", None) != original.module.__name__:
            return None  # defined in an external harness: it calls the original module directly
        target = getattr(self.module, getattr(fn, "__name__", ""), None)
        return target if callable(target) else None


def run_call(tracker: Tracker, side: Side, fn, args, kwargs, poison_args=(), config_index=None):
    """Call fn on (args, kwargs) (already private copies); returns (ret, launches, ops)."""
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


def _arg_tensors(args, kwargs) -> list:
    return [t for _, t in _flatten((args, kwargs), [])]


def _error(stage: str, exc: BaseException, in_kernel: bool = False) -> dict:
    text = str(exc)
    kind = type(exc).__name__
    if "CUDA error" in text or kind in ("AcceleratorError", "CudaError"):
        raise exc  # the context is gone: let the worker classify it and restart
    compile_like = in_kernel or "Compil" in kind or "compil" in text[:200].lower()
    return {"stage": stage, "type": "compile" if (stage == "run" and compile_like) else ("syntax" if isinstance(exc, SyntaxError) else "exception"),
            "message": f"{kind}: {text}"[:2000], "traceback": traceback.format_exc(limit=12)[-4000:]}


class Session:
    def __init__(self, job: dict):
        self.job = job
        self.workdir = os.path.realpath(os.getcwd())
        self.name = job.get("name") or "kernel"
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"bad module name {self.name!r}")
        origin = job.get("origin_dir")
        if origin and os.path.isdir(origin) and origin not in sys.path:
            sys.path.append(origin)  # after our folders: sibling imports only
        self.tracker = Tracker()
        self.tag = hashlib.sha1(job["original"].encode()).hexdigest()[:10]
        self.original = Side(f"orig_{self.tag}", self.name, job["original"], self.workdir)
        sys.modules[self.name] = self.original.module  # an external harness imports it by name
        self.cases = self._cases()
        self.seeds = list(range(int(job.get("seeds", 3))))
        self.ragged = None
        self.ragged_note = None
        self.ref_cache: dict = {}
        self.poisonable: dict = {}

    def _cases(self):
        spec = self.job.get("harness")
        if spec:
            hfile, sep, func = spec.rpartition("::")
            if not sep:
                raise harness.HarnessError(f"harness must be FILE.py::FUNCTION, got {spec!r}")
            module = harness.load_module(hfile)
            factory = getattr(module, func, None)
            where = spec
        else:
            factory = getattr(self.original.module, "tritonlens_cases", None)
            where = "tritonlens_cases"
        if not callable(factory):
            raise harness.HarnessError(
                "the verifier needs explicit cases: define tritonlens_cases() in the file "
                "(yielding (fn, args) pairs) or pass --harness FILE.py::FUNC")
        cases = [harness._normalise_case(c, f"{where} case {i}") for i, c in enumerate(factory())]
        if not cases:
            raise harness.HarnessError(f"{where}() produced no cases")
        return cases

    # one check's inputs, deterministic in (seed, case)
    def inputs(self, seed: int, case) -> tuple:
        fn, args, kwargs = self.cases[0 if case == "ragged" else case]
        gen = torch.Generator().manual_seed(1000003 * (seed + 1) + (997 if case == "ragged" else case))
        mapping = self.ragged if case == "ragged" else None
        return fn, regenerate(args, gen, mapping), regenerate(kwargs, gen, mapping)

    def plan(self) -> list:
        order = [(self.seeds[0], 0)]
        if self.job.get("ragged", True):
            self.ragged = ragged_map(self.cases[0][1], self.cases[0][2])
            order.append((self.seeds[0], "ragged"))
        order += [(self.seeds[0], i) for i in range(1, len(self.cases))]
        for seed in self.seeds[1:]:
            order += [(seed, i) for i in range(len(self.cases))]
            if self.ragged is not None:
                order.append((seed, "ragged"))
        limit = self.job.get("max_checks")
        return order[:limit] if limit else order

    def reference(self, seed, case, check_no):
        """Run the original on this check's inputs (cached per worker process)."""
        key = (seed, case)
        if key in self.ref_cache:
            return self.ref_cache[key]
        fn, args, kwargs = self.inputs(seed, case)
        pristine = clone_tree((args, kwargs))
        written = self._poisonable(case, fn, args, kwargs)
        run_args, run_kwargs = clone_tree((args, kwargs))
        poison = [t for i, t in enumerate(_arg_tensors(run_args, run_kwargs)) if i in written]
        try:
            ret, launches, ops = run_call(self.tracker, self.original, fn, run_args, run_kwargs, poison,
                                          config_index=check_no)
        except Exception as exc:
            if case == "ragged":
                self.ref_cache[key] = None
                self.ragged_note = f"the original rejects the ragged shape ({type(exc).__name__}: {exc}); skipped"
                return None
            raise
        outs = outputs_of(ret, run_args, run_kwargs)
        run_diff = 0.0
        if GPU:
            a2, k2 = clone_tree((args, kwargs))
            p2 = [t for i, t in enumerate(_arg_tensors(a2, k2)) if i in written]
            ret2, _, _ = run_call(self.tracker, self.original, fn, a2, k2, p2, config_index=check_no)
            run_diff = _run_diff(outs, outputs_of(ret2, a2, k2), self.original.uses_dot)
        entry = {"fn": fn, "inputs": pristine, "outs": outs, "launches": launches, "ops": ops,
                 "written": written, "run_diff": run_diff, "shapes": describe_shapes(args, kwargs)}
        self.ref_cache[key] = entry
        return entry

    def _poisonable(self, case, fn, args, kwargs) -> set:
        """Indices of tensor arguments the original overwrites completely (safe to fill with NaN)."""
        key = "ragged" if case == "ragged" else case
        if key in self.poisonable:
            return self.poisonable[key]
        found: set = set()
        try:
            a1, k1 = clone_tree((args, kwargs))
            before = [t.clone() for t in _arg_tensors(a1, k1)]
            run_call(self.tracker, self.original, fn, a1, k1)
            after = _arg_tensors(a1, k1)
            changed = [i for i, (b, a) in enumerate(zip(before, after))
                       if (b.dtype.is_floating_point and not torch.equal(b.nan_to_num(), a.nan_to_num()))]
            for i in changed:
                a2, k2 = clone_tree((args, kwargs))
                tensors = _arg_tensors(a2, k2)
                ret, _, _ = run_call(self.tracker, self.original, fn, a2, k2, [tensors[i]])
                if not any(t.dtype.is_floating_point and bool(torch.isnan(t).any())
                           for _, t in outputs_of(ret, a2, k2)):
                    found.add(i)
        except Exception:
            found = set()
        self.poisonable[key] = found
        return found


def _run_diff(outs_a, outs_b, uses_dot) -> float:
    worst = 0.0
    for (_, a), (_, b) in zip(outs_a, outs_b):
        if a.dtype.is_floating_point and a.shape == b.shape:
            r = compare(a, b, uses_dot)
            worst = max(worst, r.get("rel_err", 0.0) if r.get("rel_err") is not None else 0.0)
    return worst


def check_candidate(session: Session, cand: dict, quick: bool = False) -> dict:
    ev = {"id": cand.get("id"), "error": None, "checks": [], "launches": 0, "calls": 0, "ops_added": [],
          "stability": "checked" if GPU else "interpreter is deterministic: not checked",
          "ragged_sizes": None, "ragged_note": None, "timing": None, "extra": {}}
    try:
        side = Side(f"cand_{session.tag}_{cand.get('id', 'x')}", session.name, cand["source"], session.workdir)
    except SyntaxError as exc:
        ev["error"] = {"stage": "import", "type": "syntax", "message": f"SyntaxError: {exc}", "traceback": ""}
        return ev
    except Exception as exc:
        ev["error"] = _error("import", exc)
        return ev
    ev["_side"] = side
    plan = session.plan()
    if quick:
        plan = plan[:2]
    ev["ragged_sizes"] = {str(k): v for k, v in (session.ragged or {}).items()}
    ops_orig: set = set()
    ops_cand: set = set()
    for check_no, (seed, case) in enumerate(plan):
        ref = session.reference(seed, case, check_no)
        if ref is None:
            ev["ragged_note"] = session.ragged_note
            continue
        fn = side.resolve(ref["fn"], session.original)
        label = "ragged" if case == "ragged" else f"case {case}"
        check = {"seed": seed, "case": case, "label": label, "shapes": ref["shapes"], "ok": False,
                 "reason": None, "rel_err": None, "max_err": None, "tol": None, "run_diff": None}
        ev["checks"].append(check)
        if fn is None:
            check["reason"] = f"the candidate no longer defines {getattr(ref['fn'], '__name__', '?')}()"
            break
        runs = []
        for attempt in range(2 if GPU else 1):
            args, kwargs = clone_tree(ref["inputs"])
            tensors = _arg_tensors(args, kwargs)
            poison = [t for i, t in enumerate(tensors) if i in ref["written"]]
            try:
                ret, launches, ops = run_call(session.tracker, side, fn, args, kwargs, poison,
                                              config_index=check_no)
            except Exception as exc:
                GUARDS.clear()
                ev["error"] = _error("run", exc, in_kernel=session.tracker.kernel_error)
                session.tracker.local.depth = 0
                check["reason"] = ev["error"]["message"]
                break
            ev["calls"] += 1
            ev["launches"] += launches
            if session.tracker.violations:
                check["reason"] = ("out-of-bounds write (a missing mask?): "
                                   + "; ".join(session.tracker.violations[:3]))
                check["oob"] = True
                break
            ops_cand |= ops
            runs.append(outputs_of(ret, args, kwargs))
        if ev["error"] or check.get("oob"):
            break
        ops_orig |= ref["ops"]
        outs = runs[0]
        if len(outs) != len(ref["outs"]):
            check["reason"] = f"{len(outs)} outputs instead of {len(ref['outs'])}"
            break
        worst = {"ok": True, "rel_err": 0.0, "max_err": 0.0, "tol": None}
        for (name, r), (_, o) in zip(ref["outs"], outs):
            result = compare(r, o, side.uses_dot or session.original.uses_dot)
            if not result["ok"]:
                where = "returned value" if name.startswith("out") else "argument" + name[3:] + " (in place)"
                result["reason"] = f"{where}: {result['reason']}"
                worst = result
                break
            if (result.get("rel_err") or 0) >= (worst.get("rel_err") or 0):
                worst = result
        check.update({k: worst.get(k) for k in ("rel_err", "max_err", "tol")})
        check["ok"] = bool(worst["ok"])
        check["reason"] = worst.get("reason")
        if check["ok"] and len(runs) > 1:
            diff = _run_diff(runs[0], runs[1], side.uses_dot)
            check["run_diff"] = diff
            allowed = max((check["tol"] or 0) * 0.1, 4 * ref["run_diff"], 1e-7)
            if diff > allowed:
                check["ok"] = False
                check["reason"] = (f"unstable: two runs on the same inputs differ by {diff:.3g} "
                                   f"(original: {ref['run_diff']:.3g}) — a race")
        if not check["ok"]:
            break
    ev["ragged_note"] = ev["ragged_note"] or session.ragged_note
    added = sorted(op for op in ops_cand - ops_orig if op.rstrip("_") not in _BOOKKEEPING)
    ev["ops_added"] = added
    return ev


# -- timing ------------------------------------------------------------------------------------
def _timer(fn, args, kwargs, rep_ms: float):
    import timing  # the worker's folder is on sys.path

    def call():
        fn(*args, **kwargs)

    return timing.bench(call, warmup_ms=max(5, int(rep_ms // 4)), rep_ms=rep_ms)


def time_ab(session: Session, side: Side, rounds: int, rep_ms: float) -> dict:
    """Interleaved A/B: original, candidate, original, candidate, ... on the same inputs."""
    fn_a, args, kwargs = session.inputs(0, 0)
    fn_b = side.resolve(fn_a, session.original)
    a_args = clone_tree((args, kwargs))
    b_args = clone_tree((args, kwargs))
    for _ in range(3):  # compile, autotune, allocator warm-up
        fn_a(*a_args[0], **a_args[1])
        fn_b(*b_args[0], **b_args[1])
    torch.cuda.synchronize()
    orig, cand = [], []
    for r in range(rounds):
        first, second = ((orig, fn_a, a_args), (cand, fn_b, b_args))
        if r % 2:  # alternate who goes first, so drift does not favour one side
            first, second = second, first
        for store, fn, (a, k) in (first, second):
            store.append(float(_timer(fn, a, k, rep_ms)))
    return {"orig_ms": orig, "cand_ms": cand, "rounds": rounds, "rep_ms": rep_ms}


# -- entry -------------------------------------------------------------------------------------
def _device_name() -> str:
    if GPU:
        return torch.cuda.get_device_name(0)
    return "cpu (triton interpreter)"


_sessions: dict = {}


def handle(job: dict) -> dict:
    action = job.get("action", "check")
    if action not in ("check", "tune"):
        raise ValueError(f"unknown verify action {action!r}")
    if not isinstance(job.get("original"), str):
        raise ValueError("job needs 'original' (the original file's text)")
    key = (hashlib.sha1(job["original"].encode()).hexdigest(), job.get("name"), job.get("harness"),
           int(job.get("seeds", 3)), bool(job.get("ragged", True)))
    session = _sessions.get(key)
    with Tracker() as tracker:
        if session is None:
            session = Session(job)
            _sessions.clear()
            _sessions[key] = session
        session.tracker = tracker
        session.job = job
        result = {"mode": "gpu" if GPU else "interpreter", "device": _device_name(),
                  "cases": len(session.cases), "seeds": len(session.seeds), "candidates": []}
        timing = job.get("timing") if GPU else None
        for cand in job.get("candidates", []):
            t0 = time.perf_counter()
            ev = check_candidate(session, cand, quick=(action == "tune"))
            side = ev.pop("_side", None)
            passed = ev["error"] is None and ev["checks"] and all(c["ok"] for c in ev["checks"])
            if passed and side is not None and GPU:
                try:
                    if action == "tune":
                        rep = float((job.get("tune") or {}).get("rep_ms", 25))
                        fn_a, args, kwargs = session.inputs(0, 0)
                        fn_b = side.resolve(fn_a, session.original)
                        a, k = clone_tree((args, kwargs))
                        fn_b(*a, **k)
                        ev["timing"] = {"cand_ms": [float(_timer(fn_b, a, k, rep))]}
                    elif timing:
                        ev["timing"] = time_ab(session, side, int(timing.get("rounds", 7)),
                                               float(timing.get("rep_ms", 40)))
                except Exception as exc:
                    ev["error"] = _error("timing", exc)
            ev["seconds"] = round(time.perf_counter() - t0, 3)
            result["candidates"].append(ev)
        if action == "check" and GPU and timing and job.get("baseline", True):
            fn_a, args, kwargs = session.inputs(0, 0)
            a, k = clone_tree((args, kwargs))
            fn_a(*a, **k)
            result["baseline_ms"] = float(_timer(fn_a, a, k, float(timing.get("rep_ms", 40))))
    return result
