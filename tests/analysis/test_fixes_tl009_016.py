"""Deterministic fixes of TL009, TL014, TL015, TL016: applied to real kernels, the text is what a
Triton expert would write, it still parses, and re-analysis no longer reports the rule."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.findings import apply_edits

FIXTURES = Path(__file__).parent.parent / "fixtures" / "rules"


def _fix_all(text: str, code: str) -> tuple[str, list]:
    result = Analyzer().analyze(text, select=[code])
    assert not result.errors, result.errors
    found = [f for f in result.findings if f.code == code]
    edits = [e for f in found if f.fix for e in f.fix.edits]
    return apply_edits(text, edits), found


def _assert_fixed(before: str, after: str, code: str):
    ast.parse(after)
    again = Analyzer().analyze(after, select=[code])
    assert not [f for f in again.findings if f.code == code], [f.message for f in again.findings]


def test_tl014_float64_to_float32():
    before = (FIXTURES / "TL014" / "positive_full_and_zeros.py").read_text()
    after, found = _fix_all(before, "TL014")
    assert len(found) == 2 and all(f.fix for f in found)
    assert {f.fix.title for f in found} == {"change tl.float64 to tl.float32"}
    assert "acc = tl.zeros([BLOCK], dtype=tl.float32)" in after
    assert "bias = tl.full([BLOCK], 0.5, dtype=tl.float32)" in after
    assert after == before.replace("tl.float64", "tl.float32")
    _assert_fixed(before, after, "TL014")


def test_tl014_cast():
    before = (FIXTURES / "TL014" / "positive_to_float64.py").read_text()
    after, _ = _fix_all(before, "TL014")
    assert "other=0.0).to(tl.float32)  # expect: TL014" in after
    _assert_fixed(before, after, "TL014")


def test_tl016_annotation_keeps_default():
    before = (FIXTURES / "TL016" / "positive_arange_bound.py").read_text()
    after, found = _fix_all(before, "TL016")
    assert found and found[0].fix is not None
    assert after == before.replace("def scale_kernel(x_ptr, out_ptr, n, BLOCK=1024):",
                                   "def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr = 1024):")
    _assert_fixed(before, after, "TL016")


def test_tl016_replaces_other_annotation_and_bare_parameter():
    before = (FIXTURES / "TL016" / "positive_tile_shapes.py").read_text()
    after, found = _fix_all(before, "TL016")
    assert len(found) == 3
    assert "def row_block_sum_kernel(x_ptr, out_ptr, stride, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):" in after
    assert "def regroup_kernel(x_ptr, y_ptr, groups: tl.constexpr, BLOCK: tl.constexpr):" in after
    _assert_fixed(before, after, "TL016")


def test_tl016_fix_compiles_with_triton(tmp_path):
    """The fixed kernel is accepted by the real compiler where the original was not."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    before = (FIXTURES / "TL016" / "positive_arange_bound.py").read_text()
    after, _ = _fix_all(before, "TL016")
    target = GPUTarget("cuda", 90, 32)

    def compile_from(text, tmp_name, constexprs, sig):
        path = tmp_path / tmp_name  # @triton.jit reads the kernel's source from its file
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(tmp_name[:-3], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return triton.compile(ASTSource(module.scale_kernel, sig, constexprs), target=target)

    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    with pytest.raises(Exception, match="arange's arguments must be of type tl.constexpr"):
        compile_from(before, "_tl016_before.py", {}, {**sig, "BLOCK": "i32"})
    compiled = compile_from(after, "_tl016_after.py", {"BLOCK": 1024}, {**sig, "BLOCK": "constexpr"})
    assert compiled.asm.get("ptx")


def test_tl015_raises_wrapper_block():
    before = (FIXTURES / "TL015" / "positive_wrapper_block.py").read_text()
    after, found = _fix_all(before, "TL015")
    assert len(found) == 1 and found[0].fix is not None
    assert after == before.replace("    BLOCK_SIZE = 64\n", "    BLOCK_SIZE = 1024\n")
    _assert_fixed(before, after, "TL015")


def test_tl015_autotune_fixed_unmasked_not():
    before = (FIXTURES / "TL015" / "positive_autotune_and_unmasked.py").read_text()
    after, found = _fix_all(before, "TL015")
    by_kernel = {f.kernel: f for f in found}
    assert by_kernel["relu_kernel"].fix is not None
    assert by_kernel["copy_exact_kernel"].fix is None  # no mask: raising the block would overrun
    assert 'configs=[triton.Config({"BLOCK": 1024}, num_warps=1)]' in after
    again = Analyzer().analyze(after, select=["TL015"])
    assert [f.kernel for f in again.findings] == ["copy_exact_kernel"]


def test_tl009_num_warps_literal():
    before = (FIXTURES / "TL009" / "positive_launch_num_warps.py").read_text()
    after, found = _fix_all(before, "TL009")
    assert len(found) == 1 and found[0].data["suggested_num_warps"] == 1
    assert found[0].fix.title == "set num_warps=1 (was 16)"
    assert "BLOCK=BLOCK, num_warps=1)" in after
    assert after == before.replace("num_warps=16)", "num_warps=1)")
    _assert_fixed(before, after, "TL009")


def test_tl009_autotune_config():
    before = (FIXTURES / "TL009" / "positive_autotune_too_large.py").read_text()
    after, found = _fix_all(before, "TL009")
    assert len(found) == 1 and found[0].data["per_thread"] == 128
    # 16384 elements: 16 warps give 32 per thread
    assert 'triton.Config({"BLOCK_SIZE": 16384}, num_warps=16)' in after
    _assert_fixed(before, after, "TL009")


def test_tl009_no_fix_without_literal():
    text = Path(__file__).parent.parent.parent.joinpath("examples", "vector_add.py")
    if not text.exists():
        pytest.skip("examples/ not present")
    result = Analyzer().analyze(text.read_text(), select=["TL009"])
    found = [f for f in result.findings if f.code == "TL009"]
    assert found and all(f.fix is None for f in found)  # Triton's default num_warps: nothing to rewrite


def test_tl015_hand_written_ceil_grids():
    # (n + BLOCK - 1) // BLOCK, -(-n // BLOCK), math.ceil(n / BLOCK) and a lambda returning one:
    # each is the programs' block; the fix raises it where the grid reads the same value.
    before = (FIXTURES / "TL015" / "positive_hand_written_ceil_grids.py").read_text()
    after, found = _fix_all(before, "TL015")
    fixed = {f.kernel for f in found if f.fix is not None}
    assert {f.kernel for f in found} == {"double_kernel", "negate_kernel", "square_kernel", "abs_kernel", "relu_kernel"}
    assert fixed == {"negate_kernel", "square_kernel", "abs_kernel", "relu_kernel"}  # the grid's literal 4 would not follow
    again = Analyzer().analyze(after, select=["TL015"])
    assert [f.kernel for f in again.findings] == ["double_kernel"]


def test_tl009_names_config_of_dot_kernel_accumulator():
    # Operand tiles are left to shared memory; the accumulator over too few warps is reported
    # with the sizes and the autotune config that give the numbers.
    text = (FIXTURES / "TL009" / "negative_dot_operands.py").read_text().replace(
        '{"BLOCK_M": 256, "BLOCK_N": 64, "BLOCK_K": 128}, num_warps=4',
        '{"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128}, num_warps=4')
    after, found = _fix_all(text, "TL009")
    assert len(found) == 1 and found[0].data["per_thread"] == 512
    assert "(autotune config 2 of 3)" in found[0].message and "BLOCK_M=256" in found[0].message
    assert "acc = tl.zeros" in text.splitlines()[found[0].range.start.line]
