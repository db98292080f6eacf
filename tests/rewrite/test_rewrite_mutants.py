"""Mutation suite: wrong variants of the example kernels (fixture copies with small shapes) must
all be refused, those right only on harness-like values by the value range that exposes them; the
unchanged kernel with a better config (or an equivalent formula) must be accepted, value ranges and
ghost replay included. One shared worker per fixture file, two in parallel."""

from __future__ import annotations

import pytest
from rewrite_support import FIXTURES
from tritonlens.rewrite.candidate import Candidate
from tritonlens.rewrite.verify import Verifier

# (fixture, what is wrong, old text, new text)
MUTANTS = [
    ("vadd.py", "off-by-one mask", "mask = offsets < n_elements", "mask = offsets < n_elements - 1"),
    ("vadd.py", "wrong operation", "x + y, mask=mask)", "x - y, mask=mask)"),
    ("vadd.py", "tail block dropped", "grid = (triton.cdiv(n, BLOCK_SIZE),)", "grid = (n // BLOCK_SIZE,)"),
    ("vadd.py", "fp16 downcast", "x + y, mask=mask)", "(x.to(tl.float16) + y.to(tl.float16)).to(tl.float32), mask=mask)"),
    ("vadd.py", "partial write (half)", "tl.store(out_ptr + offsets, x + y, mask=mask)",
     "tl.store(out_ptr + offsets, x + y, mask=offsets < n_elements // 2)"),
    ("vadd.py", "overlapping blocks", "block_start = pid * BLOCK_SIZE", "block_start = pid * (BLOCK_SIZE // 2)"),
    ("vadd.py", "every program writes block 0 (race)", "offsets = block_start + tl.arange(0, BLOCK_SIZE)",
     "offsets = tl.arange(0, BLOCK_SIZE)"),
    ("vadd.py", "writes the input in place", "tl.store(out_ptr + offsets, x + y, mask=mask)",
     "tl.store(x_ptr + offsets, x + y, mask=mask)"),
    ("vadd.py", "torch does the work", "    return out\n\n\ndef tritonlens_cases", "    return x + y\n\n\ndef tritonlens_cases"),
    ("vadd.py", "no mask at all", "tl.store(out_ptr + offsets, x + y, mask=mask)", "tl.store(out_ptr + offsets, x + y)"),
    ("softmax_rows.py", "wrong reduction (max for sum)", "den = tl.sum(num, axis=0)", "den = tl.max(num, axis=0)"),
    ("softmax_rows.py", "padding lanes count (other=0)", 'other=-float("inf")', "other=0.0"),
    ("softmax_rows.py", "half the row", "BLOCK_SIZE = triton.next_power_of_2(n_cols)",
     "BLOCK_SIZE = triton.next_power_of_2(n_cols) // 2"),
    ("softmax_rows.py", "row stride assumed = n_cols", "row_ptr = in_ptr + row * in_row_stride", "row_ptr = in_ptr + row * n_cols"),
    ("softmax_rows.py", "fp16 math", '.to(tl.float32)\n    x_max', '.to(tl.float16)\n    x_max'),
    ("softmax_rows.py", "last column not written", "tl.store(out_row_ptr + col_offsets, y.to(out_ptr.dtype.element_ty), mask=mask)",
     "tl.store(out_row_ptr + col_offsets, y.to(out_ptr.dtype.element_ty), mask=col_offsets < n_cols - 1)"),
    ("matmul_small.py", "K tail dropped", "k_left = K - k * BLOCK_K", "k_left = K - k * BLOCK_K - 1"),
    ("matmul_small.py", "wrong B stride", "offs_n[None, :] * stride_bn", "offs_n[None, :] * stride_bk"),
    ("matmul_small.py", "swapped tile ids", "pid_m = pid // num_pid_n\n    pid_n = pid % num_pid_n",
     "pid_n = pid // num_pid_n\n    pid_m = pid % num_pid_n"),
    ("matmul_small.py", "last row not stored", "c_mask = (offs_m[:, None] < M)", "c_mask = (offs_m[:, None] < M - 1)"),
    ("matmul_small.py", "pointers never advance", "        a_ptrs += BLOCK_K * stride_ak\n", ""),
    ("matmul_small.py", "scaled result", "c = acc.to(tl.float16)", "c = (acc * 1.05).to(tl.float16)"),
    ("layernorm_small.py", "variance without the mean", "x = tl.where(cols < N, x - mean, 0.0)", "x = tl.where(cols < N, x, 0.0)"),
    ("layernorm_small.py", "unbiased variance", "var = tl.sum(_var, axis=0) / N", "var = tl.sum(_var, axis=0) / (N - 1)"),
    ("layernorm_small.py", "mean over the block", "mean = tl.sum(_mean, axis=0) / N", "mean = tl.sum(_mean, axis=0) / BLOCK_SIZE"),
    ("layernorm_small.py", "bias dropped", "y = (x - mean) * rstd * w + b", "y = (x - mean) * rstd * w"),
    ("layernorm_small.py", "last chunk not stored", "tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)",
     "tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask & (cols < N - N % BLOCK_SIZE))"),
    ("transpose_small.py", "not transposed", "tl.store(out_ptr + offs_n[None, :] * stride_om + offs_m[:, None] * stride_on",
     "tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on"),
    ("transpose_small.py", "last column dropped", "mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)",
     "mask = (offs_m[:, None] < M) & (offs_n[None, :] < N - 1)"),
    ("sum_atomic.py", "load-add-store instead of an atomic (race)", "tl.atomic_add(out_ptr, partial)",
     "tl.store(out_ptr, tl.load(out_ptr) + partial)"),
    ("sum_atomic.py", "wrong reduction (max)", "partial = tl.sum(x, axis=0)", "partial = tl.max(x, axis=0)"),
    ("sum_atomic.py", "last element dropped", "mask = offsets < n_elements", "mask = offsets < n_elements - 1"),
    ("sum_atomic.py", "bf16 partials", "partial = tl.sum(x, axis=0)", "partial = tl.sum(x.to(tl.bfloat16), axis=0).to(tl.float32)"),
    # right on the harness's values, wrong on values it never produces: only a value range shows them
    ("softmax_rows.py", "no max subtraction", "num = tl.exp(x - x_max)", "num = tl.exp(x)"),
    ("log_clamped.py", "log without the clamp", "tl.log(tl.maximum(x, eps))", "tl.log(x)"),
    ("rmsnorm_fp16.py", "division without eps", "tl.sum(acc, axis=0) / N + eps)", "tl.sum(acc, axis=0) / N)"),
    ("rmsnorm_fp16.py", "squares summed in fp16",
     ("acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)\n    for off in range(0, N, BLOCK_SIZE):\n"
      "        cols = off + tl.arange(0, BLOCK_SIZE)\n        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)"),
     ("acc = tl.zeros([BLOCK_SIZE], dtype=tl.float16)\n    for off in range(0, N, BLOCK_SIZE):\n"
      "        cols = off + tl.arange(0, BLOCK_SIZE)\n        x = tl.load(X + cols, mask=cols < N, other=0.0)")),
]

# the range each of those fails on (the ordinary checks run first and pass them)
EXPOSED_BY = {
    ("softmax_rows.py", "no max subtraction"): 'range "near exp overflow (x≈88)"',
    ("log_clamped.py", "log without the clamp"): 'range "tiny values (|x|≈1e-30)"',
    ("rmsnorm_fp16.py", "division without eps"): 'range "zeros"',
    ("rmsnorm_fp16.py", "squares summed in fp16"): 'range "shifted by +1000"',
}

GOOD = [
    ("vadd.py", "bigger block", "BLOCK_SIZE = 64", "BLOCK_SIZE = 256"),
    ("layernorm_small.py", "bigger chunk", "BLOCK_SIZE = 128", "BLOCK_SIZE = 256"),
    ("softmax_rows.py", "exp2 of a log2(e)-scaled input", "num = tl.exp(x - x_max)",
     "num = tl.exp2((x - x_max) * 1.4426950408889634)"),
    ("rmsnorm_fp16.py", "bigger chunk (fp16)", "BLOCK_SIZE=64", "BLOCK_SIZE=128"),
]


def _verify(items):
    by_file: dict[str, list] = {}
    for fixture, what, old, new in items:
        by_file.setdefault(fixture, []).append((what, old, new))
    verdicts = {}
    for fixture, muts in by_file.items():
        path = FIXTURES / fixture
        text = path.read_text()
        cands = []
        for what, old, new in muts:
            assert text.count(old) == 1, f"{fixture}: {what}: pattern must occur once"
            cands.append(Candidate("mutant", what, text.replace(old, new)))
        with Verifier(str(path), text, parallel=2, timeout=300) as verifier:
            for v in verifier.verify(cands, isolate=False):
                verdicts[(fixture, v.candidate.title)] = v
    return verdicts


@pytest.fixture(scope="module")
def all_verdicts():
    """Every mutant and good variant, verified once: a fixture's variants share its workers."""
    return _verify(MUTANTS + GOOD)


def test_at_least_30_wrong_variants_are_all_refused(all_verdicts):
    assert len(MUTANTS) >= 30
    verdicts = {(f, what): all_verdicts[(f, what)] for f, what, _, _ in MUTANTS}
    accepted = [(k, v.reason) for k, v in verdicts.items() if v.accepted]
    assert not accepted, accepted
    for (fixture, what), v in verdicts.items():
        assert v.reason and not v.reason.startswith(("verification failed", "not verified")), (what, v.reason)
    # the refusals name the right kind of failure
    assert "race" in verdicts[("sum_atomic.py", "load-add-store instead of an atomic (race)")].reason
    assert "torch fallback" in verdicts[("vadd.py", "torch does the work")].reason
    assert "ragged" in verdicts[("vadd.py", "no mask at all")].reason
    assert "NaN" in verdicts[("vadd.py", "tail block dropped")].reason or "ragged" in verdicts[("vadd.py", "tail block dropped")].reason
    for key, value_range in EXPOSED_BY.items():
        assert verdicts[key].reason.startswith(f"wrong result on {value_range} (case "), (key, verdicts[key].reason)


@pytest.mark.parametrize("item", GOOD, ids=[g[1] for g in GOOD])
def test_good_variant_is_accepted(item, all_verdicts):
    v = all_verdicts[(item[0], item[1])]
    assert v.accepted, v.reason
    assert v.seeds == 3 and v.checks == v.seeds * v.shapes and v.shapes >= 3 and v.speedup is None
    fp16 = "fp16" in item[1]
    assert v.max_rel_error is not None and v.max_rel_error < (1e-2 if fp16 else 1e-5)
    ranges = [c for c in v.evidence["checks"] if c["range"]]
    assert len(ranges) >= 3 and all(c["ok"] for c in ranges) and not v.evidence["ranges_skipped"], v.evidence
    assert v.evidence["ghost_ran"] and v.evidence["ghost_failure"] is None
