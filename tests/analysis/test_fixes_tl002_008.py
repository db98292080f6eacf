"""The deterministic fixes of TL002–TL008: each applied to a kernel gives exactly the expected
text, the result still parses, and analyzing it again no longer reports the rule there."""

from __future__ import annotations

import ast
import textwrap

import pytest

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.findings import apply_edits


def _fixed(code: str, text: str) -> str:
    result = Analyzer().analyze(text, select=[code])
    assert not result.errors, result.errors
    fixes = [f for f in result.findings if f.code == code and f.fix is not None]
    assert fixes, f"{code} offered no fix: {[f.message for f in result.findings]}"
    out = text
    # apply one fix at a time, re-analyzing, as an editor would
    for _ in range(10):
        result = Analyzer().analyze(out, select=[code])
        fixes = [f for f in result.findings if f.code == code and f.fix is not None]
        if not fixes:
            break
        out = apply_edits(out, fixes[0].fix.edits)
    ast.parse(out)
    again = Analyzer().analyze(out, select=[code])
    assert not [f for f in again.findings if f.code == code], [f.message for f in again.findings]
    return out


def _src(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


TL002_BEFORE = _src('''
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, alpha, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(
        out_ptr + offsets,
        x * alpha,
    )
''')

TL002_AFTER = TL002_BEFORE.replace("        x * alpha,\n", "        x * alpha, mask=mask,\n")


def test_tl002_masks_with_existing_mask_variable():
    assert _fixed("TL002", TL002_BEFORE) == TL002_AFTER


def test_tl002_builds_mask_from_size_bound():
    before = _src('''
    import triton
    import triton.language as tl


    @triton.jit
    def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n))
    ''')
    after = before.replace("tl.load(x_ptr + offs, mask=offs < n))", "tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)")
    assert _fixed("TL002", before) == after


TL003_BEFORE = _src('''
import triton
import triton.language as tl


@triton.jit
def softmax_bad_pad(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def masked_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))


@triton.jit
def col_min(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    tl.store(out_ptr, tl.min(x, axis=0))
''')


def test_tl003_sets_neutral_other():
    after = (TL003_BEFORE
             .replace('mask=mask, other=0.0).to(tl.float32)', 'mask=mask, other=float("-inf")).to(tl.float32)')
             .replace("mask=offs < n, other=1.0)", "mask=offs < n, other=0.0)")
             .replace("x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)",
                      'x = tl.load(x_ptr + offs, mask=offs < n, other=float("inf")).to(tl.float32)'))
    assert _fixed("TL003", TL003_BEFORE) == after


def test_tl003_no_infinity_where_the_data_may_be_integers():
    text = _src('''
    import triton
    import triton.language as tl


    @triton.jit
    def count_max(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0)
        tl.store(out_ptr, tl.max(x, axis=0))
    ''')
    result = Analyzer().analyze(text, select=["TL003"])
    found = [f for f in result.findings if f.code == "TL003"]
    assert found and all(f.fix is None for f in found), [f.message for f in found]


def test_tl003_no_fix_when_one_value_cannot_serve_two_reductions():
    text = _src('''
    import triton
    import triton.language as tl


    @triton.jit
    def max_and_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr, tl.max(x, axis=0) + tl.sum(x, axis=0))
    ''')
    result = Analyzer().analyze(text, select=["TL003"])
    found = [f for f in result.findings if f.code == "TL003"]
    assert len(found) == 1 and "tl.max" in found[0].message
    assert found[0].fix is None  # -inf would poison the sum


TL005_BEFORE = _src('''
import triton
import triton.language as tl


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, K, stride_cm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float16)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc, out_dtype=tl.float16)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc)


@triton.jit
def row_sum(x_ptr, N, BLOCK: tl.constexpr):
    acc = tl.full([BLOCK], 0, dtype=tl.bfloat16)
    for off in range(0, N, BLOCK):
        acc += tl.load(x_ptr + off + tl.arange(0, BLOCK))
    total = tl.sum(acc, axis=0)
    tl.store(x_ptr, total)


@triton.jit
def out_half(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BK: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BK)
    acc = tl.zeros((BM, BM), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptr + r[:, None] * BK + c[None, :]), tl.load(b_ptr + c[:, None] * BM + r[None, :]),
                      out_dtype=tl.float16)
    tl.store(c_ptr + r[:, None] * BM + r[None, :], acc)
''')

TL005_AFTER = (TL005_BEFORE
               .replace("acc = tl.zeros((BM, BN), dtype=tl.float16)", "acc = tl.zeros((BM, BN), dtype=tl.float32)")
               .replace("acc = tl.dot(a, b, acc, out_dtype=tl.float16)", "acc = tl.dot(a, b, acc, out_dtype=tl.float32)")
               .replace("rn[None, :], acc)", "rn[None, :], acc.to(c_ptr.dtype.element_ty))")
               .replace("tl.full([BLOCK], 0, dtype=tl.bfloat16)", "tl.full([BLOCK], 0, dtype=tl.float32)")
               .replace("out_dtype=tl.float16)\n    tl.store(c_ptr + r", "out_dtype=tl.float32)\n    tl.store(c_ptr + r"))


def test_tl005_accumulates_in_fp32_and_casts_the_store_back():
    assert _fixed("TL005", TL005_BEFORE) == TL005_AFTER


def test_tl005_fixed_kernel_compiles_for_sm90():
    """The fixed accumulator agrees with tl.dot's out_dtype: the real compiler accepts it."""
    triton = pytest.importorskip("triton")
    import importlib.util
    import sys
    import tempfile
    from pathlib import Path

    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "tl005_fixed.py"
        path.write_text(TL005_AFTER)
        spec = importlib.util.spec_from_file_location("tl005_fixed", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["tl005_fixed"] = mod
        try:
            spec.loader.exec_module(mod)
            sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "K": "i32", "stride_cm": "i32",
                   "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
            triton.compile(ASTSource(mod.mm, sig, {"BM": 64, "BN": 64, "BK": 32}), target=GPUTarget("cuda", 90, 32))
        finally:
            sys.modules.pop("tl005_fixed", None)


TL006_BEFORE = _src('''
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(probs_ptr, logits_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(logits_ptr + row * in_row_stride + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(probs_ptr + row * out_row_stride + cols, x, mask=cols < n_cols)


@triton.jit
def rows(KV_cache, Y, stride, N, BLOCK: tl.constexpr):
    KV_cache += tl.program_id(0) * stride
    cols = tl.arange(0, BLOCK)
    tl.store(Y + cols, tl.load(KV_cache + cols, mask=cols < N), mask=cols < N)


@triton.jit
def tile(attn_ptr, M, stride_xm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    t = tl.load(attn_ptr + offs_m[:, None] * stride_xm + offs_n[None, :], mask=offs_m[:, None] < M)
    tl.store(attn_ptr + offs_n[None, :], t, mask=offs_m[:, None] < M)
''')


def test_tl006_widens_the_program_id():
    after = (TL006_BEFORE
             .replace("row = tl.program_id(0)\n", "row = tl.program_id(0).to(tl.int64)\n")
             .replace("KV_cache += tl.program_id(0) * stride", "KV_cache += tl.program_id(0).to(tl.int64) * stride")
             .replace("offs_m[:, None] * stride_xm", "offs_m[:, None].to(tl.int64) * stride_xm"))
    assert _fixed("TL006", TL006_BEFORE) == after


def test_tl006_uses_the_files_alias():
    before = _src('''
    import triton
    import triton.language as language


    @triton.jit
    def rows(kv_cache, stride, N, BLOCK: language.constexpr):
        pid = language.program_id(0)
        cols = language.arange(0, BLOCK)
        language.store(kv_cache + pid * stride + cols, 0.0, mask=cols < N)
    ''')
    after = before.replace("pid = language.program_id(0)", "pid = language.program_id(0).to(language.int64)")
    assert _fixed("TL006", before) == after
