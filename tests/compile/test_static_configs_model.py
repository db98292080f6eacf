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
    assert cfg["args"]["n"] == {"kind": "int", "value": 3}
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


ROW_NORM = '''import triton
import triton.language as tl


@triton.jit
def row_norm_kernel(Y_ptr, X_ptr, W_ptr, Y_row_stride, X_row_stride, x_col_stride, n_cols, offset, gate,
                    smoothing: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(X_ptr + row * X_row_stride + cols * x_col_stride, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W_ptr + cols, mask=mask, other=0.0) + offset.to(tl.float32)
    eps = smoothing / n_cols
    y = x * w * gate.to(tl.float32) * (1 - smoothing) + eps
    tl.store(Y_ptr + row * Y_row_stride + cols, y, mask=mask)


def row_norm(y, x, w, offset, gate, smoothing, block):
    row_norm_kernel[(x.shape[0],)](y, x, w, y.stride(0), x.stride(0), x.stride(-1), x.shape[1], offset, gate,
                                   smoothing=smoothing, BLOCK_SIZE=block)
'''


def test_integers_are_specialised_as_the_jit_would_for_a_typical_call_and_floats_by_their_use():
    configs, _ = static_configs_of_text(ROW_NORM)
    (cfg,) = configs["row_norm_kernel"]
    args = cfg["args"]
    # a row stride divisible by 16, a last-dimension stride of 1: as a contiguous tensor's
    assert args["Y_row_stride"] == args["X_row_stride"] == {"kind": "int", "value": 4096}
    assert args["x_col_stride"] == {"kind": "int", "value": 1}
    assert args["n_cols"] == {"kind": "int", "value": 3}  # a size: no specialisation, the least favourable
    # scalars the kernel turns into floats, and a constexpr it divides and takes from 1, are floats
    assert args["offset"] == args["gate"] == {"kind": "float", "value": 1.0}
    assert args["smoothing"] == {"kind": "constexpr", "value": 0.1}
    notes = "\n".join(cfg["assumed"])
    assert "strides assumed divisible by 16, as the JIT specialises a contiguous tensor's row stride: " \
           "Y_row_stride, X_row_stride" in notes
    assert "strides of the last dimension assumed 1, as the JIT specialises them: x_col_stride" in notes
    assert "assumed smoothing=0.1 (a float, by how the kernel uses it" in notes


BRANCHED = '''import triton
import triton.language as tl


@triton.jit
def wide_kernel(x_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    cols = tl.arange(0, BLOCK_SIZE)
    tl.store(x_ptr + cols, tl.load(x_ptr + cols, mask=cols < n_cols), mask=cols < n_cols)


@triton.jit
def rows_kernel(x_ptr, n_rows, n_cols, BLOCK_SIZE: tl.constexpr, BLOCK_ROW: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_ROW + tl.arange(0, BLOCK_ROW)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    offs = rows[:, None] * n_cols + cols[None, :]
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def capped_kernel(x_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    cols = tl.arange(0, BLOCK_SIZE)
    tl.store(x_ptr + cols, tl.load(x_ptr + cols, mask=cols < n_cols), mask=cols < n_cols)


def norm(x):
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    kernel_args = {}
    if BLOCK_SIZE > 256 or n_rows < 4096 * 8:
        wide_kernel[(n_rows,)](x, n_cols, BLOCK_SIZE=BLOCK_SIZE, **kernel_args)
    else:
        BLOCK_ROW = 16
        kernel_args["BLOCK_ROW"] = BLOCK_ROW
        rows_kernel[(triton.cdiv(n_rows, BLOCK_ROW),)](x, n_rows, n_cols, BLOCK_SIZE=BLOCK_SIZE, **kernel_args)


def capped(x, n_cols):
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    assert BLOCK_SIZE <= 128, "rows longer than 128 take another path"
    capped_kernel[(1,)](x, n_cols, BLOCK_SIZE=BLOCK_SIZE)
'''


def test_an_assumed_size_takes_the_branch_and_the_asserts_on_the_way_to_its_launch():
    configs, _ = static_configs_of_text(BRANCHED)

    def values(kernel):
        (cfg,) = configs[kernel]
        return {k: v["value"] for k, v in cfg["args"].items() if v["kind"] == "constexpr"}, cfg["assumed"]

    wide, _ = values("wide_kernel")
    assert wide["BLOCK_SIZE"] == 4096  # the usual size agrees with its branch
    rows, notes = values("rows_kernel")
    # the else branch holds only for rows of at most 256 columns, and many rows
    assert rows == {"BLOCK_SIZE": 256, "BLOCK_ROW": 16}, rows
    assert any(n.startswith("assumed BLOCK_SIZE=256 (the launch at line 35 with n_cols=256") for n in notes), notes
    assert not any("BLOCK_ROW" in n for n in notes)  # read from the **kernel_args it is put in: not assumed
    capped_values, _ = values("capped_kernel")
    assert capped_values["BLOCK_SIZE"] <= 128, capped_values


PACKER = '''import triton
import triton.language as tl


@triton.jit
def or_fn(a, b):
    return a | b


@triton.jit
def pack_kernel(w_ptr, out_ptr, n_cols, PER_WORD: tl.constexpr, BITS: tl.constexpr, out_dtype: tl.constexpr):
    cols = tl.arange(0, PER_WORD)
    shifts = (cols * BITS).to(out_dtype)
    values = tl.load(w_ptr + tl.program_id(0) * PER_WORD + cols).to(out_dtype)
    tl.store(out_ptr + tl.program_id(0), tl.reduce(values << shifts, axis=0, combine_fn=or_fn))


def pack(w, out, per_word, bits, dtype):
    pack_kernel[(w.numel() // per_word,)](w, out, w.shape[1], PER_WORD=per_word, BITS=bits, out_dtype=dtype)
'''


def test_a_dtype_that_values_are_cast_to_and_then_shifted_is_an_integer_type():
    configs, _ = static_configs_of_text(PACKER)
    (cfg,) = configs["pack_kernel"]
    assert cfg["args"]["out_dtype"] == {"kind": "dtype", "value": "int32"}  # fp32 would not compile `<<`
    assert any(n.startswith("assumed out_dtype=tl.int32 (an integer type: values cast to it are bit-shifted")
               for n in cfg["assumed"]), cfg["assumed"]
