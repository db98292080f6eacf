"""Job "verify": run an original kernel file and candidate rewrites side by side and report evidence.

Standalone (stdlib + torch + triton), like the rest of this folder; the parts are verify_tracking.py
(launch and op accounting, poisoned allocations, guard zones), verify_inputs.py (seeded and ragged
inputs, comparison) and verify_session.py (the loaded original and candidates, their references). The
candidate's code is untrusted (it may come from an LLM): it only ever runs here, in the worker.
This module gathers evidence; tritonlens.rewrite.verify decides what the evidence means.

The job is a messages.VerifyJob; the result a messages.VerifyResult, one messages.Evidence per
candidate.

What a check does: fresh random inputs of the case's layout (seeded; never zeros, copying the
harness's mean and spread); the original run twice as the reference; the candidate on clones of the
same inputs. Buffers the wrapper allocates with torch.empty* are filled with a NaN of our own bits
(integers: a sentinel) before the kernels run, and so are in-place outputs the original fully
overwrites, so an element nobody wrote shows up. Returned tensors and every tensor argument
afterwards are compared, on the elements the original writes (it may leave part of a torch.empty
buffer unwritten) where its two runs agree (a wrapper drawing random numbers is not deterministic);
the evidence's `notes` say what was left out. An original whose runs differ is rerun when a
comparison with it fails, each rerun leaving out what it moves too; past that, elements where the
candidate differs no more often than one more run of the original does are left out and counted
in a note. On the GPU the candidate runs twice per check and the two results must agree (a moving
error is a race). Ragged shapes: every dimension of the first case is scaled down to an odd size
(1000 -> 609), so no power-of-two block divides it. A case of real size (verify_session.REAL_SIZE)
is checked on the first seed only, the smaller cases on every seed; the A/B timing runs on the
performance case (the first), with more rounds until the ratio's interval is narrow (timing.rounds_enough).
Comparisons run on the device, a slice at a time (verify_inputs.compare). The result's `phases`
say where the job's time went (verify_clock.py).

After the ordinary checks pass: the value ranges of verify_ranges.py (values near exp's overflow,
tiny, zero, constant rows, ±1e3 shifts, x1e3 scale; chosen from the original's kernel text) on the
first seed's smallest case, compared only where the original's output is finite, with looser
tolerances; then a ghost replay (ghost_replay): the first check once more with the candidate's own
kernel launches made no-ops; if its outputs still equal the original's, the result does not come
from its kernels. The evidence also carries `out_bytes`, the bytes of output the timed case writes,
against which tritonlens.rewrite.verify holds a claimed time to the GPU's bandwidth.

Without a harness or tritonlens_cases(), the cases are the file's launch records (record_cases.py:
each recorded launch of a kernel on fresh data, no ragged shape). They exercise the Triton
functions only, so a candidate that changes none of them (a launch-site edit in the wrapper) is
reported as not exercised rather than checked.
"""

from __future__ import annotations

import hashlib
import os
import re
import time

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before anything here imports triton

import cuda_on_cpu
from record_cases import wrappers_only
from verify_clock import CLOCK
from verify_inputs import clone_tree, compare, outputs_diff, outputs_of, to_host, tolerance
from verify_original import original_runs
from verify_ranges import range_tolerance
from verify_precompile import precompile
from verify_session import Session, Side, arg_tensors, candidate_error, run_call
from verify_timing import time_candidate, timer
from verify_tracking import BOOKKEEPING, GPU, GUARDS, Tracker


def _new_check(seed, case, label: str, shapes: str, value_range: str | None = None) -> dict:
    return {"seed": seed, "case": case, "label": label, "shapes": shapes, "ok": False, "reason": None,
            "rel_err": None, "max_err": None, "tol": None, "run_diff": None, "range": value_range}


def _run_check(session: Session, side: Side, fn, ref: dict, check: dict, check_no: int, ev: dict,
               ops_cand: set, tols=None) -> bool:
    """Run the candidate on the reference's inputs and compare (fills `check`); False: stop here."""
    if ref.get("overflows"):
        check["reason"] = ("cannot verify: the original's outputs are NaN or infinite wherever it writes on these "
                           "inputs (they overflow it): give inputs it computes finite values on")
        return False
    runs = []
    for _ in range(2 if GPU else 1):
        args, kwargs = clone_tree(ref["inputs"])
        tensors = arg_tensors(args, kwargs)
        poison = [t for i, t in enumerate(tensors) if i in ref["written"]]
        try:
            ret, launches, ops = run_call(session.tracker, side, fn, args, kwargs, poison, config_index=check_no)
        except Exception as exc:
            GUARDS.clear()
            ev["error"] = candidate_error("run", exc, in_kernel=session.tracker.kernel_error)
            session.tracker.local.depth = 0
            check["reason"] = ev["error"]["message"]
            return False
        ev["calls"] += 1
        ev["launches"] += launches
        theirs = {_oob_kind(v) for v in ref.get("oob_writes", ())}
        own = [v for v in session.tracker.violations if _oob_kind(v) not in theirs]
        if own:  # the original's own out-of-bounds writes, repeated exactly, are its behaviour, not the rewrite's
            check["reason"] = "out-of-bounds write (a missing mask?): " + "; ".join(own[:3])
            check["oob"] = True
            return False
        ops_cand |= ops
        runs.append(outputs_of(ret, args, kwargs))
        if GPU and len(runs) == 1 and _no_room_for_another(runs[0]):
            # at real size a second run's inputs and outputs may not fit beside this one's: it waits
            # on the host, and comparisons move it back a slice at a time
            runs[0] = to_host(runs[0])
            del ret, args, kwargs, tensors, poison
            torch.cuda.empty_cache()
    outs = runs[0]
    if len(outs) != len(ref["outs"]):
        check["reason"] = f"{len(outs)} outputs instead of {len(ref['outs'])}"
        return False
    uses_dot = side.uses_dot or session.original.uses_dot
    masks = ref["masks"]
    worst = _compare_outputs(session, ref, outs, uses_dot, tols, masks)
    while not worst["ok"] and session.widen(ref):  # a racy original: what else its races move
        worst = _compare_outputs(session, ref, outs, uses_dot, tols, masks)
    if not worst["ok"]:
        masks = _racy(session, ref, runs, check, ev) or masks
        if masks is not ref["masks"]:
            worst = _compare_outputs(session, ref, outs, uses_dot, tols, masks)
    if worst["ok"] and ref["writes"] and not any(
            masks[j] is None or bool(masks[j].any()) for j in ref["writes"]):
        # every element the original writes moved between its two runs: a check that compares
        # none of them would pass anything
        worst = {"ok": False, "reason": "cannot verify: every element the original writes differs between two "
                                        "runs of the original (it is not deterministic)",
                 "rel_err": None, "max_err": None, "tol": None}
    check.update({k: worst.get(k) for k in ("rel_err", "max_err", "tol")})
    check["ok"] = bool(worst["ok"])
    check["reason"] = worst.get("reason")
    if check["ok"] and len(runs) > 1:
        # float atomics move the last digits between runs: within the comparison's own tolerance that
        # is rounding, not a race (a race moves whole values)
        allowed = max(check["tol"] or 0, 4 * ref["run_diff"], 1e-7)
        diff = outputs_diff(runs[0], runs[1], side.uses_dot, masks)
        while diff > allowed and masks is ref["masks"] and session.widen(ref):  # where the original moves too?
            diff = outputs_diff(runs[0], runs[1], side.uses_dot, masks)
        if diff > allowed and masks is ref["masks"]:
            masks = _racy(session, ref, runs, check, ev) or masks
            diff = outputs_diff(runs[0], runs[1], side.uses_dot, masks)
        check["run_diff"] = diff
        if diff > allowed:
            check["ok"] = False
            check["reason"] = (f"unstable: two runs on the same inputs differ by {diff:.3g} "
                               f"(original: {ref['run_diff']:.3g}) — a race")
    return check["ok"]


def _no_room_for_another(outs: list) -> bool:
    held = sum(t.numel() * t.element_size() for _, t in outs if t.device.type != "cpu")
    free, _total = torch.cuda.mem_get_info()
    return held > free / 2


def _oob_kind(violation: str) -> str:
    """"247 element(s) written past the end of a float32 buffer": the buffer's length left out, since
    a view's guarded copy may span more of its storage in one run than in another."""
    return re.sub(r" of a \d+-element", " of a", violation)


def _racy(session: Session, ref: dict, runs: list, check: dict, ev: dict) -> list | None:
    """Masks that also leave out what a racy original's further run moves (Session.racy_masks),
    with a note saying how many elements that was; None where that does not apply."""
    found = session.racy_masks(ref, runs)
    if found is None:
        return None
    masks, left = found
    if left:
        ev.setdefault("_racy", []).append(
            f"{left} more elements, where the candidate differs from the original no more often than another "
            f"run of the original does, were left out ({check['label']}, seed {check['seed']}")
    return masks


def _compare_outputs(session: Session, ref: dict, outs: list, uses_dot: bool, tols, masks: list) -> dict:
    """The first output that differs from the original's, else the one with the largest error."""
    worst = {"ok": True, "rel_err": 0.0, "max_err": 0.0, "tol": None}
    for (name, r), (_, o), mask in zip(ref["outs"], outs, masks):
        result = compare(r, o, uses_dot, mask=mask, tols=tols(r.dtype, uses_dot) if tols else None)
        if not result["ok"]:
            result["reason"] = f"{session.output_label(name)}: {result['reason']}"
            return result
        if (result.get("rel_err") or 0) >= (worst.get("rel_err") or 0):
            worst = result
    return worst


def _range_tols(dtype, uses_dot):
    return range_tolerance(dtype, tolerance(dtype, uses_dot))


def check_candidate(session: Session, cand, quick: bool = False) -> dict:
    """The evidence (a messages.Evidence as JSON) on one messages.VerifyCandidate."""
    ev = {"id": cand.id, "error": None, "checks": [], "launches": 0, "calls": 0, "ops_added": [],
          "stability": "checked" if GPU else "interpreter is deterministic: not checked",
          "ragged_sizes": None, "ragged_note": None, "timing": None, "extra": {}, "notes": [],
          "ranges_skipped": [], "ghost_ran": False, "ghost_failure": None, "out_bytes": None}
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
    ev["planned"] = session.planned
    once = session.one_seed_case()
    timed = session.timed_case()
    ev["ragged_sizes"] = {str(k): v for k, v in (session.ragged or {}).items()}
    ops_orig: set = set()
    ops_cand: set = set()
    ok = True
    for check_no, (seed, case) in enumerate(plan):
        ref = session.reference(seed, case, check_no)
        if ref is None:
            ev["ragged_note"] = session.ragged_note
            ev["planned"] -= 1  # the original rejects the ragged shape: a check that cannot run
            continue
        ok = _one(session, side, ref, _new_check(seed, case, "ragged" if case == "ragged" else f"case {case}",
                                                 ref["shapes"]), check_no, ev, ops_cand)
        if not ok:
            break
        ops_orig |= ref["ops"]
        if case == timed and ev["out_bytes"] is None:
            ev["out_bytes"] = ref["out_bytes"]
        if case == once and once is not None:
            ev["one_seed"] = ref["shapes"] + (" and its ragged shape" if session.ragged_once() else "")
    if ok and not quick and ev["checks"]:
        for rng in session.value_ranges():
            ref = session.range_reference(rng)
            if "skip" in ref:
                ev["ranges_skipped"].append(f'range "{rng.name}": {ref["skip"]}; skipped')
                continue
            check = _new_check(session.seeds[0], ref["case"], f'range "{rng.name}"', ref["shapes"], rng.name)
            if not _one(session, side, ref, check, 0, ev, ops_cand, tols=_range_tols):
                ok = False
                break
            ops_orig |= ref["ops"]
        if ok:
            ev["ghost_ran"], ev["ghost_failure"] = ghost_replay(session, side)
    ev["ragged_note"] = ev["ragged_note"] or session.ragged_note
    for found in ev.pop("_notes", {}).values():  # the first of each kind, and how often it recurs
        ev["notes"].append(found[0] + (f"; also on {len(found) - 1} more checks)" if len(found) > 1 else ")"))
    added = sorted(op for op in ops_cand - ops_orig if op.rstrip("_") not in BOOKKEEPING)
    ev["ops_added"] = added
    return ev


def _one(session, side, ref, check, check_no, ev, ops_cand, tols=None) -> bool:
    ev["checks"].append(check)
    fn = side.resolve(ref["fn"], session.original)
    if fn is None:
        check["reason"] = f"the candidate no longer defines {getattr(ref['fn'], '__name__', '?')}()"
        return False
    ok = _run_check(session, side, fn, ref, check, check_no, ev, ops_cand, tols)
    where = f"{check['label']}, seed {check['seed']}"
    notes = [(kind, f"{text} ({where}") for kind, text in ref["notes"]]  # after the check: reruns add to them
    notes += [("racy", text) for text in ev.pop("_racy", [])]
    for kind, text in notes:
        ev.setdefault("_notes", {}).setdefault(kind, []).append(text)
    return ok


def ghost_replay(session: Session, side: Side) -> tuple[bool, str | None]:
    """Run the candidate once more on the first check's inputs with every launch of a kernel its
    own file defines made a no-op (helpers that return values only run inside kernels). If the
    outputs still equal the original's, its kernels do not make the result. (ran, refusal)."""
    ref = session.reference(session.seeds[0], 0, 0)
    fn = side.resolve(ref["fn"], session.original) if ref else None
    if fn is None or not ref["writes"]:
        return False, None
    tracker = session.tracker
    args, kwargs = clone_tree(ref["inputs"])
    poison = [t for i, t in enumerate(arg_tensors(args, kwargs)) if i in ref["written"]]
    real_before = sum(tracker.launches.values())
    tracker.ghost_path, tracker.ghost_launches = side.path, 0
    try:
        ret, _, _ = run_call(tracker, side, fn, args, kwargs, poison, config_index=0)
    except Exception:  # the wrapper needs what its kernels make: the work is theirs
        GUARDS.clear()
        tracker.local.depth = 0
        return True, None
    finally:
        tracker.ghost_path = None
    if sum(tracker.launches.values()) != real_before:
        return False, None  # kernels of another file ran for real: this replay proves nothing
    outs = outputs_of(ret, args, kwargs)
    if len(outs) != len(ref["outs"]):
        return True, None
    uses_dot = side.uses_dot or session.original.uses_dot
    compared = 0
    for i in ref["writes"]:
        (_, r), (_, o), mask = ref["outs"][i], outs[i], ref["masks"][i]
        if not compare(r, o, uses_dot, mask=mask)["ok"]:
            return True, None
        compared += int(mask.sum()) if mask is not None else r.numel()
    if not compared:
        return True, None
    what = "no kernel launch" if tracker.ghost_launches == 0 else \
        f"its {tracker.ghost_launches} kernel launch{'es' if tracker.ghost_launches != 1 else ''} made no-ops"
    return True, (f"its kernels do not make the result: with {what} it still returns the original's output "
                  f"on case 0 ({ref['shapes']}, seed {session.seeds[0]}) — a cached or precomputed result")


# -- entry -------------------------------------------------------------------------------------
def unrun(cand, deadline_s: float) -> dict:
    """The evidence of a candidate the job's time ran out before."""
    return {"id": cand.id, "checks": [], "launches": 0, "calls": 0, "ops_added": [], "stability": "not run",
            "ragged_sizes": None, "ragged_note": None, "timing": None, "extra": {}, "notes": [],
            "ranges_skipped": [], "ghost_ran": False, "ghost_failure": None, "out_bytes": None, "seconds": 0.0,
            "error": {"stage": "budget", "type": "budget", "traceback": "",
                      "message": f"not run: the optimize's time budget left this job {deadline_s:.0f} s"}}


def _elem_bytes(args, kwargs) -> int | None:
    floats = [t for t in arg_tensors(args, kwargs) if t.dtype.is_floating_point]
    return floats[0].element_size() if floats else None


def _device_name() -> str:
    if GPU:
        return torch.cuda.get_device_name(0)
    return "cpu (triton interpreter)"


_sessions: dict = {}


def handle(job) -> dict:
    action = job.action
    if action not in ("check", "tune", "precompile"):
        raise ValueError(f"unknown verify action {action!r}")
    if not job.original:
        raise ValueError("job needs 'original' (the original file's text)")
    key = (hashlib.sha1(job.original.encode()).hexdigest(), job.name, job.harness, job.seeds, job.ragged,
           job.path, tuple(r.key or repr(r.to_json()) for r in job.records or ()))
    session = _sessions.get(key)
    CLOCK.reset()
    CLOCK.sync = torch.cuda.synchronize if GPU else None
    # without a GPU "cuda" means the CPU (cuda_on_cpu.py): a harness written for a GPU verifies as it is
    with cuda_on_cpu.mapped(claim_gpu=False), Tracker() as tracker:
        if session is None:
            session = Session(job)
            _sessions.clear()
            _sessions[key] = session
        session.tracker = tracker
        session.job = job
        result = {"mode": "gpu" if GPU else "interpreter", "device": _device_name(),
                  "cases": len(session.cases), "seeds": len(session.seeds), "candidates": [],
                  "source": session.source}
        if action == "check" and not job.candidates:  # the original's own check: does it run at all?
            original_runs(session)
        if action == "precompile":
            result["precompiled"] = precompile(session, job, job.deadline_s)
            result["phases"] = CLOCK.as_json()
            return result
        timing = job.timing if GPU else None
        started = time.perf_counter()
        for cand in job.candidates:
            t0 = time.perf_counter()
            if job.deadline_s is not None and t0 - started >= job.deadline_s:
                result["candidates"].append(unrun(cand, job.deadline_s))
                continue
            ev = check_candidate(session, cand, quick=(action == "tune"))
            side = ev.pop("_side", None)
            passed = ev["error"] is None and ev["checks"] and all(c["ok"] for c in ev["checks"])
            if passed and side is not None and GPU:
                try:
                    with CLOCK.phase("timing"):
                        ev["timing"] = time_candidate(session, side, job, action, timing)
                except Exception as exc:
                    ev["error"] = candidate_error("timing", exc)
            ev["seconds"] = round(time.perf_counter() - t0, 3)
            result["candidates"].append(ev)
        if action == "check" and GPU and timing and job.baseline:
            with CLOCK.phase("timing"):
                fn_a, args, kwargs = session.inputs(0, session.timed_case())
                a, k = clone_tree((args, kwargs))
                fn_a(*a, **k)
                result["baseline_ms"] = float(timer(fn_a, a, k, float(timing.get("rep_ms", 40))))
        if action == "check":
            _, args, kwargs = session.cases[session.timed_case()]
            result["elem_bytes"] = _elem_bytes(args, kwargs)
        result["phases"] = CLOCK.as_json()
    return result
