"""The per-kernel cache and the unchanged-text shortcut never serve stale findings."""

from __future__ import annotations

import sys
from pathlib import Path

from tritonlens.analysis import tlapi
from tritonlens.analysis.engine import Analyzer

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
