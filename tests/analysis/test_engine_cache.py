"""The per-kernel cache and the unchanged-text shortcut never serve stale findings, and what the
cache serves does not depend on where a kernel sits: lines inserted above it, comments and
unrelated imports re-check nothing, and the findings served are those of a cold analysis."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

from tritonlens.analysis import tlapi
from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.findings import Range

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from gen_kernels import generate

HELPER = '''import triton
import triton.language as tl


@triton.jit
def helper(B: tl.constexpr):
    return tl.arange(0, B){SUFFIX}


@triton.jit
def kern(x_ptr, BLOCK: tl.constexpr):
    offs = helper(16) + tl.arange(0, 32)
    tl.store(x_ptr + offs, offs)


@triton.jit
def other(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
'''


def _codes(result):
    return sorted((f.code, f.kernel, f.range.start.line, f.message) for f in result.findings)


def test_editing_a_jit_helper_rechecks_the_kernels_that_call_it():
    az = Analyzer()
    az.analyze(HELPER.replace("{SUFFIX}", "[:, None]"), doc_id="d")
    edited = HELPER.replace("{SUFFIX}", "")
    res = az.analyze(edited, doc_id="d")
    assert _codes(res) == _codes(Analyzer().analyze(edited))
    assert any(f.code == "TL017" and f.kernel == "kern" for f in res.findings)
    assert "kern" in res.reanalyzed and "other" not in res.reanalyzed


def test_adding_a_plain_function_a_kernel_calls_rechecks_it():
    base = HELPER.replace("{SUFFIX}", "").replace("offs = helper(16)", "offs = scale(16)")
    az = Analyzer()
    before = az.analyze(base)
    after_text = base + "\n\ndef scale(n):\n    return n\n"
    after = az.analyze(after_text)
    assert _codes(after) == _codes(Analyzer().analyze(after_text))
    assert "kern" in after.reanalyzed
    assert _codes(before) != _codes(after) or "kern" in after.reanalyzed


def test_unchanged_text_and_one_edit_match_a_cold_analysis():
    text = generate(8)
    az = Analyzer()
    first = az.analyze(text, doc_id="b")
    again = az.analyze(text, doc_id="b")
    assert _codes(again) == _codes(first) and again.reanalyzed == []
    edited = text.replace("z = z * 0.5 + 0.25", "z = z * 0.5 + 0.75", 1)
    res = az.analyze(edited, doc_id="b")
    assert res.reanalyzed == ["scale_add_0"]
    assert _codes(res) == _codes(Analyzer().analyze(edited))
    # Other settings on the same text are analyzed, not served from the shortcut.
    only = az.analyze(edited, doc_id="b", select=["TL008"])
    assert {f.code for f in only.findings} <= {"TL008"}


def test_the_triton_api_in_use_is_part_of_the_key():
    text = HELPER.replace("{SUFFIX}", "").replace("tl.arange(0, B)", "tl.arange(0, B) + tl.gather_rows(B)")
    az = Analyzer()
    previous = tlapi.active()
    try:
        versions = tlapi.snapshot_versions()
        tlapi.set_active(tlapi.load_snapshot(versions[0]))
        first = az.analyze(text, doc_id="t")
        tlapi.set_active(tlapi.load_snapshot(versions[-1]))
        second = az.analyze(text, doc_id="t")
        assert second.reanalyzed, "a different Triton API must re-check the kernels"
        assert _codes(second) == _codes(Analyzer().analyze(text))
        assert first.findings and second.findings
    finally:
        tlapi.set_active(previous)


# Two kernels, a module constant read at one launch (its line shows in messages), a launch below.
MOVABLE = """import torch
import triton
import triton.language as tl

BLOCK = 100
WARPS = 4


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x + y, mask=offs < n)


@triton.jit
def acc_kernel(a_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float16)
    for i in range(0, n, BLOCK_SIZE):
        offs = i + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(a_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.arange(0, BLOCK_SIZE), acc)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK_SIZE=BLOCK, num_warps=WARPS)
    return out


def acc(a):
    out = torch.empty(64, device=a.device, dtype=a.dtype)
    acc_kernel[(1,)](a, out, a.numel(), BLOCK_SIZE=64)
    return out
"""


def _full(result):
    """Everything a finding carries, `data` included (Finding equality leaves it out)."""
    return [(f.code, f.severity, f.kernel, f.range, f.message, f.fix, f.related, f.data) for f in result.findings]


def _model(result):
    """Where the kernel model says things are (lines and columns): kernels, their calls, launches,
    configurations."""
    return [(k.name, k.range, k.node.start_point, k.outer.end_point, [c.range for c in k.calls],
             [(launch.range, launch.node.start_point) for launch in k.launches], [c.label for c in k.configs])
            for k in result.kernels]


def _insert(text: str, before: str, new: str) -> str:
    at = text.index(before)
    return text[:at] + new + text[at:]


def _matches_cold(result, text: str) -> None:
    cold = Analyzer().analyze(text)
    assert _full(result) == _full(cold)
    assert _model(result) == _model(cold)


def test_a_line_inserted_above_the_kernels_moves_every_finding_and_rechecks_nothing():
    az = Analyzer()
    before = az.analyze(MOVABLE, doc_id="m")
    assert {f.code for f in before.findings} >= {"TL001", "TL002", "TL005"}
    assert any("module constant at line 5" in r.message for f in before.findings for r in f.related)
    edited = _insert(MOVABLE, "@triton.jit\ndef add_kernel", "\n")
    res = az.analyze(edited, doc_id="m")
    assert res.reanalyzed == []
    assert [f.range for f in res.findings] == [
        Range.of(f.range.start.line + 1, f.range.start.column, f.range.end.line + 1, f.range.end.column)
        for f in before.findings]
    # The constant did not move, the launch did: the related locations say so.
    assert any("module constant at line 5, passed at line 31" in r.message for f in res.findings for r in f.related)
    _matches_cold(res, edited)


def test_a_line_inserted_between_kernels_moves_the_findings_below_it():
    az = Analyzer()
    az.analyze(MOVABLE, doc_id="m")
    edited = _insert(MOVABLE, "@triton.jit\ndef acc_kernel", "\n\n")
    res = az.analyze(edited, doc_id="m")
    assert res.reanalyzed == [] and "acc_kernel" in res.remodeled
    _matches_cold(res, edited)


def test_a_comment_blank_lines_or_an_unrelated_import_recheck_nothing():
    az = Analyzer()
    az.analyze(MOVABLE, doc_id="m")
    for edited in (_insert(MOVABLE, "@triton.jit\ndef acc_kernel", "# the accumulating kernel\n"),
                   _insert(MOVABLE, "BLOCK = 100", "import math\nSCALE = 2.0\n"),
                   MOVABLE.replace("\n\n\ndef add(", "\n\n\n\n\n# wrappers\n\ndef add(")):
        res = az.analyze(edited, doc_id="m")
        assert res.reanalyzed == [], edited
        _matches_cold(res, edited)


def test_changing_a_constant_rechecks_the_kernels_whose_launches_read_it():
    az = Analyzer()
    az.analyze(MOVABLE, doc_id="m")
    for old, new in (("BLOCK = 100", "BLOCK = 128"), ("WARPS = 4", "WARPS = 8")):
        edited = MOVABLE.replace(old, new)
        res = az.analyze(edited, doc_id="m")
        assert res.reanalyzed == ["add_kernel"], (old, new)
        _matches_cold(res, edited)


def test_changing_how_triton_is_imported_rechecks_every_kernel():
    az = Analyzer()
    az.analyze(MOVABLE, doc_id="m")
    edited = MOVABLE.replace("import triton.language as tl\n", "import triton.language as tl\nfrom triton.language import load\n")
    res = az.analyze(edited, doc_id="m")
    assert res.reanalyzed == ["acc_kernel", "add_kernel"]
    _matches_cold(res, edited)


def test_a_newline_inside_one_kernel_rechecks_that_kernel_only():
    text = generate(8)
    az = Analyzer()
    az.analyze(text, doc_id="g")
    at = text.index("pid = tl.program_id(0)\n", text.index("def matmul_5(")) + len("pid = tl.program_id(0)\n")
    edited = text[:at] + "\n" + text[at:]
    res = az.analyze(edited, doc_id="g")
    assert res.reanalyzed == ["matmul_5"]
    _matches_cold(res, edited)


def test_suppressions_hold_on_moved_findings():
    silenced = MOVABLE.replace("    x = tl.load(x_ptr + offs)\n", "    x = tl.load(x_ptr + offs)  # tritonlens: ignore[TL002]\n")
    az = Analyzer()
    first = az.analyze(silenced, doc_id="s")
    assert "TL002" not in {f.code for f in first.findings}
    edited = "# header comment\n" + silenced
    res = az.analyze(edited, doc_id="s")
    assert res.reanalyzed == [] and "TL002" not in {f.code for f in res.findings}
    _matches_cold(res, edited)


def test_typing_on_one_line_keeps_the_models_of_the_kernels_below():
    az = Analyzer()
    az.analyze(MOVABLE, doc_id="t")
    edited = MOVABLE.replace("    pid = tl.program_id(0)\n", "    pid = tl.program_id(0)  # the block\n")
    res = az.analyze(edited, doc_id="t")
    assert res.reanalyzed == ["add_kernel"] and res.remodeled == []
    _matches_cold(res, edited)


def test_random_line_insertions_and_removals_match_a_cold_analysis():
    """Lines typed, pasted and deleted anywhere (blank, comments, code inside kernels and
    wrappers, at module level): what the cache serves is always a cold analysis's result."""
    rng = random.Random(15)
    lines = generate(6).split("\n")
    pieces = ["", "# note", "    x = 1", "    # indented note", "SCALE = 3", "import math"]
    az = Analyzer()
    az.analyze("\n".join(lines), doc_id="r")
    served = 0
    for step in range(40):
        at = rng.randrange(len(lines))
        if rng.random() < 0.3 and lines[at].strip() in ("", "# note", "x = 1"):
            del lines[at]
        else:
            piece = rng.choice(pieces)
            # Code goes where it parses: indented lines only inside a block.
            if piece.startswith("    ") and not lines[at].startswith("    "):
                piece = piece.strip()
            lines.insert(at, piece)
        text = "\n".join(lines)
        res = az.analyze(text, doc_id="r")
        served += len(res.kernels) - len(res.reanalyzed)
        cold = Analyzer().analyze(text)
        assert _full(res) == _full(cold), step
        assert _model(res) == _model(cold), step
    assert served > 100, "most kernels should have been served from the cache"


BRANCHED = """import triton
import triton.language as tl

HAS_NEW_API = True

if HAS_NEW_API:
    @triton.jit
    def copy_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
else:
    @triton.jit
    def copy_kernel_v1(x_ptr, y_ptr, BLOCK: tl.constexpr):
        tl.store(y_ptr, tl.load(x_ptr))


def copy(x, y):
    copy_kernel[(1,)](x, y, BLOCK=100)
"""


def test_kernels_defined_in_module_level_branches_are_checked_and_moved():
    az = Analyzer()
    first = az.analyze(BRANCHED, doc_id="b")
    assert [k.name for k in first.kernels] == ["copy_kernel", "copy_kernel_v1"]
    assert any(f.code == "TL001" for f in first.findings)
    edited = "# which API\n" + BRANCHED
    res = az.analyze(edited, doc_id="b")
    assert res.reanalyzed == []
    _matches_cold(res, edited)


SAME_NAME = """import triton
import triton.language as tl

HAS_NEW_API = True

if HAS_NEW_API:
    @triton.jit
    def copy_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
else:
    @triton.jit
    def copy_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 1.0)


def copy(x, y):
    copy_kernel[(1,)](x, y, BLOCK=100)
"""


def test_both_definitions_of_a_name_are_checked_and_an_edit_rechecks_only_its_own():
    az = Analyzer()
    first = az.analyze(SAME_NAME, doc_id="s")
    assert [(k.name, k.range.start.line) for k in first.kernels] == [("copy_kernel", 6), ("copy_kernel", 11)]
    # The launch's BLOCK=100 is not a power of two, which both definitions are told at their own lines.
    assert sorted(f.range.start.line for f in first.findings if f.code == "TL001") == [8, 13]
    assert first.module.kernel("copy_kernel").range.start.line == 11  # by name: the last definition
    edited = SAME_NAME.replace("* 1.0)", "* 2.0)")
    res = az.analyze(edited, doc_id="s")
    assert res.reanalyzed == ["copy_kernel"]  # the last definition's entry key is its name
    _matches_cold(res, edited)
    edited = edited.replace("tl.store(y_ptr + offs, tl.load(x_ptr + offs))", "tl.store(y_ptr + offs, tl.load(x_ptr + offs) + 0)")
    res = az.analyze(edited, doc_id="s")
    assert res.reanalyzed == ["copy_kernel#1"]
    _matches_cold(res, edited)
    moved = az.analyze("# note\n" + edited, doc_id="s")
    assert moved.reanalyzed == []
    _matches_cold(moved, "# note\n" + edited)


def test_a_line_typed_and_deleted_again_serves_the_earlier_placement():
    az = Analyzer()
    az.analyze(MOVABLE, doc_id="u")
    edited = _insert(MOVABLE, "@triton.jit\ndef add_kernel", "\n")
    moved = az.analyze(edited, doc_id="u")
    assert sorted(moved.remodeled) == ["acc_kernel", "add_kernel"]
    back = az.analyze(MOVABLE, doc_id="u")
    assert back.reanalyzed == [] and back.remodeled == []
    _matches_cold(back, MOVABLE)
    again = az.analyze(edited, doc_id="u")
    assert again.reanalyzed == [] and again.remodeled == []
    _matches_cold(again, edited)


def test_every_rule_fixture_reparsed_from_an_edit_matches_a_cold_analysis():
    # An incremental parse gives a tree whose nodes hold no text of their own: a rule that reads
    # `node.text` instead of the Source fails there only, i.e. in the editor, never in `check`.
    fixtures = sorted((Path(__file__).parent.parent / "fixtures" / "rules").glob("TL*/*.py"))
    assert fixtures
    for path in fixtures:
        text = path.read_text()
        cold = Analyzer().analyze(text, select=["ALL"])
        assert cold.errors == [], (path.name, cold.errors)
        # Edits inside one statement (re-parsed alone), in the kernel or not, and one across the file.
        last = list(re.finditer(r"\b\d+\b", text))[-1]  # most often in the launching wrapper
        for before in (text.replace("tl.", "tl .", 1), text.replace("(", "( ", 1) + "\n# edited\n",
                       text[:last.start()] + str(int(last.group()) + 1) + text[last.end():]):
            az = Analyzer()
            az.analyze(before, doc_id="f", select=["ALL"])
            warm = az.analyze(text, doc_id="f", select=["ALL"])
            assert warm.errors == [], (path.name, warm.errors)
            assert [(f.code, f.range, f.message) for f in warm.findings] == \
                [(f.code, f.range, f.message) for f in cold.findings], path.name


GUARDED = '''import triton
import triton.language as tl


def sums(a, chunk):
    seq = a.shape[1]
    {GUARD}
    out = a.new_empty(a.shape)
    _launch(a, out, seq, chunk)
    return out


@triton.jit
def sums_kernel(a_ptr, out_ptr, stride_b, SEQ: tl.constexpr, CHUNK: tl.constexpr):
    offs = tl.program_id(1) * CHUNK + tl.arange(0, CHUNK)
    row = a_ptr + tl.program_id(0) * stride_b
    first = tl.load(row + offs, mask=offs < SEQ, other=0.0)
    again = tl.load(row + offs)
    tl.store(out_ptr + tl.program_id(0) * stride_b + offs, first + again, mask=offs < SEQ)


def _launch(a, out, seq, chunk):
    sums_kernel[(a.shape[0], (seq + chunk - 1) // chunk)](a, out, a.stride(0), SEQ=seq, CHUNK=chunk)
'''


def test_editing_a_guard_in_a_caller_of_the_launch_rechecks_the_kernel():
    """An assert that the size divides the block, in a function that calls the launching one, is
    read as the unmasked store's guard: changing it re-checks the kernel, as a cold analysis would."""
    az = Analyzer()
    guarded = GUARDED.replace("{GUARD}", "assert seq % chunk == 0")
    unguarded = GUARDED.replace("{GUARD}", "assert seq > 0")
    cold = {t: _codes(Analyzer().analyze(t)) for t in (guarded, unguarded)}
    assert cold[guarded] != cold[unguarded]  # the fixture exercises a guard the rules read
    az.analyze(guarded, doc_id="g")
    res = az.analyze(unguarded, doc_id="g")
    assert res.reanalyzed == ["sums_kernel"] and _codes(res) == cold[unguarded]
    res = az.analyze(guarded, doc_id="g")
    assert _codes(res) == cold[guarded]
