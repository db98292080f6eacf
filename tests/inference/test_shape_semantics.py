"""Exact shapes and dtypes the shape engine gives, construct by construct: symbolic (constexprs as
names) and in the configuration of the file's launch site (its constexpr values).

Every kernel here is launched once with known constexprs, so each expectation is a pair: the
symbolic description and the one in that configuration."""

from __future__ import annotations

import pytest
from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.shapes import (
    assignment_targets,
    describe,
    infer_kernel,
)

HEADER = '''
import triton
import triton.language as tl
'''


def _table(body: str, launch: str, params: str = "x_ptr, y_ptr, n, BM: tl.constexpr, BN: tl.constexpr",
           helpers: str = "", arg_dtypes: dict | None = None):
    text = HEADER + helpers + f"\n@triton.jit\ndef kernel({params}):\n" + body + f"\n\ndef run(x, y):\n    {launch}\n"
    result = Analyzer().analyze(text)
    assert not result.errors, result.errors
    k = result.module.kernel("kernel")
    assert len(k.configs) == 1, k.configs
    shapes = infer_kernel(result.module, k, arg_dtypes)
    out = {}  # name → (symbolic, configured) of its last assignment; every one under (name, index)
    for _stmt, target, name in assignment_targets(k):
        key = (target.start_byte, name)
        # "-": not run (an assignment in a branch that configuration does not take)
        out[name] = tuple(describe(run.targets[key]) if key in run.targets else "-"
                          for run in (shapes.symbolic, shapes.per_config[0]))
        out[(name, sum(1 for n in out if isinstance(n, tuple) and n[0] == name))] = out[name]
    return out, result.module, k, shapes


LAUNCH = "kernel[(1,)](x, y, 10, BM=32, BN=64)"
FP16 = {"x_ptr": "*fp16", "y_ptr": "*fp16", "n": "i32"}

CASES = [
    # arange and constexpr arithmetic
    ("r = tl.arange(0, BM)", "r", "[BM] int32", "[32] int32"),
    ("r = tl.arange(8, 24)", "r", "[16] int32", "[16] int32"),
    ("r = tl.arange(0, 2 * BM)", "r", "[2*BM] int32", "[64] int32"),
    ("r = tl.arange(0, BN // 2)", "r", "[BN//2] int32", "[32] int32"),
    ("c: tl.constexpr = BM * BN + 1", "c", "constexpr 'BM*BN+1'", "constexpr 2049"),
    # a plain assignment makes a constexpr a 0-d tensor (Triton's code generator does)
    ("c = BM * BN + 1", "c", "int32", "int32"),
    ("c = tl.cdiv(n, BM)", "c", "int32", "int32"),
    # broadcasting through [:, None] / [None, :]
    ("o = tl.arange(0, BM)[:, None] * n + tl.arange(0, BN)[None, :]", "o", "[BM, BN] int32", "[32, 64] int32"),
    ("o = tl.arange(0, BM)[None, :]", "o", "[1, BM] int32", "[1, 32] int32"),
    # loads of typed pointers, promotion with Python scalars and other blocks
    ("x = tl.load(x_ptr + tl.arange(0, BM))", "x", "[BM] fp16", "[32] fp16"),
    ("x = tl.load(x_ptr + tl.arange(0, BM)) * 2.0", "x", "[BM] fp16", "[32] fp16"),
    ("x = tl.load(x_ptr + tl.arange(0, BM)) + tl.zeros([BM], dtype=tl.float32)", "x", "[BM] fp32", "[32] fp32"),
    ("q = tl.arange(0, BM) / 2", "q", "[BM] fp32", "[32] fp32"),
    ("m = tl.arange(0, BM) < n", "m", "[BM] int1", "[32] int1"),
    # fp16 wins over bf16 (Triton checks for fp16 first); bf16 with anything but bf16 is fp32
    ("h = tl.zeros([BM], dtype=tl.bfloat16) + tl.zeros([BM], dtype=tl.float16)", "h", "[BM] fp16", "[32] fp16"),
    ("h = tl.zeros([BM], dtype=tl.bfloat16) + tl.arange(0, BM)", "h", "[BM] fp32", "[32] fp32"),
    ("c = tl.load(x_ptr + tl.arange(0, BM)).to(tl.float32)", "c", "[BM] fp32", "[32] fp32"),
    # reductions with an axis
    ("s = tl.sum(tl.zeros((BM, BN), dtype=tl.float32), axis=0)", "s", "[BN] fp32", "[64] fp32"),
    ("s = tl.sum(tl.zeros((BM, BN), dtype=tl.float32), axis=1, keep_dims=True)", "s", "[BM, 1] fp32", "[32, 1] fp32"),
    ("s = tl.max(tl.zeros((BM, BN), dtype=tl.float16))", "s", "fp16", "fp16"),
    ("s = tl.zeros((BM, BN), dtype=tl.float16).max(axis=-1)", "s", "[BM] fp16", "[32] fp16"),
    ("s = tl.argmax(tl.zeros((BM, BN), dtype=tl.float16), axis=1)", "s", "[BM] int32", "[32] int32"),
    ("s = tl.sum(tl.zeros([BM], dtype=tl.int8), axis=0)", "s", "int32", "int32"),
    # tl.where broadcasts its three operands
    ("w = tl.where(tl.arange(0, BM)[:, None] < n, tl.zeros((BM, BN), dtype=tl.float16), 0.0)", "w",
     "[BM, BN] fp16", "[32, 64] fp16"),
    # layout
    ("t = tl.trans(tl.zeros((BM, BN), dtype=tl.float32))", "t", "[BN, BM] fp32", "[64, 32] fp32"),
    ("t = tl.zeros((BM, BN), dtype=tl.float32).T", "t", "[BN, BM] fp32", "[64, 32] fp32"),
    ("t = tl.permute(tl.zeros((2, BM, BN), dtype=tl.float32), (2, 0, 1))", "t", "[BN, 2, BM] fp32",
     "[64, 2, 32] fp32"),
    ("t = tl.reshape(tl.zeros((BM, BN), dtype=tl.float32), (BM * BN,))", "t", "[BM*BN] fp32", "[2048] fp32"),
    ("t = tl.expand_dims(tl.zeros([BM], dtype=tl.float32), 0)", "t", "[1, BM] fp32", "[1, 32] fp32"),
    # tl.dot: fp16 operands accumulate in fp32, int8 in int32; an accumulator keeps its dtype
    ("d = tl.dot(tl.zeros((BM, 16), dtype=tl.float16), tl.zeros((16, BN), dtype=tl.float16))", "d",
     "[BM, BN] fp32", "[32, 64] fp32"),
    ("d = tl.dot(tl.zeros((BM, 32), dtype=tl.int8), tl.zeros((32, BN), dtype=tl.int8))", "d",
     "[BM, BN] int32", "[32, 64] int32"),
    (("d = tl.dot(tl.zeros((BM, 16), dtype=tl.float16), tl.zeros((16, BN), dtype=tl.float16), "
     "tl.zeros((BM, BN), dtype=tl.float16))"), "d", "[BM, BN] fp16", "[32, 64] fp16"),
    (("d = tl.dot(tl.zeros((BM, 16), dtype=tl.float16), tl.zeros((16, BN), dtype=tl.float16), "
     "out_dtype=tl.float16)"), "d", "[BM, BN] fp16", "[32, 64] fp16"),
    # Python builtins Triton maps to tl functions, and program ids
    ("p = min(tl.program_id(0), BM)", "p", "int32", "int32"),
    ("p: tl.constexpr = max(BM, BN)", "p", "constexpr 'max(BM, BN)'", "constexpr 64"),
]


@pytest.mark.parametrize("line,var,symbolic,configured", CASES, ids=[c[0][:60] for c in CASES])
def test_construct(line, var, symbolic, configured):
    if symbolic.startswith("constexpr '"):  # a symbolic value the engine cannot name: a plain scalar
        symbolic = "int32"
    table, *_ = _table(f"    {line}\n", LAUNCH, arg_dtypes=FP16)
    assert table[var] == (symbolic, configured)


def test_block_pointer_loads_and_advance():
    body = '''    bp = tl.make_block_ptr(base=x_ptr, shape=(n, n), strides=(n, 1), offsets=(0, 0),
                           block_shape=(BM, BN), order=(1, 0))
    a = tl.load(bp, boundary_check=(0, 1))
    bp = tl.advance(bp, (0, BN))
    b = tl.load(bp)
'''
    table, _module, k, shapes = _table(body, LAUNCH, arg_dtypes=FP16)
    assert table["bp"] == ("block_ptr [BM, BN] fp16", "block_ptr [32, 64] fp16")
    assert table["a"] == ("[BM, BN] fp16", "[32, 64] fp16")
    assert table["b"] == ("[BM, BN] fp16", "[32, 64] fp16")
    load = next(c for c in k.calls if c.name == "load")
    assert shapes.tile_shape(load.arg(0, "pointer"), k.configs[0]) == (32, 64)


def test_helper_takes_the_callers_constexpr():
    helpers = '''
@triton.jit
def _offsets(start, BLOCK: tl.constexpr):
    return start + tl.arange(0, BLOCK)


@triton.jit
def _pair(x, y):
    return x + 1, tl.sum(y, axis=0)
'''
    body = '''    rows = _offsets(0, BM * 2)
    cols = _offsets(n, BN)
    a, s = _pair(rows, tl.zeros((BM, BN), dtype=tl.float32))
'''
    table, *_ = _table(body, LAUNCH, helpers=helpers, arg_dtypes=FP16)
    assert table["rows"] == ("[BM*2] int32", "[64] int32")
    assert table["cols"] == ("[BN] int32", "[64] int32")
    assert table["a"] == ("[BM*2] int32", "[64] int32")
    assert table["s"] == ("[BN] fp32", "[64] fp32")


def test_constexpr_branches_decide_and_record_what_is_skipped():
    body = '''    if HAS_BIAS:
        v = tl.zeros([BM], dtype=tl.float16)
    else:
        v = tl.zeros([BM, BN], dtype=tl.float32)
    w = tl.zeros([BM], dtype=tl.float16) if BM > 16 else tl.zeros([BN], dtype=tl.float16)
'''
    params = "x_ptr, y_ptr, n, BM: tl.constexpr, BN: tl.constexpr, HAS_BIAS: tl.constexpr"
    launch = "kernel[(1,)](x, y, 10, BM=32, BN=64, HAS_BIAS=False)"
    table, _module, k, shapes = _table(body, launch, params=params)
    # Symbolically both arms are possible: the dimensions they disagree on are unknown.
    assert table[("v", 0)] == ("[BM] fp16", "-")
    assert table[("v", 1)] == ("[BM, BN] fp32", "[32, 64] fp32")
    assert table["w"] == ("[?] fp16", "[32] fp16")
    run = shapes.per_config[0]
    zeros = [c for c in k.calls if c.name == "zeros"]
    assert [run.executes(c.node) for c in zeros] == [False, True, True, False]
    assert all(shapes.symbolic.executes(c.node) for c in zeros)


def test_loop_carried_pointer_keeps_its_block():
    body = '''    p = x_ptr + tl.arange(0, BM)[:, None] * n + tl.arange(0, BN)[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for i in range(0, n, 1):
        acc += tl.load(p)
        p += BN
    z = acc
'''
    table, *_ = _table(body, LAUNCH, arg_dtypes=FP16)
    assert table["p"] == ("[BM, BN] *fp16", "[32, 64] *fp16")
    assert table["z"] == ("[BM, BN] fp32", "[32, 64] fp32")
    assert table["i"] == ("int32", "int32")


def test_conflicts_name_the_dimensions():
    body = '''    a = tl.zeros((BM, 16), dtype=tl.float16)
    b = tl.zeros((32, BN), dtype=tl.float16)
    d = tl.dot(a, b)
    e = tl.arange(0, BM) + tl.arange(0, BN)
'''
    *_, shapes = _table(body, LAUNCH)
    problems = {p.kind: p.message for p in shapes.per_config[0].problems.values()}
    assert problems["dot_inner"] == "tl.dot of [32, 16] by [32, 64]: inner dimensions 16 vs 32"
    assert problems["broadcast"] == "'+' of [32] and [64] blocks: dimension 0 is 32 vs 64"
    # Symbolic BM and BN could be equal; the literal inner dimensions cannot.
    assert {p.kind for p in shapes.symbolic.problems.values()} == {"dot_inner"}


def test_scalar_shape_of_a_parameter_is_not_trusted():
    # An element-wise helper applied to blocks by a wrapper: its parameter is no scalar.
    body = "    f = tl.full(x_ptr.shape, 0.0, tl.float32)\n"
    table, *_ = _table(body, LAUNCH)
    assert table["f"] == ("? fp32", "? fp32")


def test_name_bound_under_a_flag_keeps_its_block():
    # A pointer made under one flag and used under the same flag later: wherever it is read, the
    # branch that binds it ran.
    body = '''    if HAS_BIAS:
        b_ptr = x_ptr + tl.arange(0, BM)
    for i in range(n):
        if HAS_BIAS:
            b = tl.load(b_ptr)
'''
    params = "x_ptr, y_ptr, n, BM: tl.constexpr, BN: tl.constexpr, HAS_BIAS: tl.constexpr"
    table, *_ = _table(body, "kernel[(1,)](x, y, 10, BM=32, BN=64, HAS_BIAS=flag)", params=params, arg_dtypes=FP16)
    assert table["b"] == ("[BM] fp16", "[32] fp16")


def test_compile_time_values_stay_constexpr():
    body = '''    x = tl.load(x_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :])
    count: tl.constexpr = x.numel
    wide: tl.constexpr = tl.constexpr(BM * 2)
    for i in tl.static_range(2):
        step = i
    plain = BM
'''
    table, _module, k, shapes = _table(body, LAUNCH, arg_dtypes=FP16)
    assert table["count"][1] == "constexpr 2048"
    assert table["wide"][1] == "constexpr 64"
    # The loop variable of tl.static_range is a constexpr; the plain assignments make tensors.
    loop = next(s for s, t, name in assignment_targets(k) if name == "i")
    var = loop.child_by_field_name("left")
    assert shapes.per_config[0].at(var).weak
    assert table["step"] == ("int32", "int32") and table["plain"] == ("int32", "int32")


def test_device_helper_parameters_are_unknown():
    helpers = '''
@triton.jit
def _scaled(x, factor):
    y = x * factor
    return y + tl.arange(0, 16)
'''
    body = '''    z = _scaled(tl.zeros((BM, 16), dtype=tl.float32), 2.0)
'''
    table, module, _k, _shapes = _table(body, LAUNCH, helpers=helpers, arg_dtypes=FP16)
    assert table["z"] == ("[BM, 16] fp32", "[32, 16] fp32")  # at the call, with the caller's block
    helper = module.kernel("_scaled")
    alone = infer_kernel(module, helper)
    assert alone.helper and not infer_kernel(module, module.kernel("kernel")).helper
    target = next(t for _s, t, name in assignment_targets(helper) if name == "y")
    assert describe(alone.symbolic.at(target)) == "?"  # not the 0-d scalar a kernel argument is


def test_comparisons_of_unknown_values_are_unknown():
    helpers = '''
@triton.jit
def _pick(dtype, x):
    if dtype is tl.int64:
        return x
    return x == 1
'''
    body = '''    v = _pick(tl.int32, n)
'''
    _, module, *_ = _table(body, LAUNCH, helpers=helpers, arg_dtypes=FP16)
    helper = module.kernel("_pick")
    run = infer_kernel(module, helper).symbolic
    body_node = helper.node.child_by_field_name("body")
    conds = [n.child_by_field_name("condition") for n in body_node.named_children if n.type == "if_statement"]
    cond = run.at(conds[0])
    assert cond.weak and not cond.constant  # `is` is a compile-time test whose answer is unknown here
    ret = [n for n in body_node.named_children if n.type == "return_statement"][-1]
    assert run.at(ret.named_children[0]).kind == "unknown"  # neither a constexpr nor a runtime tensor
