"""Values the static model could not read, assumed as the code allows: integers specialised as the
JIT would for a typical call, floats and integer dtypes by how the kernel uses them, and sizes
that take the way the wrapper goes to the launch (its branches, its asserts, the **kwargs it
builds). Read off the text; nothing is compiled."""

from tritonlens.profiling.static_configs import static_configs_of_text

ROW_NORM = '''import triton
import triton.language as tl


@triton.jit
def row_norm_kernel(Y_ptr, X_ptr, W_ptr, Y_row_stride, X_row_stride, x_col_stride, n_cols, offset, gate,
                    ignore_index, smoothing: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(X_ptr + row * X_row_stride + cols * x_col_stride, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W_ptr + cols, mask=mask, other=0.0) + offset.to(tl.float32)
    eps = smoothing / n_cols
    y = tl.where(cols == ignore_index, 0.0, x * w * gate.to(tl.float32) * (1 - smoothing) + eps)
    tl.store(Y_ptr + row * Y_row_stride + cols, y, mask=mask)


def row_norm(y, x, w, offset, gate, ignore_index, smoothing, block):
    row_norm_kernel[(x.shape[0],)](y, x, w, y.stride(0), x.stride(0), x.stride(-1), x.shape[1], offset, gate,
                                   ignore_index, smoothing=smoothing, BLOCK_SIZE=block)
'''


def test_integers_are_specialised_as_the_jit_would_for_a_typical_call_and_floats_by_their_use():
    configs, _ = static_configs_of_text(ROW_NORM)
    (cfg,) = configs["row_norm_kernel"]
    args = cfg["args"]
    # a row stride divisible by 16, a last-dimension stride of 1: as a contiguous tensor's
    assert args["Y_row_stride"] == args["X_row_stride"] == {"kind": "int", "value": 4096}
    assert args["x_col_stride"] == {"kind": "int", "value": 1}
    assert args["n_cols"] == {"kind": "int", "value": 4096}  # a model's width: a multiple of 16, as the JIT sees it
    assert args["ignore_index"] == {"kind": "int", "value": 3}  # a sentinel: no specialisation, the least favourable
    # scalars the kernel turns into floats, and a constexpr it divides and takes from 1, are floats
    assert args["offset"] == args["gate"] == {"kind": "float", "value": 1.0}
    assert args["smoothing"] == {"kind": "constexpr", "value": 0.1}
    notes = "\n".join(cfg["assumed"])
    assert "strides assumed divisible by 16, as the JIT specialises a contiguous tensor's row stride: " \
           "Y_row_stride, X_row_stride" in notes
    assert "strides of the last dimension assumed 1, as the JIT specialises them: x_col_stride" in notes
    assert "sizes assumed divisible by 16, as the JIT specialises a model's widths: n_cols" in notes
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


CHUNK_COPY = '''import triton
import triton.language as tl


@triton.jit
def chunk_copy(k, h, s_k_h, s_k_t, T: tl.constexpr, K: tl.constexpr, BT: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    p_k = tl.make_block_ptr(k + i_bh * s_k_h, (T, K), (s_k_t, 1), (i_t * BT, 0), (BT, K), (1, 0))
    p_h = tl.make_block_ptr(h + i_bh * s_k_h, (T, K), (K, 1), (i_t * BT, 0), (BT, K), (1, 0))
    tl.store(p_h, tl.load(p_k, boundary_check=(0,)), boundary_check=(0,))
'''


def test_a_block_pointer_s_block_shape_written_by_position_is_a_tile():
    # (BT, K) is the block; (T, K) the tensor's shape: a sequence length. Read as sizes, BT and K had
    # made a 4096 x 128 tile whose compile ran for minutes in LLVM.
    configs, _ = static_configs_of_text(CHUNK_COPY)
    (cfg,) = configs["chunk_copy"]
    values = {name: arg["value"] for name, arg in cfg["args"].items() if "value" in arg}
    assert values["BT"] == values["K"] == 64 and values["T"] == 4096
