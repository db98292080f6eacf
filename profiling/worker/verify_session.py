"""A verify session: the original and each candidate loaded as modules (`Side`), the cases, and the
original's reference outputs per (seed, case) and per value range, kept for the worker's life.

A reference is two runs of the original on the same inputs, with the outputs' buffers poisoned;
per output it keeps a mask of the elements a comparison counts: those the original writes (not
still holding the poison) where its two runs agree, and for a value range only the finite ones.
It also records which outputs the original writes at all (the ghost replay compares those) and
how many bytes of them (the timing's physical floor).

Cases: the job's harness, else the original's tritonlens_cases(), else the file's launch records
(record_cases.py: kernel-level cases, the largest launch first; no ragged shape, since a recorded
grid cannot follow one). A file inside a package is loaded as a module of that package (named
`<package>.tritonlens_verify_...`), so its relative imports work for the original and candidates."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import traceback

import torch

import harness
import record_cases
import verify_ranges
from verify_inputs import (
    agreeing,
    clone_tree,
    describe_shapes,
    flatten,
    outputs_diff,
    outputs_of,
    ragged_map,
    regenerate,
)
from verify_tracking import DEVICE, GPU, OpRecorder, Tracker, guard_violations, poison_, unwritten

class Side:
    """One module (original or candidate) loaded from text, with its harness entry points."""

    def __init__(self, tag: str, name: str, text: str, workdir: str, package_path: str | None = None,
                 import_folders=()):
        folder = os.path.join(workdir, tag)
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.realpath(os.path.join(folder, f"{name}.py"))
        with open(self.path, "w", encoding="utf-8") as fh:
            fh.write(text)
        self.module = harness.load_module(self.path, name=f"tritonlens_verify_{tag}_{name}",
                                          package_path=package_path, import_folders=import_folders)
        self.uses_dot = ".dot(" in text

    def resolve(self, fn, original: Side):
        """This side's counterpart of the original harness function `fn`, looked up by name (a
        recorded launch: this side's kernel of that name)."""
        if self is original:
            return fn
        if isinstance(fn, record_cases.RecordLaunch):
            return fn.bind(self.module)
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


class Session:
    def __init__(self, job):  # a messages.VerifyJob
        self.job = job
        self.workdir = os.path.realpath(os.getcwd())
        self.name = job.name or "kernel"
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"bad module name {self.name!r}")
        origin = job.origin_dir
        if origin and os.path.isdir(origin) and origin not in sys.path:
            sys.path.append(origin)  # after our folders: sibling imports only
        self.tracker = Tracker()
        self.tag = hashlib.sha1(job.original.encode()).hexdigest()[:10]
        # the user's file, where this machine has it: the package its copies are loaded into
        self.package_path = job.path if job.path and os.path.isfile(job.path) else None
        harness.add_sys_path(job.sys_path)
        try:
            self.original = Side(f"orig_{self.tag}", self.name, job.original, self.workdir, self.package_path,
                                 job.sys_path)
        except ImportError as exc:
            raise harness.HarnessError(harness.cannot_import(job.path or f"{self.name}.py", exc)) from exc
        sys.modules[self.name] = self.original.module  # an external harness imports it by name
        self.source = ""
        self.skipped: list[str] = []  # records that cannot be replayed, and why
        self.cases = self._cases()
        self.seeds = list(range(int(job.seeds)))
        self.ragged = None
        self.ragged_note = None
        self.ref_cache: dict = {}
        self.poisonable: dict = {}
        self._ranges: list | None = None
        self.unstable: dict = {}  # case -> per output, the elements two runs of the original disagree on

    def _cases(self):
        spec = self.job.harness
        if spec:
            hfile, sep, func = spec.rpartition("::")
            if not sep:
                raise harness.HarnessError(f"harness must be FILE.py::FUNCTION, got {spec!r}")
            module = harness.load_module(hfile)
            factory = getattr(module, func, None)
            where = spec
            self.source = "harness"
        else:
            factory = getattr(self.original.module, "tritonlens_cases", None)
            where = self.source = "tritonlens_cases"
        if not callable(factory) and self.job.records:
            self.source = "records"
            cases, self.skipped = record_cases.cases(self.original.module, self.job.records, DEVICE)
            if not cases:
                raise harness.HarnessError(f"no recorded launch of this file can be replayed: {self.skipped[0]}")
            return cases
        if not callable(factory):
            raise harness.HarnessError(harness.NO_CASES.replace("nothing to run", "no cases to verify on"))
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
        if self.job.ragged and self.source != "records":
            self.ragged = ragged_map(self.cases[0][1], self.cases[0][2])
            order.append((self.seeds[0], "ragged"))
        order += [(self.seeds[0], i) for i in range(1, len(self.cases))]
        for seed in self.seeds[1:]:
            order += [(seed, i) for i in range(len(self.cases))]
            if self.ragged is not None:
                order.append((seed, "ragged"))
        limit = self.job.max_checks
        return order[:limit] if limit else order

    def reference(self, seed, case, check_no):
        """Run the original on this check's inputs (cached per worker process)."""
        key = (seed, case)
        if key not in self.ref_cache:
            fn, args, kwargs = self.inputs(seed, case)
            try:
                self.ref_cache[key] = self._reference(case, fn, args, kwargs, check_no)
            except Exception as exc:
                if case != "ragged":
                    raise
                self.ref_cache[key] = None
                self.ragged_note = f"the original rejects the ragged shape ({type(exc).__name__}: {exc}); skipped"
        return self.ref_cache[key]

    def smallest_case(self) -> int:
        """The case whose tensors hold the fewest elements (ties: the first)."""
        sizes = [sum(t.numel() for _, t in flatten((a, k), [])) for _, a, k in self.cases]
        return min(range(len(sizes)), key=lambda i: sizes[i])

    def value_ranges(self) -> list:
        """The adversarial ranges this original is checked on (verify_ranges.py)."""
        if self._ranges is None:
            _, args, kwargs = self.cases[self.smallest_case()]
            self._ranges = verify_ranges.ranges_for(self.job.original, verify_ranges.first_float_dtype(args, kwargs))
        return self._ranges

    def range_reference(self, rng):
        """The original on the first seed's smallest case with the range's values (cached)."""
        key = ("range", rng.name)
        if key not in self.ref_cache:
            case = self.smallest_case()
            fn, args, kwargs = self.inputs(self.seeds[0], case)
            verify_ranges.apply_range(rng, args, kwargs, torch.Generator().manual_seed(7919))
            try:
                entry = self._reference(case, fn, args, kwargs, 0, finite_only=True)
            except Exception as exc:  # the original itself fails there: the range says nothing
                entry = {"skip": f"the original fails on it ({type(exc).__name__}: {str(exc)[:200]})"}
            if "skip" not in entry and entry["oob"]:
                entry = {"skip": "the original writes out of bounds there (data-dependent addresses?)"}
            if "skip" not in entry and not any(int(entry["masks"][i].sum()) for i in entry["writes"]
                                               if entry["masks"][i] is not None):
                entry = {"skip": "the original gives no finite element there"}
            entry["case"] = case
            self.ref_cache[key] = entry
        return self.ref_cache[key]

    def _reference(self, case, fn, args, kwargs, check_no, finite_only: bool = False) -> dict:
        """Run the original twice on (args, kwargs): its outputs, and per output the elements a
        comparison counts (those it writes, and where both runs agree; `finite_only`: finite ones)."""
        pristine = clone_tree((args, kwargs))
        written, probe = self._poisonable(case, fn, args, kwargs, check_no)
        runs = []
        # The interpreter runs programs in order: there, a case's first check (whose probe run is
        # the second run) tells which elements move between runs, and its later seeds reuse that.
        reuse = not GPU and not finite_only and probe is None and case in self.unstable
        while len(runs) < (1 if reuse else 2):
            if runs and probe is not None and not GPU and not finite_only:
                runs.append(probe)
                continue
            a, k = clone_tree((args, kwargs))
            poison = [t for i, t in enumerate(arg_tensors(a, k)) if i in written]
            ret, launches, ops = run_call(self.tracker, self.original, fn, a, k, poison, config_index=check_no)
            oob = bool(self.tracker.violations)
            runs.append(outputs_of(ret, a, k))
        outs = runs[0]
        masks, notes, writes, out_bytes, moving = [], [], [], 0, []
        inputs_after = {"arg" + p: t for p, t in flatten(pristine, [])}
        for j, (name, a) in enumerate(runs[0]):
            b = runs[1][j][1] if len(runs) > 1 and j < len(runs[1]) else a
            where = self.output_label(name)
            mask = None
            if a.shape == b.shape and a.dtype == b.dtype:
                blank_a, blank_b = unwritten(a), unwritten(b)
                blank = (blank_a | blank_b) if blank_a is not None else torch.zeros(a.shape, dtype=torch.bool)
                agree = agreeing(a, b, self.original.uses_dot, rounding_moves=GPU)
                if reuse:
                    earlier = self.unstable[case][j] if j < len(self.unstable[case]) else None
                    agree = ~earlier if earlier is not None and earlier.shape == a.shape else agree
                moving.append(~agree)
                mask = ~blank & agree
                unstable, n_blank = int((~agree & ~blank).sum()), int(blank.sum())
                if unstable:
                    notes.append(("unstable", f"the original is not deterministic: {unstable} of {a.numel()} elements "
                                  f"of the {where} differ between two runs; compared the {int(mask.sum())} "
                                  "deterministic ones"))
                if n_blank and n_blank < a.numel():
                    notes.append(("unwritten", f"{where}: compared only the {a.numel() - n_blank} elements the "
                                  f"original writes ({n_blank} left unwritten)"))
                if finite_only:
                    mask &= torch.isfinite(a) if a.dtype.is_floating_point else True
                before = inputs_after.get(name)
                if before is None or name in self._poisoned_names(written, pristine) or not torch.equal(
                        before.nan_to_num() if before.dtype.is_floating_point else before,
                        a.nan_to_num() if a.dtype.is_floating_point else a):
                    writes.append(len(masks))
                    out_bytes += (a.numel() - n_blank) * a.element_size()
            else:
                moving.append(None)
            masks.append(mask)
        if not reuse and not finite_only:
            self.unstable[case] = moving
        run_diff = outputs_diff(runs[0], runs[1], self.original.uses_dot, masks) if GPU else 0.0
        return {"fn": fn, "inputs": pristine, "outs": outs, "launches": launches, "ops": ops,
                "written": written, "run_diff": run_diff, "shapes": describe_shapes(args, kwargs),
                "masks": masks, "notes": notes, "writes": writes, "out_bytes": out_bytes, "oob": oob}

    @staticmethod
    def _poisoned_names(written: set, pristine) -> set:
        return {"arg" + p for i, (p, _) in enumerate(flatten(pristine, [])) if i in written}

    def output_label(self, name: str) -> str:
        """How a refusal names an output: "returned value", "argument [0] (in place)", "output Y"."""
        if self.source == "records":  # the launch's arguments by name: arg[1]['Y']
            return "output " + name.rsplit("[", 1)[-1].strip("]'\"")
        return "returned value" if name.startswith("out") else "argument" + name[3:] + " (in place)"

    def _poisonable(self, case, fn, args, kwargs, check_no=None) -> tuple[set, list | None]:
        """Indices of tensor arguments the original overwrites completely (safe to fill with NaN),
        and the outputs of the probe run that found them (None when cached): the same as a
        reference run's, since what it leaves unpoisoned the original overwrites."""
        key = "ragged" if case == "ragged" else case
        if key in self.poisonable:
            return self.poisonable[key], None
        found: set = set()
        probe = None
        try:
            a1, k1 = clone_tree((args, kwargs))
            before = [t.clone() for t in arg_tensors(a1, k1)]
            ret1, _, _ = run_call(self.tracker, self.original, fn, a1, k1, config_index=check_no)
            probe = outputs_of(ret1, a1, k1)
            after = arg_tensors(a1, k1)
            changed = [i for i, (b, a) in enumerate(zip(before, after))
                       if (b.dtype.is_floating_point and not torch.equal(b.nan_to_num(), a.nan_to_num()))]
            for i in changed:
                a2, k2 = clone_tree((args, kwargs))
                tensors = arg_tensors(a2, k2)
                ret, _, _ = run_call(self.tracker, self.original, fn, a2, k2, [tensors[i]], config_index=check_no)
                if not any(t.dtype.is_floating_point and bool(torch.isnan(t).any())
                           for _, t in outputs_of(ret, a2, k2)):
                    found.add(i)
        except Exception:
            found, probe = set(), None
        self.poisonable[key] = found
        return found, probe
