"""Verification planned for real sizes, originals taken as they are, and where the worker's time
goes. Real worker processes run the fixtures in Triton's interpreter."""

from __future__ import annotations

from rewrite_support import FIXTURES
from tritonlens.rewrite.candidate import Candidate
from tritonlens.rewrite.verify import Verifier, phase_line


def _cands(text: str, edits: dict[str, tuple[str, str]]) -> list[Candidate]:
    out = []
    for title, (old, new) in edits.items():
        assert text.count(old) == 1, f"{title}: pattern must occur once"
        out.append(Candidate("test", title, text.replace(old, new)))
    return out


def test_the_real_size_case_is_checked_on_one_seed_and_the_smaller_ones_on_all():
    path = FIXTURES / "two_sizes.py"
    text = path.read_text()
    cands = _cands(text, {"bigger block": ("BLOCK = 128", "BLOCK = 256"),
                          "wrong factor": ("* 3.0, mask=mask)", "* 3.01, mask=mask)")})
    with Verifier(str(path), text, timeout=300) as verifier:
        full = verifier.verify(cands[:1], isolate=False)[0]
        verifier.real_size = 1000  # case 1 (3000 elements) is the real size, case 0 (200) is not
        planned = verifier.verify(cands, isolate=False)
        line = verifier.time_line()
    ran = [(c["seed"], c["case"]) for c in full.evidence["checks"] if c["range"] is None]
    assert full.accepted and len(ran) == 9 and full.evidence["one_seed"] is None, full.reason
    good, wrong = planned
    ran = [(c["seed"], c["case"]) for c in good.evidence["checks"] if c["range"] is None]
    assert ran == [(0, 0), (0, "ragged"), (0, 1), (1, 0), (1, "ragged"), (2, 0), (2, "ragged")], ran
    assert good.accepted and good.evidence["planned"] == 7, good.reason
    assert "checked on 3 seeds × 3 shapes (the largest, 3000, on one seed)" in good.reason, good.reason
    assert good.evidence["out_bytes"] == 200 * 4  # the timed case is the first, the harness's performance shape
    assert not wrong.accepted and wrong.reason.startswith("wrong result on case 0 (200, seed 0)"), wrong.reason
    # where the time went, over the three jobs: every phase named, and they add up to the total
    assert line.startswith("time: ") and "original runs" in line, line
    phases = verifier.phases  # the line leaves out phases under 0.05 s: a fast interpreter's candidate runs
    assert phases["inputs"] > 0 and phases["compare"] > 0 and phases["candidate"] > 0, phases
    assert abs(sum(v for k, v in phases.items() if k != "total") - phases["total"]) < 0.05 * phases["total"]
    assert phases["timing"] == 0.0 and phases["compile"] == 0.0  # the interpreter neither times nor compiles


def test_a_real_size_first_case_takes_its_ragged_shape_to_one_seed_too(tmp_path):
    small = "    yield triple, (torch.randn(200, generator=gen).to(DEVICE),)\n"
    text = (FIXTURES / "two_sizes.py").read_text()
    assert small in text
    text = text.replace(small, "") + small  # the 3000-element case first: the ragged shape scales it
    path = tmp_path / "two_sizes.py"
    path.write_text(text)
    with Verifier(str(path), text, timeout=300) as verifier:
        verifier.real_size = 1000
        (good,) = verifier.verify(_cands(text, {"bigger block": ("BLOCK = 128", "BLOCK = 256")}), isolate=False)
    ran = [(c["seed"], c["case"]) for c in good.evidence["checks"] if c["range"] is None]
    assert ran == [(0, 0), (0, "ragged"), (0, 1), (1, 1), (2, 1)], ran
    assert good.accepted and "(the largest, 3000 and its ragged shape, on one seed)" in good.reason, good.reason


def test_phase_line_names_phases_in_order_and_leaves_out_empty_ones():
    line = phase_line({"inputs": 3.04, "reference": 10.2, "candidate": 20.0, "compare": 0.01, "timing": 40.4,
                       "compile": 12.0, "other": 1.5, "total": 87.1})
    assert line == ("time: 87 s in the worker: compile 12 s, inputs 3.0 s, original runs 10 s, candidate runs 20 s, "
                    "timing 40 s, other 1.5 s")


def test_a_racy_original_with_unwritten_elements_refuses_only_what_it_does_not_move():
    """The original leaves a quarter of its torch.empty output unwritten and moves elements at fresh
    places each call: a candidate with its semantics passes, saying what was compared; a wrong
    factor, or elements left unwritten, is still refused."""
    path = FIXTURES / "racy_partial.py"
    text = path.read_text()
    cands = _cands(text, {"bigger block": ("BLOCK = 64", "BLOCK = 128"),
                          "wrong factor": ("* 2.0, mask=mask)", "* 2.001, mask=mask)"),
                          "five unwritten": ("mask = offs < n_head", "mask = offs < n_head - 5")})
    with Verifier(str(path), text, timeout=300) as verifier:
        good, wrong, short = verifier.verify(cands, isolate=False)
    assert good.accepted, good.reason
    assert good.reason.startswith("correct, not timed: run on a GPU to prove it faster; checked on 3 seeds × "
                                  "2 shapes; the original is not deterministic: "), good.reason
    unstable, unwritten, racy = good.evidence["notes"]
    assert unstable.startswith("the original is not deterministic: ") and " of 800 elements of the returned " \
        "value differ between " in unstable and " deterministic ones (case 0, seed 0; also on " in unstable, unstable
    assert unwritten.startswith("returned value: compared only the 600 elements the original writes (200 left "
                                "unwritten) (case 0, seed 0"), unwritten
    assert " more elements, where the candidate differs from the original no more often than another run of the " \
        "original does, were left out" in racy, racy
    assert not wrong.accepted and "wrong result on case 0 (800, seed 0): returned value: relative error" \
        in wrong.reason, wrong.reason
    assert not short.accepted and "elements are NaN (unwritten or invalid)" in short.reason, short.reason
