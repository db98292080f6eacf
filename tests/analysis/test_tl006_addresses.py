"""TL006 reads addresses its access chains do not hold: pointers advanced and handed to a device
helper, and pointers a later `X = X + offs` rebinds. What the helper is depends on the rest of
the file, so an edit elsewhere changes the kernel's findings."""

from __future__ import annotations

from tritonlens.analysis.engine import Analyzer

HELPER = '''
import triton
import triton.language as tl


@triton.jit
def _scale_rows(ptr, stride_row, n_rows, BLOCK_R: tl.constexpr, D: tl.constexpr):
    r = tl.arange(0, BLOCK_R)
    d = tl.arange(0, D)
    tl.store(ptr + r[:, None] * stride_row + d[None, :], tl.zeros((BLOCK_R, D), tl.float32), mask=r[:, None] < n_rows)
'''

KERNEL = '''

@triton.jit
def scale_heads(q_ptr, stride_qb, stride_qh, stride_qm, n_heads, seqlen, BLOCK_R: tl.constexpr, D: tl.constexpr):
    bh = tl.program_id(0)
    off_b = bh // n_heads
    q_ptr += off_b * stride_qb + (bh % n_heads) * stride_qh
    {call}
'''


def _lines(text: str, analyzer: Analyzer) -> list[int]:
    result = analyzer.analyze(text, path="kernels.py", select=["TL006"])
    return sorted(f.range.start.line + 1 for f in result.findings if f.code == "TL006")


def test_a_pointer_handed_to_a_helper_is_an_address_until_the_call_goes():
    analyzer = Analyzer()
    called = HELPER + KERNEL.format(call="_scale_rows(q_ptr, stride_qm, seqlen, BLOCK_R, D)")
    assert len(_lines(called, analyzer)) == 1
    # the same analyzer, the call replaced by a plain statement: no address, no finding
    assert _lines(HELPER + KERNEL.format(call="pass"), analyzer) == []


def test_unfinished_edits_do_not_crash_the_rule():
    analyzer = Analyzer()
    for cut in range(len(HELPER) + 20, len(HELPER + KERNEL), 37):
        text = (HELPER + KERNEL.format(call="_scale_rows(q_ptr, stride_qm, seqlen, BLOCK_R, D)"))[:cut]
        result = analyzer.analyze(text, path="kernels.py", select=["TL006"])
        assert not result.errors, result.errors
