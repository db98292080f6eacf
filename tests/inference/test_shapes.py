"""Shape and dtype inference over the examples and the rule fixtures: shapes asserted at named
lines (found by their text, so an edit elsewhere in a file does not move them), symbolic and per
configuration, with an autotuned kernel and a kernel calling a @triton.jit helper; every assignment
of examples/ is pinned by examples_shapes.snap."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.shapes import assignment_targets, describe, infer_kernel

ROOT = Path(__file__).parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "rules").glob("*/*.py"))
SNAPSHOT = Path(__file__).with_name("examples_shapes.snap")
UPDATE = os.environ.get("TRITONLENS_UPDATE_SNAPSHOTS") == "1"


def _shapes(path_or_text, arg_dtypes=None, kernel=None):
    text = path_or_text.read_text() if isinstance(path_or_text, Path) else path_or_text
    result = Analyzer().analyze(text)
    assert not result.errors, result.errors
    ks = [k for k in result.module.kernels if kernel is None or k.name == kernel]
    return text, result.module, {k.name: (k, infer_kernel(result.module, k, arg_dtypes)) for k in ks}


def _at(text, module, table, line_text: str, var: str):
    """(symbolic, [per configuration]) descriptions of `var` assigned on the line starting with `line_text`."""
    lines = [i for i, ln in enumerate(text.splitlines()) if ln.strip().startswith(line_text)]
    assert lines, f"no line starts with {line_text!r}"
    for k, shapes in table.values():
        for stmt, target, name in assignment_targets(k):
            if name == var and target.start_point[0] == lines[0]:
                key = (target.start_byte, name)
                return (describe(shapes.symbolic.targets[key]),
                        [describe(r.targets[key]) for r in shapes.per_config])
    raise AssertionError(f"{var} is not assigned on line {lines[0] + 1}")


# (example, line start, variable, symbolic, per configuration)
EXPECTED = [
    ("vector_add.py", "offsets = block_start", "offsets", "[BLOCK_SIZE] int32", ["[64] int32"]),
    ("vector_add.py", "mask = offsets < n_elements", "mask", "[BLOCK_SIZE] int1", ["[64] int1"]),
    ("vector_add.py", "x = tl.load", "x", "[BLOCK_SIZE] ?", ["[64] ?"]),
    ("matmul.py", "a_ptrs = a_ptr +", "a_ptrs", "[BLOCK_M, BLOCK_K] ?", ["[32, 32] ?"]),
    ("matmul.py", "acc = tl.zeros", "acc", "[BLOCK_M, BLOCK_N] fp32", ["[32, 32] fp32"]),
    ("matmul.py", "b = tl.load(b_ptrs", "b", "[BLOCK_K, BLOCK_N] ?", ["[32, 32] ?"]),
    ("matmul.py", "c = acc.to(tl.float16)", "c", "[BLOCK_M, BLOCK_N] fp16", ["[32, 32] fp16"]),
    ("matmul.py", "c_mask = ", "c_mask", "[BLOCK_M, BLOCK_N] int1", ["[32, 32] int1"]),
    ("softmax.py", "x_max = tl.max(x, axis=0)", "x_max", "fp32", ["fp32"]),
    ("softmax.py", "num = tl.exp(x - x_max)", "num", "[BLOCK_SIZE] fp32", ["[BLOCK_SIZE] fp32"]),
    ("transpose.py", "mask = ", "mask", "[BLOCK_M, BLOCK_N] int1", ["[32, 32] int1"]),
    ("reduction_atomic.py", "offsets = ", "offsets", "[BLOCK_SIZE] int32", ["[1024] int32"]),
    ("layernorm.py", "cols = off + tl.arange", "cols", "[BLOCK_SIZE] int32", ["[1024] int32"]),
    ("layernorm.py", "_mean = tl.zeros", "_mean", "[BLOCK_SIZE] fp32", ["[1024] fp32"]),
    # autotuned: one result per autotune config
    ("rmsnorm_autotune.py", "acc = tl.zeros", "acc", "[BLOCK_SIZE] fp32",
     ["[256] fp32", "[1024] fp32", "[2048] fp32", "[4096] fp32"]),
    ("rmsnorm_autotune.py", "row = tl.program_id(0).to(tl.int64)", "row", "int64", ["int64"] * 4),
    ("rmsnorm_autotune.py", "x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)", "x",
     "[BLOCK_SIZE] fp32", ["[256] fp32", "[1024] fp32", "[2048] fp32", "[4096] fp32"]),
]


@pytest.mark.parametrize("example,line,var,symbolic,per_config", EXPECTED, ids=[f"{e[0]}:{e[2]}" for e in EXPECTED])
def test_example_shapes(example, line, var, symbolic, per_config):
    text, module, table = _shapes(ROOT / "examples" / example)
    got_sym, got_per = _at(text, module, table, line, var)
    assert got_sym == symbolic
    assert got_per == per_config


def test_argument_dtypes_flow_through_loads_and_dot():
    dtypes = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    for s in ("stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn"):
        dtypes[s] = "i32"
    text, module, table = _shapes(ROOT / "examples" / "matmul.py", dtypes)
    assert _at(text, module, table, "a = tl.load", "a") == ("[BLOCK_M, BLOCK_K] fp16", ["[32, 32] fp16"])
    assert _at(text, module, table, "a_ptrs = a_ptr", "a_ptrs") == ("[BLOCK_M, BLOCK_K] *fp16", ["[32, 32] *fp16"])
    assert _at(text, module, table, "num_pid_n = tl.cdiv(N, BLOCK_N)", "num_pid_n") == ("int32", ["int32"])
    # the loop-carried accumulator stays [32, 32] fp32 through `acc += tl.dot(a, b)`
    k, shapes = table["matmul_kernel"]
    acc = [(t, n) for s, t, n in assignment_targets(k) if n == "acc"]
    assert [describe(shapes.per_config[0].targets[(t.start_byte, n)]) for t, n in acc] == ["[32, 32] fp32"] * 2


HELPERS = '''
import triton
import triton.language as tl


@triton.jit
def _tile_offsets(pid, BLOCK: tl.constexpr, WIDTH: tl.constexpr):
    rows = pid * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, WIDTH)
    return rows[:, None] * WIDTH + cols[None, :], rows


@triton.jit
def _softmax_rows(x):
    m = tl.max(x, axis=1, keep_dims=True)
    e = tl.exp(x - m)
    return e / tl.sum(e, axis=1)[:, None]


@triton.jit
def kernel(x_ptr, y_ptr, BLOCK: tl.constexpr, WIDTH: tl.constexpr):
    pid = tl.program_id(0)
    offs, rows = _tile_offsets(pid, BLOCK, WIDTH)
    x = tl.load(x_ptr + offs)
    p = _softmax_rows(x.to(tl.float32))
    a, b = tl.split(tl.reshape(p, (BLOCK, WIDTH // 2, 2)))
    j = tl.join(a, b)
    t = tl.trans(p)
    q = tl.permute(j, (2, 0, 1))
    e = tl.expand_dims(rows, 1)
    bc = tl.broadcast_to(e, (BLOCK, WIDTH))
    w = tl.where(rows[:, None] < 3, p, 0.0)
    idx = tl.argmax(p, axis=1)
    s3 = tl.dot(tl.reshape(p, (2, BLOCK // 2, WIDTH)), tl.reshape(t, (2, WIDTH, BLOCK // 2)))
    bp = tl.make_block_ptr(x_ptr, (64, 64), (64, 1), (0, 0), (BLOCK, WIDTH), (1, 0))
    blk = tl.load(tl.advance(bp, (BLOCK, 0)))
    full = tl.full((BLOCK,), 1, tl.int8)
    k8 = tl.sum(full)
    tl.store(y_ptr + offs, p)


def launch(x, y):
    kernel[(4,)](x, y, BLOCK=32, WIDTH=16)
'''


@pytest.mark.parametrize("var,expected", [
    ("offs", "[32, 16] int32"), ("rows", "[32] int32"), ("x", "[32, 16] fp16"), ("p", "[32, 16] fp32"),
    ("a", "[32, 8] fp32"), ("j", "[32, 8, 2] fp32"), ("t", "[16, 32] fp32"), ("q", "[2, 32, 8] fp32"),
    ("e", "[32, 1] int32"), ("bc", "[32, 16] int32"), ("w", "[32, 16] fp32"), ("idx", "[32] int32"),
    ("s3", "[2, 16, 16] fp32"), ("bp", "block_ptr [32, 16] fp16"), ("blk", "[32, 16] fp16"),
    ("full", "[32] int8"), ("k8", "int32"),
])
def test_helpers_and_block_ops(var, expected):
    _text, _module, table = _shapes(HELPERS, {"x_ptr": "*fp16", "y_ptr": "*fp32"}, kernel="kernel")
    k, shapes = table["kernel"]
    got = [describe(shapes.per_config[0].targets[(t.start_byte, n)]) for s, t, n in assignment_targets(k) if n == var]
    assert got == [expected]
    sym = [describe(shapes.symbolic.targets[(t.start_byte, n)]) for s, t, n in assignment_targets(k) if n == "offs"]
    assert sym == ["[BLOCK, WIDTH] int32"]


def test_unknown_stays_unknown():
    text = '''
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = some_python_function(x)
    z = x + y
    if n > 0:
        w = x
    else:
        w = x[:, None]
'''
    text, _module, table = _shapes(text)
    kern, shapes = table["k"]
    got = {n: describe(shapes.symbolic.targets[(t.start_byte, n)]) for s, t, n in assignment_targets(kern)}
    assert got["x"] == "[BLOCK] ?"
    assert got["y"] == "?"
    assert got["z"] == "?"
    assert not shapes.symbolic.problems


def _snapshot_lines(path: Path) -> list[str]:
    """`line var: symbolic | per configuration…` for every assignment of every kernel in `path`."""
    _text, _module, table = _shapes(path)
    out = []
    for k, shapes in table.values():
        runs = [shapes.symbolic, *shapes.per_config]
        for _s, t, n in assignment_targets(k):
            key = (t.start_byte, n)
            got = [describe(r.targets[key]) if key in r.targets else "-" for r in runs]
            out.append(f"{path.name}:{t.start_point[0] + 1} {n}: " + " | ".join(got))
    return out


def test_examples_match_their_snapshot():
    """Every assignment in examples/, exactly: a change of any shape or dtype shows as a diff to
    review (regenerate: TRITONLENS_UPDATE_SNAPSHOTS=1)."""
    got = ["# shapes of examples/ (symbolic | each configuration; - = not run there)"]
    for path in EXAMPLES:
        got += _snapshot_lines(path)
    if UPDATE:
        SNAPSHOT.write_text("\n".join(got) + "\n")
    want = SNAPSHOT.read_text().splitlines()
    if got != want:
        diff = difflib.unified_diff(want, got, "snapshot", "now", lineterm="", n=1)
        pytest.fail("shapes differ from the snapshot:\n" + "\n".join(diff), pytrace=False)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_kernel_is_interpreted(path):
    """Rule fixtures are odd on purpose: every kernel's runs, symbolic included, must complete."""
    _text, _module, table = _shapes(path)
    for k, shapes in table.values():
        assert shapes.symbolic is not None and len(shapes.per_config) == len(k.configs)
