"""A refusal no value or pin cures says so in the author's terms, not in the compiler's. Compiled by
the real Triton compiler."""

from tritonlens.profiling.compile_job import compile_file

DTYPE_CALL = '''import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    acc = tl.float32(0.0)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.sum(tl.load(x_ptr + offs, mask=offs < n_cols, other=0.0))
    tl.store(out_ptr, acc)
'''


def test_a_called_dtype_is_named_with_its_fix_and_not_blamed_on_assumed_values(tmp_path):
    path = tmp_path / "row_sum.py"
    path.write_text(DTYPE_CALL)
    report = compile_file(path, target="sm_90")
    reason = report.kernel("row_sum_kernel").reason
    assert reason.startswith("Triton refused it at line 7: a dtype is not callable in Triton (tl.float32(x))"), reason


HIP_LIBDEVICE = '''import triton
import triton.language as tl


@triton.jit
def freqs_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    theta = tl.full((BLOCK,), 10000.0, tl.float32)
    tl.store(out_ptr + offs, tl.extra.hip.libdevice.pow(theta, offs.to(tl.float32)), mask=offs < n)
'''


def test_amd_s_device_library_is_named_not_ptxas_s_repro_command(tmp_path):
    path = tmp_path / "freqs.py"
    path.write_text(HIP_LIBDEVICE)
    report = compile_file(path, target="sm_90")
    reason = report.kernel("freqs_kernel").reason
    assert reason.startswith("Triton refused it at line 6: it calls AMD's device library (__ocml_pow_f32"), reason


WARP_SPECIALIZED = '''import triton
import triton.language as tl


@triton.jit
def amax_kernel(a_ptr, b_ptr, out_ptr, M, N, BLOCK: tl.constexpr, NUM_SMS: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK, BLOCK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[16, 16], strides=[16, 1], block_shape=[16, 16])
    hadamard = b_desc.load([0, 0])
    amax = tl.zeros((BLOCK * BLOCK // 16, 16), dtype=tl.float32)
    num_tiles = tl.cdiv(M, BLOCK) * tl.cdiv(N, BLOCK)
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_SMS, flatten=False, warp_specialize=True):
        a = a_desc.load([(tile // tl.cdiv(N, BLOCK)) * BLOCK, (tile % tl.cdiv(N, BLOCK)) * BLOCK])
        r = tl.dot(tl.reshape(tl.trans(a), [BLOCK * BLOCK // 16, 16]), hadamard).to(tl.bfloat16)
        amax = tl.maximum(amax, tl.abs(r))
    tl.atomic_max(out_ptr, tl.max(tl.max(amax, 1), 0))


def amax(a, b, out):
    amax_kernel[(132,)](a, b, out, a.shape[0], a.shape[1], BLOCK=64, NUM_SMS=132)
'''


def test_a_failed_mlir_pass_is_named_not_only_passmanager_run_failed(tmp_path, monkeypatch):
    # Triton raises "PassManager::run failed"; which pass failed is an MLIR diagnostic on stderr.
    # Fresh caches: an entry from before would answer with the message it had then.
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("TRITONLENS_COMPILE_CACHE", str(tmp_path / "compile"))
    path = tmp_path / "amax.py"
    path.write_text(WARP_SPECIALIZED)
    (c,) = compile_file(path, target="sm_90").kernel("amax_kernel").configs
    if c.error is None:  # a Triton whose warp specialization handles this loop
        return
    assert c.error.message == "PassManager::run failed: Triton's NVGPUWarpSpecialization pass failed on this kernel"
