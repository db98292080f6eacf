"""A typical kernel file with no harness: a kernel, a wrapper, test_* functions at the bottom."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_inplace_kernel(x_ptr, n, factor,
                         BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x * factor, mask=mask)


@triton.jit
def copy_rows_kernel(src_ptr, dst_ptr, idx_ptr, stride_src, stride_dst, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    src_row = tl.load(idx_ptr + row)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(src_ptr + src_row * stride_src + cols, mask=mask)
    tl.store(dst_ptr + row * stride_dst + cols, v, mask=mask)


def scale_(x, factor):
    n = x.numel()
    scale_inplace_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, n, factor, BLOCK=128, num_warps=2)
    return x


def gather_rows(src, idx):
    out = torch.empty((idx.numel(), src.shape[1]), dtype=src.dtype)
    copy_rows_kernel[(idx.numel(),)](src, out, idx, src.stride(0), out.stride(0), src.shape[1],
                                     BLOCK=triton.next_power_of_2(src.shape[1]))
    return out


def test_scale():
    x = torch.randn(1000)
    ref = x * 2.5
    torch.testing.assert_close(scale_(x, 2.5), ref)


def test_gather():
    src = torch.randn(50, 40)[:, :33]  # a strided view: row stride 40
    idx = torch.tensor([3, 0, 49, 7], dtype=torch.int32)
    torch.testing.assert_close(gather_rows(src, idx), src[idx.long()])


def test_needs_fixture(tmp_path):  # skipped: pytest fixtures cannot be supplied
    raise AssertionError("must not run")
