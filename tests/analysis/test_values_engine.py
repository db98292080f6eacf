"""The value of an in-kernel expression in a configuration, as the rules and the estimates read it
from the shape engine (KernelShapes.constant_at, KernelContext.values), and the value layer's
constant folding that the engine and the host-side launch resolution share."""

from __future__ import annotations

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.findings import Severity
from tritonlens.analysis.rules.base import KernelContext, RuleInfo
from tritonlens.analysis.shapes import NOT_RUN, infer_kernel
from tritonlens.analysis.values import UNKNOWN, call, constants_scope, evaluate, unary

KERNEL = '''
import triton
import triton.language as tl

BASE = 16
WIDE = BASE * 4
NEG = -(~3)


@triton.jit
def k(x_ptr, n, K, BLOCK: tl.constexpr, PAD: tl.constexpr):
    half = BLOCK // 2
    steps = tl.cdiv(K, BLOCK)
    last = min(K, 4 * BLOCK)
    offs = tl.arange(0, n)
    wide = tl.arange(0, WIDE)
    if PAD:
        padded = half + 3
    if K > 0:
        pos = K - 1
    for i in range(0, K, BLOCK):
        tl.store(x_ptr + i + tl.arange(0, BLOCK), 1.0)


def run(x):
    k[(1,)](x, 1024, 96, BLOCK=32, PAD=False)
    k[(1,)](x, 1024, 96, BLOCK=64, PAD=True)
'''


def _kernel(text: str, name: str):
    result = Analyzer().analyze(text)
    assert not result.errors, result.errors
    return result, result.module.kernel(name)


def _node(result, kernel, text: str):
    """The first expression node of the kernel whose source is exactly `text`."""
    src = result.module.src
    stack = [kernel.node]
    while stack:
        n = stack.pop(0)
        if n.is_named and src.text_of(n) == text and n.type != "expression_statement":
            return n
        stack.extend(n.children)
    raise AssertionError(f"no node {text!r}")


def test_constexpr_arithmetic_per_configuration():
    result, k = _kernel(KERNEL, "k")
    shapes = infer_kernel(result.module, k)
    small, large = k.configs
    node = _node(result, k, "BLOCK // 2")
    assert (shapes.constant_at(node, small), shapes.constant_at(node, large)) == (16, 32)
    assert shapes.constant_at(node, None) is UNKNOWN  # symbolic: BLOCK has no value


def test_untaken_branch_has_no_value():
    result, k = _kernel(KERNEL, "k")
    shapes = infer_kernel(result.module, k)
    pad_off, pad_on = k.configs
    node = _node(result, k, "half + 3")
    assert shapes.constant_at(node, pad_off) is NOT_RUN
    assert shapes.constant_at(node, pad_on) == 35
    ctx = KernelContext(result.module, k, RuleInfo("TL000", "test", Severity.INFO, "test"))
    assert ctx.values(node, pad_off) == []
    assert ctx.values(node, pad_on) == [35]


def test_runtime_sizes_feed_values_not_shapes_or_branches():
    result, k = _kernel(KERNEL, "k")
    shapes = infer_kernel(result.module, k)
    config = k.configs[0]  # K=96 and n=1024 written at the launch, BLOCK=32
    assert shapes.constant_at(_node(result, k, "tl.cdiv(K, BLOCK)"), config) == 3
    assert shapes.constant_at(_node(result, k, "min(K, 4 * BLOCK)"), config) == 96
    # `tl.arange(0, n)` with a runtime n: Triton refuses it, whatever n is at one launch
    assert shapes.shape_of(_node(result, k, "tl.arange(0, n)"), config) == (None,)
    # a runtime condition decides no branch: the code under `if K > 0` runs
    assert shapes.constant_at(_node(result, k, "K - 1"), config) == 95
    assert shapes.run_for(config).executes(_node(result, k, "K - 1"))
    assert any(f.code == "TL016" for f in result.findings)


def test_module_constants_built_from_others():
    result, k = _kernel(KERNEL, "k")
    shapes = infer_kernel(result.module, k)
    node = _node(result, k, "tl.arange(0, WIDE)")
    assert shapes.shape_of(node, k.configs[0]) == (64,)
    scope = constants_scope(result.module.constants, result.module.src)
    assert scope.lookup("WIDE")[0].value == 64
    assert scope.lookup("missing") is None


def test_loop_trips_with_given_sizes():
    from tritonlens.analysis.estimates.trips import trip_evaluator

    result, k = _kernel(KERNEL, "k")
    ev = trip_evaluator(k, result.module, k.configs[1])  # K=96, BLOCK=64
    assert ev.loop_trips(k.loops[0]) == 2


def test_unary_folding_shared():
    assert (unary("-", 3), unary("~", 5), unary("+", 2.5)) == (-3, -6, 2.5)
    assert unary("~", 1.5) is UNKNOWN and unary("-", UNKNOWN) is UNKNOWN and unary("not", 1) is UNKNOWN
    result, _ = _kernel(KERNEL, "k")
    constants, src = result.module.constants, result.module.src
    assert evaluate(constants["NEG"][-1], src, constants_scope(constants, src)) == [4]


def test_host_grid_folds_with_the_value_layer():
    from tritonlens.analysis.estimates.grid import grid_programs

    text = KERNEL.replace("k[(1,)](x, 1024, 96, BLOCK=32", "k[(triton.cdiv(4096, 1 << 6) * 2,)](x, 1024, 96, BLOCK=32")
    result, k = _kernel(text, "k")
    assert grid_programs(k, result.module, k.configs[0]) == 128
    assert (call("cdiv", [10, 4]), call("max", [3, 7])) == (3, 7)
    assert call("len", [[1]]) is UNKNOWN and call("cdiv", [1, 0]) is UNKNOWN and call("min", []) is UNKNOWN


def test_launch_reads_module_constants_as_python_does():
    text = '''
import triton
import triton.language as tl

BLOCK = 64
ROWS = BLOCK * 2


@triton.jit
def rows(x_ptr, R: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, R), 0.0)


def run(x):
    BLOCK = 16  # a local: ROWS was computed from the module's BLOCK at import
    rows[(1,)](x, R=ROWS)
'''
    _, k = _kernel(text, "rows")
    (config,) = k.configs
    assert config.values["R"].value == 128
    assert config.values["R"].origin.startswith("the module constant at line 6")
