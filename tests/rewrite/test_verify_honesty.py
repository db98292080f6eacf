"""The verifier against results that do not come from the kernels, and against originals that are
not the clean reference a comparison assumes (random, or partly unwritten). Real worker processes
run the fixtures in Triton's interpreter."""

from __future__ import annotations

from rewrite_support import FIXTURES
from tritonlens.rewrite.candidate import Candidate
from tritonlens.rewrite.verify import Verifier


def _verify(fixture: str, edits: dict[str, tuple[str, str]]) -> dict:
    """{title: verdict} for the fixture with each edit (old, new) applied; one shared worker."""
    path = FIXTURES / fixture
    text = path.read_text()
    cands = []
    for title, (old, new) in edits.items():
        assert text.count(old) == 1, f"{fixture}: {title}: pattern must occur once"
        cands.append(Candidate("test", title, text.replace(old, new)))
    with Verifier(str(path), text, timeout=300) as verifier:
        return {v.candidate.title: v for v in verifier.verify(cands, isolate=False)}


CACHED = '''_seen = {}


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    key = (tuple(x.tolist()), tuple(y.tolist()))
    if key in _seen:  # seen these inputs: hand back the earlier result, launch an empty grid
        add_kernel[(1,)](x, y, _seen[key], 0, BLOCK_SIZE=64)
        return _seen[key]
    out = torch.empty_like(x)
    _seen[key] = out
'''


def test_a_cached_result_is_refused_by_the_ghost_replay():
    verdicts = _verify("vadd.py", {
        "cached": ("def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n    out = torch.empty_like(x)\n", CACHED),
        "unchanged": ("BLOCK_SIZE = 64", "BLOCK_SIZE = 64"),
    })
    cached = verdicts["cached"]
    # every ordinary check passes (fresh inputs each time), and no torch op does the work
    assert all(c["ok"] for c in cached.evidence["checks"]) and cached.evidence["ops_added"] == []
    assert not cached.accepted
    assert cached.reason.startswith("its kernels do not make the result: with its 1 kernel launch made no-ops "
                                    "it still returns the original's output on case 0"), cached.reason
    honest = verdicts["unchanged"]
    assert honest.accepted and honest.evidence["ghost_ran"] and honest.evidence["ghost_failure"] is None, honest.reason


def test_elements_a_random_original_changes_between_runs_are_left_out():
    verdicts = _verify("noisy_scale.py", {
        "bigger block": ("BLOCK_SIZE = 64", "BLOCK_SIZE = 128"),
        "wrong factor": ("* 2.0, mask=mask)", "* 2.001, mask=mask)"),
    })
    good = verdicts["bigger block"]
    note = ("the original is not deterministic: 80 of 400 elements of the returned value differ between two "
            "runs; compared the 320 deterministic ones (case 0, seed 0; also on ")
    assert good.accepted and note in good.reason, good.reason
    assert any(n.startswith(note) for n in good.evidence["notes"])
    wrong = verdicts["wrong factor"]
    assert not wrong.accepted and wrong.reason.startswith("wrong result on case 0 (400, seed 0): returned value: "
                                                          "relative error"), wrong.reason


def test_an_original_random_on_every_element_it_writes_verifies_nothing():
    """Leaving out what moves between runs must not leave nothing: a check that compares no written
    element would pass any candidate, the wrong one too."""
    path = FIXTURES / "noisy_scale.py"
    text = path.read_text().replace("out[::5]", "out")
    assert "out += torch.rand(out.shape" in text
    cands = [Candidate("test", "bigger block", text.replace("BLOCK_SIZE = 64", "BLOCK_SIZE = 128")),
             Candidate("test", "wrong factor", text.replace("* 2.0, mask=mask)", "* 3.0, mask=mask)"))]
    with Verifier(str(path), text, timeout=300) as verifier:
        verdicts = verifier.verify(cands, isolate=False)
    for v in verdicts:
        assert not v.accepted and "cannot verify: every element the original writes differs between two runs" \
            in v.reason, (v.candidate.title, v.reason)


def test_only_the_elements_the_original_writes_are_compared():
    verdicts = _verify("tril_scale.py", {
        "bigger block": ("BLOCK=16)", "BLOCK=32)"),
        "diagonal skipped": ("mask = (c <= row) & (c < n)", "mask = (c < row) & (c < n)"),
        "upper triangle written too": ("mask = (c <= row) & (c < n)", "mask = c < n"),
    })
    note = "returned value: compared only the 1176 elements the original writes (1128 left unwritten)"
    for title in ("bigger block", "upper triangle written too"):
        assert verdicts[title].accepted and note in verdicts[title].reason, (title, verdicts[title].reason)
    skipped = verdicts["diagonal skipped"]
    assert not skipped.accepted and skipped.reason == (
        "unwritten or invalid output on case 0 (48×48, seed 0): returned value: 48 of 1176 elements are NaN "
        "(unwritten or invalid) where the original's are finite"), skipped.reason


def test_an_original_whose_outputs_overflow_leaves_nothing_to_verify(tmp_path):
    # a recurrence over random data often blows up at real size; then any candidate, even one whose
    # kernels do nothing, matches the original's NaNs, and the refusal must say why
    text = (FIXTURES / "vadd.py").read_text()
    overflowing = text.replace("tl.store(out_ptr + offsets, x + y, mask=mask)",
                               "tl.store(out_ptr + offsets, (x + y) * 0.0 + float('inf'), mask=mask)")
    assert overflowing != text
    path = tmp_path / "vadd_inf.py"
    path.write_text(overflowing)
    cand = Candidate("test", "bigger block", overflowing.replace("BLOCK_SIZE = 64", "BLOCK_SIZE = 128"))
    with Verifier(str(path), overflowing, timeout=300) as verifier:
        [verdict] = verifier.verify([cand], isolate=False)
    assert not verdict.accepted
    assert "cannot verify: the original's outputs are NaN or infinite wherever it writes" in verdict.reason, \
        verdict.reason


def test_an_original_that_reads_past_the_end_where_its_result_does_not_depend_on_it_is_verified():
    # attention kernels load V past the last key unmasked and weight it by p = 0: in a user's
    # process that memory is finite and drops out, but NaN guard zones made every output NaN and
    # every candidate "unverifiable". The original runs again with finite guards and is verified
    path = FIXTURES / "block_dot.py"
    text = path.read_text()
    bigger = Candidate("test", "bigger block", text.replace("BLOCK = 64", "BLOCK = 128"))
    # a candidate whose result does depend on what it reads past the end is still wrong
    uses_it = Candidate("test", "uses the over-read", text.replace(
        "tl.sum(x * y))", "tl.sum(x * y) + tl.sum(y) * 0.01)"))
    assert uses_it.source != text
    with Verifier(str(path), text, timeout=300) as verifier:
        good, bad = verifier.verify([bigger, uses_it], isolate=False)
    assert good.accepted and good.evidence["correct"], good.reason
    assert any("the zones around each buffer hold finite values" in note for note in good.evidence["notes"]), \
        good.evidence["notes"]
    assert not bad.accepted and "wrong result" in bad.reason, bad.reason


def test_the_originals_own_out_of_bounds_writes_are_not_held_against_a_candidate(tmp_path):
    # a kernel whose store has no mask writes past the end on a size the block does not divide; a
    # candidate that writes exactly the same is the original's behaviour, one that writes more is not
    text = (FIXTURES / "vadd.py").read_text()
    unmasked = text.replace("tl.store(out_ptr + offsets, x + y, mask=mask)", "tl.store(out_ptr + offsets, x + y)")
    assert unmasked != text
    path = tmp_path / "vadd_unmasked.py"
    path.write_text(unmasked)
    same = Candidate("test", "same writes", unmasked.replace("add_kernel[grid](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE)",
                                                             "add_kernel[grid](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE, "
                                                             "num_warps=2)"))
    more = Candidate("test", "bigger block", unmasked.replace("BLOCK_SIZE = 64", "BLOCK_SIZE = 128"))
    with Verifier(str(path), unmasked, timeout=300) as verifier:
        verdicts = {v.candidate.title: v for v in verifier.verify([same, more], isolate=False)}
    assert verdicts["same writes"].evidence["correct"], verdicts["same writes"].reason
    assert "the original itself writes out of bounds on these inputs" in verdicts["same writes"].reason
    assert not verdicts["bigger block"].evidence["correct"]
    assert "out-of-bounds write (a missing mask?)" in verdicts["bigger block"].reason
