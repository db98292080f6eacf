"""Row-wise RMS normalisation, written the way model libraries write their Triton ops: the wrapper
picks the block size and warps with a helper, branches on the block size between a one-row-per-
program kernel and a row-block kernel, and passes the row-block kernel's tile through **kwargs;
eps is a float argument. The row-block kernel's configuration is pinned with a comment, since no
launch of it is recorded. No harness: its kernels compile from the text."""
import torch
import triton
import triton.language as tl

MAX_FUSED_SIZE = 65536


@triton.jit
def _row_norm_forward_kernel(Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, RSTD_ptr, n_cols, eps,
                             BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(X_ptr + row * X_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W_ptr + cols, mask=mask, other=0.0)
    mean_square = tl.sum(x * x, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(mean_square + eps)
    tl.store(RSTD_ptr + row, rstd)
    y = x * rstd * w
    tl.store(Y_ptr + row * Y_row_stride + cols, y.to(Y_ptr.dtype.element_ty))


# tritonlens: BLOCK_SIZE=256 num_warps=4
@triton.jit
def _block_row_norm_forward_kernel(Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, RSTD_ptr, n_rows, n_cols,
                                   eps, BLOCK_SIZE: tl.constexpr, BLOCK_ROW: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_ROW + tl.arange(0, BLOCK_ROW)
    cols = tl.arange(0, BLOCK_SIZE)
    row_mask = rows < n_rows
    col_mask = cols < n_cols
    mask = row_mask[:, None] & col_mask[None, :]
    x = tl.load(X_ptr + rows[:, None] * X_row_stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W_ptr + cols, mask=col_mask, other=0.0)
    mean_square = tl.sum(x * x, axis=1) / n_cols
    rstd = 1.0 / tl.sqrt(mean_square + eps)
    tl.store(RSTD_ptr + rows, rstd, mask=row_mask)
    y = x * rstd[:, None] * w[None, :]
    tl.store(Y_ptr + rows[:, None] * Y_row_stride + cols[None, :], y.to(Y_ptr.dtype.element_ty), mask=mask)


def calculate_settings(n):
    BLOCK_SIZE = triton.next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(f"a row of {n} columns exceeds the fused block of {MAX_FUSED_SIZE}")
    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


def row_norm_forward(X, W, eps=1e-6):
    shape = X.shape
    X = X.view(-1, shape[-1])
    n_rows, n_cols = X.shape
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    Y = torch.empty_like(X)
    RSTD = torch.empty(n_rows, dtype=torch.float32, device=X.device)
    if BLOCK_SIZE > 256:
        _row_norm_forward_kernel[(n_rows,)](
            Y, Y.stride(0), X, X.stride(0), W, RSTD, n_cols, eps, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
        )
    else:
        kernel_args = {"BLOCK_ROW": 16}
        grid = (triton.cdiv(n_rows, kernel_args["BLOCK_ROW"]),)
        _block_row_norm_forward_kernel[grid](
            Y, Y.stride(0), X, X.stride(0), W, RSTD, n_rows, n_cols, eps, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
            **kernel_args,
        )
    return Y.view(*shape), RSTD
