"""Job "verify": run an original kernel file and candidate rewrites side by side and report evidence.

Standalone (stdlib + torch + triton), like the rest of this folder; the parts are verify_tracking.py
(launch and op accounting, poisoned allocations, guard zones), verify_inputs.py (seeded and ragged
inputs, comparison) and verify_session.py (the loaded original and candidates, their references). The
candidate's code is untrusted (it may come from an LLM): it only ever runs here, in the worker.
This module gathers evidence; tritonlens.rewrite.verify decides what the evidence means.

The job is a messages.VerifyJob; the result a messages.VerifyResult, one messages.Evidence per
candidate.

What a check does: fresh random inputs of the case's layout (seeded; never zeros), the original run
once as the reference, the candidate on clones of the same inputs; buffers the wrapper allocates with
torch.empty* are filled with NaN (integers: a sentinel) before the kernels run, and so are in-place
outputs the original fully overwrites, so an element nobody wrote shows up; returned tensors and every
tensor argument afterwards are compared. On the GPU the candidate runs twice per check and the two
results must agree (a moving error is a race). Ragged shapes: every dimension of the first case is
scaled down to an odd size (1000 -> 609), so no power-of-two block divides it.

Without a harness or tritonlens_cases(), the cases are the file's launch records (record_cases.py:
each recorded launch of a kernel on fresh data, no ragged shape). They exercise the Triton
functions only, so a candidate that changes none of them (a launch-site edit in the wrapper) is
reported as not exercised rather than checked.
"""

from __future__ import annotations

import hashlib
import os
import time

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before anything here imports triton

from record_cases import wrappers_only
from verify_inputs import clone_tree, compare, outputs_diff, outputs_of
from verify_session import Session, Side, arg_tensors, candidate_error, run_call
from verify_tracking import BOOKKEEPING, GPU, GUARDS, Tracker


def check_candidate(session: Session, cand, quick: bool = False) -> dict:
    """The evidence (a messages.Evidence as JSON) on one messages.VerifyCandidate."""
    ev = {"id": cand.id, "error": None, "checks": [], "launches": 0, "calls": 0, "ops_added": [],
          "stability": "checked" if GPU else "interpreter is deterministic: not checked",
          "ragged_sizes": None, "ragged_note": None, "timing": None, "extra": {}}
    try:
        side = Side(f"cand_{session.tag}_{cand.id}", session.name, cand.source, session.workdir,
                    session.package_path, session.job.sys_path)
    except SyntaxError as exc:
        ev["error"] = {"stage": "import", "type": "syntax", "message": f"SyntaxError: {exc}", "traceback": ""}
        return ev
    except Exception as exc:
        ev["error"] = candidate_error("import", exc)
        return ev
    ev["_side"] = side
    if session.source == "records" and wrappers_only(session.job.original, cand.source):
        ev["error"] = {"stage": "cases", "type": "unexercised", "traceback": "",
                       "message": "recorded launches replay the kernels, not the wrapper this candidate "
                                  "changes: check it with tritonlens_cases() or --harness"}
        return ev
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
            tensors = arg_tensors(args, kwargs)
            poison = [t for i, t in enumerate(tensors) if i in ref["written"]]
            try:
                ret, launches, ops = run_call(session.tracker, side, fn, args, kwargs, poison,
                                              config_index=check_no)
            except Exception as exc:
                GUARDS.clear()
                ev["error"] = candidate_error("run", exc, in_kernel=session.tracker.kernel_error)
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
                if session.source == "records":  # the launch's arguments by name: arg[1]['Y']
                    where = "output " + name.rsplit("[", 1)[-1].strip("]'\"")
                result["reason"] = f"{where}: {result['reason']}"
                worst = result
                break
            if (result.get("rel_err") or 0) >= (worst.get("rel_err") or 0):
                worst = result
        check.update({k: worst.get(k) for k in ("rel_err", "max_err", "tol")})
        check["ok"] = bool(worst["ok"])
        check["reason"] = worst.get("reason")
        if check["ok"] and len(runs) > 1:
            diff = outputs_diff(runs[0], runs[1], side.uses_dot)
            check["run_diff"] = diff
            allowed = max((check["tol"] or 0) * 0.1, 4 * ref["run_diff"], 1e-7)
            if diff > allowed:
                check["ok"] = False
                check["reason"] = (f"unstable: two runs on the same inputs differ by {diff:.3g} "
                                   f"(original: {ref['run_diff']:.3g}) — a race")
        if not check["ok"]:
            break
    ev["ragged_note"] = ev["ragged_note"] or session.ragged_note
    added = sorted(op for op in ops_cand - ops_orig if op.rstrip("_") not in BOOKKEEPING)
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


def handle(job) -> dict:
    action = job.action
    if action not in ("check", "tune"):
        raise ValueError(f"unknown verify action {action!r}")
    if not job.original:
        raise ValueError("job needs 'original' (the original file's text)")
    key = (hashlib.sha1(job.original.encode()).hexdigest(), job.name, job.harness, job.seeds, job.ragged,
           job.path, tuple(r.key or repr(r.to_json()) for r in job.records or ()))
    session = _sessions.get(key)
    with Tracker() as tracker:
        if session is None:
            session = Session(job)
            _sessions.clear()
            _sessions[key] = session
        session.tracker = tracker
        session.job = job
        result = {"mode": "gpu" if GPU else "interpreter", "device": _device_name(),
                  "cases": len(session.cases), "seeds": len(session.seeds), "candidates": [],
                  "source": session.source}
        timing = job.timing if GPU else None
        for cand in job.candidates:
            t0 = time.perf_counter()
            ev = check_candidate(session, cand, quick=(action == "tune"))
            side = ev.pop("_side", None)
            passed = ev["error"] is None and ev["checks"] and all(c["ok"] for c in ev["checks"])
            if passed and side is not None and GPU:
                try:
                    if action == "tune":
                        rep = float((job.tune or {}).get("rep_ms", 25))
                        fn_a, args, kwargs = session.inputs(0, 0)
                        fn_b = side.resolve(fn_a, session.original)
                        a, k = clone_tree((args, kwargs))
                        fn_b(*a, **k)
                        ev["timing"] = {"cand_ms": [float(_timer(fn_b, a, k, rep))]}
                    elif timing:
                        ev["timing"] = time_ab(session, side, int(timing.get("rounds", 7)),
                                               float(timing.get("rep_ms", 40)))
                except Exception as exc:
                    ev["error"] = candidate_error("timing", exc)
            ev["seconds"] = round(time.perf_counter() - t0, 3)
            result["candidates"].append(ev)
        if action == "check" and GPU and timing and job.baseline:
            fn_a, args, kwargs = session.inputs(0, 0)
            a, k = clone_tree((args, kwargs))
            fn_a(*a, **k)
            result["baseline_ms"] = float(_timer(fn_a, a, k, float(timing.get("rep_ms", 40))))
    return result
