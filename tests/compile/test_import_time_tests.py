"""A self-contained benchmark file (TritonBench's layout) runs its test at import and keeps the
result: `result_gold = test_copy()`. Importing it for the compile or a capture must not run that
test: it launches the kernel on "cuda" with full-size tensors (46 s mapped to the CPU for a
TritonBench KV copy, an error on a machine without a GPU). Compiled by the real Triton compiler."""

from tritonlens.profiling.compile_job import compile_file

BENCH_FILE = '''import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


def copy(src, dst):
    n = src.numel()
    copy_kernel[(triton.cdiv(n, 1024),)](src, dst, n, BLOCK=1024)


def test_copy():
    src = torch.randn(1 << 20, device="cuda")
    dst = torch.empty_like(src)
    copy(src, dst)
    return {"test_case": torch.equal(src, dst)}


result_gold = test_copy()
'''


def test_a_test_whose_result_the_file_keeps_is_not_run_at_import(tmp_path):
    path = tmp_path / "copy_bench.py"
    path.write_text(BENCH_FILE)
    report = compile_file(path, target="sm_90")
    assert report.module_failures == [], report.module_failures
    (c,) = report.kernel("copy_kernel").configs
    assert c.registers is not None, c.error
