"""The static configurations read off a model the caller already holds (the server's analysis) are
those a cold analysis of the same text gives, also when the model's kernels come from the
analyzer's cache, built from an earlier text whose bytes sit elsewhere."""

import pytest
from tritonlens.analysis.engine import Analyzer
from tritonlens.profiling.static_configs import (
    StaticKernel,
    static_configs,
    static_configs_of_text,
)

TEXT = '''"""Scaling."""
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, weight, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * weight, mask=offs < n)


def scale(x, out, n, factor: float):
    scale_kernel[(triton.cdiv(n, 128),)](x, out, n, factor, BLOCK=128)
'''


def test_a_reused_model_gives_the_cold_answer():
    analyzer = Analyzer()
    analyzer.analyze(TEXT, doc_id="scale.py")
    # The same lines, other bytes: the kernel's cached model is reused as it was built.
    edited = TEXT.replace('"""Scaling."""', '"""Scaling a vector by a float the caller passes."""')
    module = analyzer.analyze(edited, doc_id="scale.py").module
    configs, info = static_configs(module)
    assert (configs, info) == static_configs_of_text(edited)
    (cfg,) = configs["scale_kernel"]
    assert cfg["args"]["weight"] == {"kind": "float", "value": 1.0}  # the wrapper's `factor: float`
    assert cfg["args"]["n"] == {"kind": "int", "value": 4096}  # a size: a multiple of 16, as a typical call
    assert info["scale_kernel"] == StaticKernel(line=7, note=None)


PARTLY_KNOWN = '''import triton
import triton.language as tl


@triton.jit
def _square(x):
    return x * x


@triton.heuristics({"UNROLL": lambda args: 2 * 2})
# tritonlens: BLOCK=64
@triton.jit
def tile_kernel(x_ptr, n, BLOCK: tl.constexpr, GROUP: tl.constexpr, DTYPE: tl.constexpr, UNROLL: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, _square(x).to(DTYPE), mask=offs < n)


def settings(n):
    return triton.next_power_of_2(n), 4 if n < 2048 else 8


def run(x, group):
    n = x.numel()  # a representative size, which BLOCK does not rest on
    block, warps = settings(1000)
    # tritonlens: GROUP=8
    tile_kernel[(1,)](x, n, BLOCK=block, GROUP=group, DTYPE=tl.bfloat16, num_warps=warps)
'''


def test_known_values_stay_static_and_only_the_unknown_are_pinned():
    configs, info = static_configs_of_text(PARTLY_KNOWN)
    assert set(info) == {"tile_kernel"}  # the @jit helper is never configured
    (cfg,) = configs["tile_kernel"]
    # settings(1000) folds from the text without any representative size: static, as the dtype
    # literal and the heuristic of constants are; GROUP comes from the pin above the launch.
    assert cfg["args"]["BLOCK"] == {"kind": "constexpr", "value": 1024}
    assert cfg["args"]["DTYPE"] == {"kind": "dtype", "value": "bfloat16"}
    assert cfg["args"]["UNROLL"] == {"kind": "constexpr", "value": 4}
    assert cfg["args"]["GROUP"] == {"kind": "constexpr", "value": 8}
    assert cfg["options"] == {"num_warps": 4, "num_stages": 3}
    assert cfg["value_sources"] == {"BLOCK": "static", "GROUP": "pinned", "DTYPE": "static", "UNROLL": "static",
                                    "num_warps": "static", "num_stages": "static"}
    assert cfg["source"] == "pinned" and cfg["label"] == "pinned: the launch at line 27"
    # The kernel's own pin loses to what the launch writes, and says so.
    unused = "pin `BLOCK=64` at line 11 not used: the launch at line 27 gives BLOCK=1024"
    assert info["tile_kernel"].pin_messages == (unused,)


def test_pin_values_and_an_unreadable_pyproject(tmp_path):
    from tritonlens.profiling.config_pins import DType, PinError, parse_value

    assert parse_value("tl.float16") == parse_value("torch.float16") == parse_value("fp16") == DType("float16")
    assert [parse_value(t) for t in ("4096", "1e-6", "True", "'gelu'")] == [4096, 1e-6, True, "gelu"]
    for bad in ("gelu", "[1, 2]", "tl.float17"):
        with pytest.raises(PinError):
            parse_value(bad)
    (tmp_path / "pyproject.toml").write_text("[tool.tritonlens.pins.scale_kernel\nBLOCK = 64\n")
    path = tmp_path / "scale.py"
    path.write_text(TEXT)
    configs, info = static_configs_of_text(TEXT, path=path)
    # The broken table is reported and ignored; the launch's literal BLOCK=128 compiles as before.
    assert configs["scale_kernel"][0]["args"]["BLOCK"] == {"kind": "constexpr", "value": 128}
    (msg,) = info["scale_kernel"].pin_messages
    assert msg.startswith("pyproject.toml pins ignored: cannot read it: ") and len(msg) <= 160


SHAPE_KEPT = '''import triton
import triton.language as tl


def settings(n):
    block = triton.next_power_of_2(n)
    warps = 8 if block >= 2048 else 4
    return block, warps


@triton.jit
def row_kernel(x_ptr, stride, n_cols, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + tl.program_id(0) * stride + offs, 1.0, mask=offs < n_cols)


def rows(x):
    ori_shape = x.shape
    n_cols = ori_shape[-1]
    x = x.view(-1, n_cols)
    BLOCK, num_warps = settings(n_cols)
    with torch.cuda.device(x.device):
        row_kernel[(x.shape[0],)](x, x.stride(0), n_cols, BLOCK=BLOCK, num_warps=num_warps)
'''


def test_a_shape_kept_in_a_name_and_a_launch_inside_with_fold_on_representative_sizes():
    configs, _ = static_configs_of_text(SHAPE_KEPT)
    (cfg,) = configs["row_kernel"]
    assert cfg["args"]["BLOCK"]["value"] == 4096 and cfg["options"]["num_warps"] == 8
    assert cfg["value_sources"]["BLOCK"] == "assumed" and cfg["value_sources"]["num_warps"] == "assumed"
    assert any(a.startswith("assumed BLOCK=4096 (") and "pin it: `# tritonlens: BLOCK=4096`" in a
               for a in cfg["assumed"])


FLOATS = '''import triton
import triton.language as tl


@triton.jit
def quantize_kernel(x_ptr, y_ptr, n, Scale_row_stride, fp8_dtype_min: tl.constexpr, fp8_dtype_max: tl.constexpr,
                    out_dtype: tl.constexpr, EPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * Scale_row_stride + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    scale = tl.maximum(tl.max(tl.abs(x)), EPS) / fp8_dtype_max
    y = tl.clamp(x / scale, fp8_dtype_min, fp8_dtype_max).to(out_dtype)
    tl.store(y_ptr + offs, y, mask=offs < n)
'''


def test_floats_by_their_name_are_not_sizes_and_a_dtype_bound_is_not_a_dtype():
    configs, _ = static_configs_of_text(FLOATS)
    (cfg,) = configs["quantize_kernel"]
    values = {n: a["value"] for n, a in cfg["args"].items() if a["kind"] in ("constexpr", "dtype")}
    assert values["EPS"] == 1e-6 and values["fp8_dtype_min"] == 1.0 and values["fp8_dtype_max"] == 1.0
    assert cfg["args"]["out_dtype"] == {"kind": "dtype", "value": "float32"}
    assert cfg["args"]["Scale_row_stride"]["kind"] == "int"  # a stride, whatever its name starts with


THROUGH_HELPER = '''import triton
import triton.language as tl


@triton.jit
def _scale_block(Y, X, stride, row, cols, factor):
    tl.store(Y + row * stride + cols, tl.load(X + row * stride + cols) * factor)


@triton.jit
def scale_rows(Out, In, In_stride, factor, BLOCK: tl.constexpr):
    _scale_block(Out, In, In_stride, tl.program_id(0), tl.arange(0, BLOCK), factor)


def run(out, x):
    scale_rows[(x.shape[0],)](out, x, x.stride(0), 0.5, BLOCK=128)
'''


def test_arguments_a_kernel_hands_to_a_helper_that_loads_through_them_are_pointers():
    configs, _ = static_configs_of_text(THROUGH_HELPER)
    (cfg,) = configs["scale_rows"]
    assert cfg["args"]["Out"]["kind"] == cfg["args"]["In"]["kind"] == "tensor"
    assert cfg["args"]["In_stride"]["kind"] == "int"


TILES = '''import triton
import triton.language as tl


@triton.jit
def gather_3d(x_ptr, y_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, A)[:, None, None] * B * C + tl.arange(0, B)[None, :, None] * C + tl.arange(0, C)[None, None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def flat_copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def copy(x, y):
    flat_copy[(1,)](x, y, BLOCK=x.shape[1] * x.shape[2])
'''


def test_many_tiles_stay_small_and_a_tile_multiplied_from_sizes_falls_back():
    configs, _ = static_configs_of_text(TILES)
    (g,) = configs["gather_3d"]
    assert [g["args"][n]["value"] for n in "ABC"] == [16, 16, 16]  # 64**3 would pass 2**20 elements
    (f,) = configs["flat_copy"]
    assert f["args"]["BLOCK"]["value"] == 1024  # 4096 * 4096 from the sizes: the 1-D tile instead


def test_warps_and_stages_are_not_sizes():
    from tritonlens.profiling.host_expressions import representative_size

    assert [representative_size(n) for n in ("WARPS", "num_warps", "NUM_STAGES", "n_cols", "head_dim")] == \
        [4, 4, 3, 4096, 128]


def test_head_counts_by_their_usual_names():
    from tritonlens.profiling.host_expressions import representative_size

    assert {representative_size(n) for n in ("n_q_head", "n_kv_head", "n_qh", "num_heads", "nheads")} == {32}


PACKED = '''import triton
import triton.language as tl


@triton.jit
def unpack_int4(w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    w = tl.load(w_ptr + offs, mask=mask, other=0)
    x = tl.load(out_ptr + offs, mask=mask & (w > 0))
    tl.store(out_ptr + offs, ((w >> 4) & 0xF).to(tl.float16) + x, mask=mask)
'''


def test_a_pointer_whose_loads_are_shifted_holds_packed_integers():
    configs, _ = static_configs_of_text(PACKED)
    (cfg,) = configs["unpack_int4"]
    assert cfg["args"]["w_ptr"]["dtype"] == "int32"
    assert cfg["args"]["out_ptr"]["dtype"] == "float16"  # masked with `&` between masks: still the data


HELPER_UNPACKS = '''import triton
import triton.language as tl


@triton.jit
def _unpack(P, rows, cols, BITS: tl.constexpr):
    words = tl.load(P + rows[:, None] * 8 + cols[None, :])
    return (words[:, :, None] >> (tl.arange(0, 2) * BITS)[None, None, :]) & 0xF


@triton.jit
def dequant(P, Out, BITS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    w = _unpack(P, r, r, BITS)
    tl.store(Out + tl.arange(0, BLOCK), tl.sum(tl.sum(w, 2), 1).to(tl.float16))


def run(p, out, bits):
    dequant[(1,)](p, out, BITS=bits, BLOCK=16)
'''


def test_packed_words_unpacked_in_a_helper_and_a_bit_width_by_its_name():
    configs, _ = static_configs_of_text(HELPER_UNPACKS)
    (cfg,) = configs["dequant"]
    assert cfg["args"]["P"]["dtype"] == "int32" and cfg["args"]["Out"]["dtype"] == "float16"
    assert cfg["args"]["BITS"]["value"] == 4

