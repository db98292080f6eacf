"""One kernel discovery: the `ast` one (rewriter, profiler) finds exactly the JIT functions the
analyzer's tree-sitter model finds, for every decorator shape real projects use, and tells
launchable kernels from device helpers."""

from __future__ import annotations

import ast
import textwrap

import pytest
from tritonlens.analysis.kernel_discovery import KernelKind, discover
from tritonlens.analysis.model import build_module, jit_functions
from tritonlens.analysis.source import Source
from tritonlens.profiling.api import find_kernels
from tritonlens.rewrite.edits import kernel_named, kernels
from tritonlens.rewrite.static_check import race_problems

L, H = KernelKind.LAUNCHABLE, KernelKind.DEVICE_HELPER

# (source, {name: kind} of every JIT function it defines)
CASES = {
    "plain": ("""
        import triton
        import triton.language as tl

        @triton.jit
        def copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs))
        """, {"copy": L}),
    "import_aliases": ("""
        import triton as tr
        from triton import jit, jit as tjit

        @jit
        def a(x_ptr):
            pass

        @tr.jit
        def b(x_ptr):
            pass

        @tjit(do_not_specialize=["n"])
        def c(x_ptr, n):
            pass
        """, {"a": L, "b": L, "c": L}),
    "autotune_heuristics_and_wrappers": ("""
        import triton
        import triton.language as tl
        from myproject.runtime import libentry, libtuner

        @libentry()
        @triton.autotune(configs=[triton.Config({"BLOCK": 128})], key=["n"])
        @triton.jit
        def tuned(x_ptr, n, BLOCK: tl.constexpr):
            pass

        @libentry()
        @libtuner(configs=[], key=["n"])
        @triton.heuristics({"EVEN": lambda args: args["n"] % 64 == 0})
        @triton.jit
        def heuristic(x_ptr, n, EVEN: tl.constexpr):
            pass

        @triton.autotune(configs=[], key=["n"])
        @libentry()
        @triton.jit
        def wrapped_inside(x_ptr, n):
            pass
        """, {"tuned": L, "heuristic": L, "wrapped_inside": L}),
    "module_level_branches": ("""
        import triton
        import triton.language as tl

        if hasattr(tl, "make_tensor_descriptor"):
            @triton.jit
            def load_tile(desc, BLOCK: tl.constexpr):
                pass
        elif triton.__version__ >= "3.0":
            @triton.jit
            def load_tile_v3(x_ptr, BLOCK: tl.constexpr):
                pass
        else:
            if True:
                @triton.jit
                def load_tile_old(x_ptr, BLOCK: tl.constexpr):
                    pass

        try:
            @triton.jit
            def fast(x_ptr):
                pass
        except ImportError:
            @triton.jit
            def slow(x_ptr):
                pass
        finally:
            pass

        def wrapper():
            @triton.jit
            def local_kernel(x_ptr):  # a function's local: not a module-level kernel
                pass
        """, {"load_tile": L, "load_tile_v3": L, "load_tile_old": L, "fast": L, "slow": L}),
    "not_triton": ("""
        import torch
        import triton
        from numba import jit
        import cutlass.cute as cute
        from triton.experimental import gluon

        @cute.jit
        def cute_kernel(x):
            pass

        @torch.jit.script
        def scripted(x):
            return x

        @gluon.jit
        def gluon_kernel(x):
            pass

        @jit
        def numba_fn(x):
            return x

        def plain(x):
            return x
        """, {}),
    "device_helpers": ("""
        import triton
        import triton.language as tl

        @triton.jit
        def _max_combine(a, b):
            return tl.maximum(a, b)

        @triton.jit
        def _add_pair(a0, a1, b0, b1):
            return a0 + b0, a1 + b1

        @triton.jit
        def _store_row(ptr, row, x):  # no value returned: a helper because a kernel calls it
            tl.store(ptr + row, x)

        @triton.jit
        def row_max(x_ptr, out_ptr, BLOCK: tl.constexpr):
            x = tl.load(x_ptr + tl.arange(0, BLOCK))
            m = tl.reduce(x, 0, _max_combine)
            s, c = tl.associative_scan((x, x), 0, combine_fn=_add_pair)
            _store_row(out_ptr, tl.program_id(0), m)

        @triton.jit
        def launched_and_returns(x_ptr):  # a launch wins over everything else
            return 0

        def run(x, out):
            row_max[(x.shape[0],)](x, out, BLOCK=1024)
            launched_and_returns[(1,)](x)
        """, {"_max_combine": H, "_add_pair": H, "_store_row": H, "row_max": L, "launched_and_returns": L}),
    "same_name_per_branch": ("""
        import triton
        import triton.language as tl

        if hasattr(tl, "gather"):
            @triton.jit
            def relu(x):  # returns a value: a helper
                return tl.maximum(x, 0.0)
        else:
            @triton.jit
            def relu(x_ptr, BLOCK: tl.constexpr):  # the same name, in place: a kernel
                offs = tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.maximum(tl.load(x_ptr + offs), 0.0))
        """, {"relu": L}),
    "rebound_by_a_call": ("""
        import triton
        import triton.language as tl


        @triton.jit
        def _scaled(x, s):
            return x * s


        def _rows_kernel(x_ptr, y_ptr, n, s, BLOCK: tl.constexpr, EVEN: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs) if EVEN else tl.load(x_ptr + offs, mask=offs < n)
            tl.store(y_ptr + offs, _scaled(x, s), mask=offs < n)


        _rows_kernel = triton.jit(_rows_kernel)
        _rows_kernel = triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})(_rows_kernel)


        def rows(x, s):
            y = torch.empty_like(x)
            _rows_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), s, BLOCK=1024)
            return y
        """, {"_scaled": H, "_rows_kernel": L}),
}


def _src(case: str) -> str:
    return textwrap.dedent(CASES[case][0]).lstrip("\n")


@pytest.mark.parametrize("case", list(CASES))
def test_kinds(case: str):
    found = discover(ast.parse(_src(case)))
    assert {k.name: k.kind for k in found} == CASES[case][1]
    for k in found:
        assert k.reason  # every kind says why


@pytest.mark.parametrize("case", list(CASES))
def test_ast_and_tree_sitter_agree(case: str):
    text = _src(case)
    module = build_module(Source(text))
    modelled = {(k.name, k.node.start_point[0] + 1) for k in module.kernels}
    by_ast = [(k.name, k.line, k.kind, k.reason) for k in discover(ast.parse(text))]
    assert {(name, line) for name, line, _, _ in by_ast} == modelled
    assert [(k.name, k.line, k.kind, k.reason) for k in jit_functions(Source(text))] == by_ast


def test_reasons_name_the_evidence():
    by_name = {k.name: k.reason for k in discover(ast.parse(_src("device_helpers")))}
    assert by_name["_max_combine"] == "combine function of the reduction at line 19"
    assert by_name["_add_pair"] == "combine function of the reduction at line 20"
    assert by_name["_store_row"] == "called from the JIT function row_max"
    assert by_name["row_max"] == "launched at line 28"


def test_callers_share_it():
    text = _src("device_helpers")
    # the profiler lists what can be launched; the rewriter sees every JIT function and picks a
    # launchable one when no kernel is named
    assert find_kernels(text) == {"row_max": 17, "launched_and_returns": 24}
    tree = ast.parse(text)
    assert [k.name for k in kernels(tree)] == ["_max_combine", "_add_pair", "_store_row", "row_max", "launched_and_returns"]
    assert kernel_named(tree, None).name == "row_max"
    assert kernel_named(tree, "_store_row").name == "_store_row"
    branches = _src("module_level_branches")
    assert set(find_kernels(branches)) == {"load_tile", "load_tile_v3", "load_tile_old", "fast", "slow"}


def test_static_check_sees_kernels_under_aliases():
    # a racy store added to a kernel decorated through an alias is still a kernel's store
    before = "from triton import jit\nimport triton.language as tl\n\n@jit\ndef k(out_ptr, x):\n    pass\n"
    after = before.replace("    pass\n", "    tl.store(out_ptr, x)\n")
    assert race_problems(before, after)


def test_a_rebinding_reads_as_its_decorators():
    # `k = triton.heuristics({...})(k)` after `k = triton.jit(k)`: the same kernel as with the two
    # decorators, its heuristics owning EVEN (so no launch is blamed for leaving it out)
    [kernel] = [k for k in build_module(Source(_src("rebound_by_a_call"))).kernels if k.name == "_rows_kernel"]
    assert kernel.decorators == ["jit", "heuristics"] and set(kernel.heuristics) == {"EVEN"}
    assert len(kernel.launches) == 1
