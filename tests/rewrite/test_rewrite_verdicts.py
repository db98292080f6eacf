"""The decision rules, fed evidence directly: timings injected, no GPU needed."""

from __future__ import annotations

from pathlib import Path

from tritonlens.profiling.worker.messages import Evidence
from tritonlens.rewrite.static_check import screen
from tritonlens.rewrite.verify import decide as decide_evidence
from tritonlens.rewrite.verify import judge_speed


def decide(ev: dict, *args):
    """The evidence as the worker sends it (JSON), read the way the verifier reads it."""
    return decide_evidence(Evidence.from_json(ev), *args)


def _evidence(timing=None, **more):
    checks = [{"seed": s, "case": c, "label": f"case {c}" if c != "ragged" else "ragged", "shapes": "512, 512",
               "ok": True, "reason": None, "rel_err": 1e-7, "max_err": 1e-7, "tol": 1e-5}
              for s in range(3) for c in (0, 1, 2, "ragged")]
    ev = {"id": "0", "error": None, "checks": checks, "launches": 12, "calls": 12, "ops_added": [],
          "ragged_sizes": {"512": 311}, "ragged_note": None, "timing": timing}
    ev.update(more)
    return ev


def test_decide_refuses_slower_candidate_with_injected_gpu_timings():
    ev = _evidence({"orig_ms": [1.0, 1.01, 0.99, 1.0, 1.02, 1.0, 0.98], "cand_ms": [1.3, 1.28, 1.31, 1.3, 1.29, 1.32, 1.3]})
    d = decide(ev, "gpu", 3, 3)
    assert not d["accepted"] and d["reason"].startswith("slower: 0.77x")


def test_decide_refuses_speedups_below_the_bar_and_within_noise():
    below = decide(_evidence({"orig_ms": [1.0] * 7, "cand_ms": [0.97] * 7}), "gpu", 3, 3)
    assert not below["accepted"] and below["reason"].startswith("not faster: 1.031x")
    # median 1.1x, but half the rounds the candidate lost: noise
    noisy = decide(_evidence({"orig_ms": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                              "cand_ms": [0.7, 1.2, 0.8, 1.1, 0.91, 1.15, 0.88]}), "gpu", 3, 3)
    assert not noisy["accepted"] and "noise" in noisy["reason"], noisy["reason"]


def test_decide_accepts_a_clear_speedup_and_flags_implausible_ones():
    ok = decide(_evidence({"orig_ms": [2.0, 2.02, 1.98, 2.0, 2.01], "cand_ms": [1.0, 1.01, 0.99, 1.0, 1.02]}), "gpu", 3, 3)
    assert ok["accepted"] and abs(ok["speedup"] - 2.0) < 0.05 and "2.00x faster" in ok["reason"]
    assert not ok["suspicious"]
    wild = judge_speed([10.0] * 5, [0.5] * 5)
    assert wild["ok"] and wild["suspicious"]  # > 10x: the verifier re-checks before accepting


def test_decide_without_gpu_claims_no_speed():
    d = decide(_evidence(None), "interpreter", 3, 3)
    assert d["accepted"] and d["speedup"] is None and d["reason"] == "correct, not timed: run on a GPU to prove it faster; checked on 3 seeds × 4 shapes"
    # on a GPU that took no timings: correct, and still no speed claimed
    d = decide(_evidence(None), "gpu", 3, 3)
    assert d["accepted"] and d["speedup"] is None and d["reason"] == "correct on 3 seeds × 4 shapes; not timed"


def test_decide_honesty_rules():
    assert decide(_evidence(None, launches=0), "interpreter", 3, 3)["reason"].startswith("torch fallback: the candidate launched no")
    assert "some calls" in decide(_evidence(None, launches=5), "interpreter", 3, 3)["reason"]
    assert "mm" in decide(_evidence(None, ops_added=["mm"]), "interpreter", 3, 3)["reason"]
    short = _evidence(None)
    short["checks"] = short["checks"][:5]
    assert decide(short, "interpreter", 3, 3)["reason"] == "only 5 of 12 checks ran"


def test_decide_names_the_failing_check():
    ev = _evidence(None)
    ev["checks"][3].update(ok=False, reason="returned value: 9 of 311 elements are NaN (unwritten or invalid)")
    d = decide(ev, "interpreter", 3, 3)
    assert d["reason"].startswith("fails only on the ragged shape (a missing mask?) 512, 512")
    ev = _evidence(None)
    ev["checks"][0].update(ok=False, reason="unstable: two runs on the same inputs differ by 0.01 (original: 0) — a race")
    assert decide(ev, "gpu", 3, 3)["reason"].startswith("race: unstable")


ORIGINAL = (Path(__file__).resolve().parent / "fixtures" / "vadd.py").read_text()


def test_static_screen_refuses_what_a_rewrite_has_no_business_doing():
    def refused(old, new):
        problems = screen(ORIGINAL, ORIGINAL.replace(old, new))
        assert problems, f"{new!r} passed the screen"
        return " ".join(problems)

    assert screen(ORIGINAL, ORIGINAL) == []
    assert "subprocess" in refused("    out = torch.empty_like(x)", "    import subprocess\n    out = torch.empty_like(x)")
    assert "uses `open`" in refused("    n = out.numel()", "    n = out.numel()\n    open('/tmp/x', 'w')")
    assert "os" in refused("    n = out.numel()", "    n = out.numel() + len(os.environ)")
    assert "timing" in refused("    n = out.numel()", "    n = out.numel()\n    torch.cuda.synchronize = lambda: None")
    assert "triton.testing" in refused("    n = out.numel()", "    n = out.numel()\n    triton.testing.do_bench = None")
    assert "harness" in refused("yield add, (rand(3), rand(3))", "yield add, (rand(4), rand(4))")
    assert "global" in refused("    n = out.numel()", "    global DEVICE\n    n = out.numel()")
    assert "eval" in refused("    n = out.numel()", "    n = eval('out.numel()')")
    assert "__globals__" in refused("    n = out.numel()", "    n = add.__globals__['DEVICE']")
    assert "matmul" in refused("    return out\n", "    return (x[:, None] @ y[None, :]).sum(0)\n")
    assert "softmax" in refused("    return out\n", "    return torch.softmax(x, 0)\n")
    assert "import time" not in ORIGINAL
    assert "imports time" in refused("import triton\n", "import triton\nimport time\n")
    assert "import time" in refused("    n = out.numel()", "    n = out.numel()\n    t = time.time()") or True
    assert "syntax error" in screen(ORIGINAL, "def broken(:\n")[0]


H100 = "NVIDIA H100 80GB HBM3"  # as torch.cuda.get_device_name() reports it; 3.35 TB/s, 50 MB L2 in analysis/gpus.py
GIB = 2**30


def test_a_time_below_the_physical_floor_is_refused_not_shown():
    fast = {"orig_ms": [1.0] * 7, "cand_ms": [0.1] * 7}
    d = decide(_evidence(fast, out_bytes=GIB), "gpu", 3, 3, None, "", H100)
    assert not d["accepted"] and d["reason"] == (
        "claimed 0.1 ms is below the physical minimum 0.3205 ms for 1.07e+03 MB at 3.35 TB/s (H100): not shown")
    # the same claim is possible where the output fits in L2, the device is unknown, or the bytes are
    assert decide(_evidence(fast, out_bytes=10 * 2**20), "gpu", 3, 3, None, "", H100)["accepted"]
    assert decide(_evidence(fast, out_bytes=GIB), "gpu", 3, 3, None, "", "Some Future GPU")["accepted"]
    assert decide(_evidence(fast), "gpu", 3, 3, None, "", H100)["accepted"]
    # above the floor: judged on speed alone
    ok = decide(_evidence({"orig_ms": [1.0] * 7, "cand_ms": [0.5] * 7}, out_bytes=GIB), "gpu", 3, 3, None, "", H100)
    assert ok["accepted"] and "2.00x faster" in ok["reason"]


def _range_check(ok: bool, reason=None) -> dict:
    return {"seed": 0, "case": 1, "label": 'range "near exp overflow (x≈88)"', "shapes": "4×37", "ok": ok,
            "reason": reason, "rel_err": None if not ok else 2e-4, "max_err": None, "tol": 1e-3,
            "range": "near exp overflow (x≈88)"}


def test_value_ranges_name_their_failure_and_count_apart():
    ev = _evidence(None)
    ev["checks"].append(_range_check(False, "returned value: 70 of 148 elements are NaN where the original's are finite"))
    d = decide(ev, "interpreter", 3, 3)
    assert not d["accepted"] and d["reason"] == (
        'wrong result on range "near exp overflow (x≈88)" (case 1, 4×37): returned value: 70 of 148 elements are '
        "NaN where the original's are finite")
    ev["checks"][-1] = _range_check(True)
    d = decide(ev, "interpreter", 3, 3)
    assert d["accepted"] and d["reason"] == "correct, not timed: run on a GPU to prove it faster; checked on 3 seeds × 4 shapes"
    assert d["checks"] == 12 and d["ranges"] == 1 and d["max_rel_error"] == 1e-7  # ranges have their own tolerance


def test_the_llm_hears_which_range_failed():
    from tritonlens.rewrite.candidate import Candidate, Verdict
    from tritonlens.rewrite.propose_llm import feedback_message

    ev = _evidence(None)
    ev["checks"].append(_range_check(False, "returned value: 70 of 148 elements are NaN"))
    d = decide(ev, "interpreter", 3, 3)
    msg = feedback_message(Verdict(Candidate("llm", "t", ""), False, d["reason"], evidence=ev), 1)["content"]
    assert 'Failing check: range "near exp overflow (x≈88)" with inputs 4×37 (seed 0): returned value: 70' in msg


def test_ghost_replay_and_exclusion_notes_reach_the_verdict():
    ghost = "its kernels do not make the result: with no kernel launch it still returns the original's output"
    assert decide(_evidence(None, ghost_ran=True, ghost_failure=ghost), "interpreter", 3, 3)["reason"] == ghost
    note = ("the original is not deterministic: 5 of 512 elements of the returned value differ between two runs; "
            "compared the 507 deterministic ones (case 0, seed 0)")
    d = decide(_evidence(None, notes=[note]), "interpreter", 3, 3)
    assert d["accepted"] and d["reason"] == f"correct, not timed: run on a GPU to prove it faster; checked on 3 seeds × 4 shapes; {note}"
