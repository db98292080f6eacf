"""The decision rules, fed evidence directly: timings injected, no GPU needed."""

from __future__ import annotations

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
    assert d["accepted"] and d["speedup"] is None and d["reason"] == "correct on 3 seeds × 4 shapes; speed not measured"


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


ORIGINAL = open(__file__.replace("test_rewrite_verdicts.py", "fixtures/vadd.py")).read()


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
