"""Values the static model assumes by how the kernel uses each parameter, so that the assumption
compiles: a float-named integer that addresses memory, a flag tested in a conditional expression,
pointers whose element type the wrapper allocates or the kernel's use decides (packed integers,
loaded indices over several lines, an atomic max target), parameters aliased into a local pointer,
and a string the kernel passes as eviction_policy. Compiled by the real Triton compiler (sm_90, no GPU)."""

from pathlib import Path

from tritonlens.profiling.compile_job import compile_file
from tritonlens.profiling.static_configs import static_configs_of_text

FIXTURE = Path(__file__).parent / "fixtures" / "assumed_by_use" / "kernels.py"


def _only(report, name):
    (c,) = report.kernel(name).configs
    assert c.error is None and c.registers is not None, c.error
    return c


def test_float_named_integers_that_address_memory_and_flags_in_conditional_expressions(report, configs):
    args = configs["grouped_scale_kernel"][0]["args"]
    assert args["scale_cols"]["kind"] == args["H_scale"]["kind"] == "int"
    assert args["SCALE_BYTES"] == {"kind": "constexpr", "value": False}
    _only(report, "grouped_scale_kernel")


def test_pointer_types_from_the_launch_and_from_use(report, configs):
    by_name = {n: configs[n][0]["args"] for n in ("pack_nibbles_kernel", "index_scatter_kernel", "amax_kernel")}
    assert by_name["pack_nibbles_kernel"]["out_ptr"]["dtype"] == "uint8"  # torch.empty(..., dtype=torch.uint8)
    assert by_name["index_scatter_kernel"]["index_ptr"]["dtype"] == "int64"
    assert by_name["amax_kernel"]["amax_ptr"]["dtype"] == "float32" and by_name["amax_kernel"]["x_ptr"]["dtype"] == \
        "float16"
    for name in by_name:
        _only(report, name)


def test_address_tables_and_summed_offsets_are_integers(report, configs):
    args = configs["gather_segments_kernel"][0]["args"]
    assert args["segment_ptrs"]["dtype"] == args["start_lens"]["dtype"] == "int64"
    _only(report, "gather_segments_kernel")
    assert configs["pad_rows_kernel"][0]["args"]["lens_ptr"]["dtype"] == "int32"
    _only(report, "pad_rows_kernel")
    assert configs["page_ids_kernel"][0]["args"]["token_locs_ptr"]["dtype"] == "int32"
    _only(report, "page_ids_kernel")


def test_int32_dot_operands_are_int8(report, configs):
    args = configs["int8_mm_kernel"][0]["args"]
    assert args["A"]["dtype"] == args["B"]["dtype"] == "int8" and args["C"]["dtype"] == "float32"
    assert _only(report, "int8_mm_kernel").mma


def test_packed_output_without_a_wrapper_holds_integers():
    text = FIXTURE.read_text().split("def pack_nibbles(x):")[0]
    (cfg,) = static_configs_of_text(text)[0]["pack_nibbles_kernel"]
    assert cfg["args"]["out_ptr"]["dtype"] == "int32"


def test_aliased_pointers_and_string_constexprs(report, configs):
    args = configs["stack_two_kernel"][0]["args"]
    assert args["in_a"]["kind"] == args["in_b"]["kind"] == "tensor"
    assert configs["streamed_copy_kernel"][0]["args"]["EVICT"] == {"kind": "constexpr", "value": ""}
    assert configs["precise_dot_kernel"][0]["args"]["PRECISION"] == {"kind": "constexpr", "value": "tf32"}
    _only(report, "precise_dot_kernel")
    _only(report, "stack_two_kernel")
    _only(report, "streamed_copy_kernel")


NUM_WARPS_FLAG = '''import triton
import triton.language as tl

WIDE = False


@triton.jit
def ln_kernel(x_ptr, n, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def ln(x):
    ln_kernel[(1,)](x, x.numel(), N=x.shape[-1], num_warps=WIDE)
'''


def test_num_warps_read_as_no_count_is_assumed(tmp_path):
    # an environment switch read as False is no warp count: Triton's default, not a binder refusal
    (cfg,) = static_configs_of_text(NUM_WARPS_FLAG)[0]["ln_kernel"]
    assert cfg["options"]["num_warps"] == 4 and cfg["value_sources"]["num_warps"] == "assumed"
    path = tmp_path / "ln.py"
    path.write_text(NUM_WARPS_FLAG)
    (c,) = compile_file(path, target="sm_90").kernel("ln_kernel").configs
    assert c.error is None and c.num_warps == 4


def test_a_pointer_stepped_by_a_bare_stride_leaves_the_stride_an_integer(report, configs):
    args = configs["rows_per_program_kernel"][0]["args"]
    assert args["stride_x_row"]["kind"] == args["stride_y_row"]["kind"] == "int", args
    _only(report, "rows_per_program_kernel")


def test_a_kernels_only_tile_on_both_sides_of_a_square_is_a_2d_tile_size(report, configs):
    cfg = configs["square_balance_kernel"][0]
    assert cfg["args"]["HC"]["value"] == 64, cfg["args"]["HC"]  # not a row's 1024: a million-element square
    assert any("HC=64 (both sides of its 2-D tiles" in a for a in cfg["assumed"]), cfg["assumed"]
    _only(report, "square_balance_kernel")
