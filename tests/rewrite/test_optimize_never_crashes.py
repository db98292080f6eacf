"""Optimize on kernels shaped like real projects' launches: a variable num_warps, a launch that
passes num_stages, @triton.heuristics under an existing autotune, a GROUP_SIZE_M that only the
autotune configs give, a bool constexpr. Real worker processes in Triton's interpreter: each crash
becomes a verdict, and the configuration that used to crash is proposed right and accepted."""

from __future__ import annotations

import pytest
from tritonlens.rewrite.api import OptimizeOptions, optimize_file

HEADER = '''import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl
'''

SCALE_KERNEL = '''

@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)
'''

CASES = '''

def tritonlens_cases():
    yield scale, (torch.randn(200, device=DEVICE),)
    yield scale, (torch.randn(37, device=DEVICE),)
'''


def _optimize(tmp_path, name: str, text: str, proposers=("config",)):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return optimize_file(str(path), OptimizeOptions(proposers=proposers, job_timeout_s=300, budget_s=0))


def _by_title(report):
    return {c.title: c for c in report.candidates}


def test_a_variable_num_warps_is_no_crash_and_the_block_is_still_tuned(tmp_path):
    """Reproduces `ValueError: num_warps cannot be set at the launch` (propose_config.with_literals),
    which ended optimize with no output when the launch passed num_warps=<variable>."""
    text = HEADER + SCALE_KERNEL + '''

def scale(x):
    out = torch.empty_like(x)
    n = x.numel()
    warps = 4 if n >= 4096 else 2
    scale_kernel[(triton.cdiv(n, 32),)](x, out, n, BLOCK=32, num_warps=warps)
    return out
''' + CASES
    report = _optimize(tmp_path, "scale_warps.py", text)
    literal = next(c for c in report.candidates if c.title.startswith("config "))
    assert literal.accepted, literal.reason
    # computed in the wrapper: the candidate pins its own at the call, the wrapper's rule stays
    assert "num_warps=" in literal.title and "num_warps=warps" not in literal.source
    assert "    warps = 4 if n >= 4096 else 2\n" in literal.source and "BLOCK=32" not in literal.source


def test_a_launch_that_passes_num_stages_gets_an_autotune_that_does_not_set_it_twice(tmp_path):
    """Reproduces `got multiple values for keyword argument 'num_stages'`: every triton.Config sets
    num_stages, so an autotune rewrite must take it off the launch (its value moves into the configs)."""
    text = HEADER + SCALE_KERNEL + '''

def scale(x):
    out = torch.empty_like(x)
    n = x.numel()
    BLOCK = 32
    scale_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK, num_warps=2, num_stages=2)
    return out
''' + CASES
    report = _optimize(tmp_path, "scale_stages.py", text)
    auto = _by_title(report)["autotune 4 configs"]
    assert auto.accepted, auto.reason
    assert "num_stages=2)" in auto.source and "(x, out, n)" in auto.source


HEURISTIC_AUTOTUNED = HEADER + '''

@triton.autotune(configs=[triton.Config({"BLOCK": 16}, num_warps=1), triton.Config({"BLOCK": 32}, num_warps=2)],
                 key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def rows_kernel(x_ptr, out_ptr, n, D: tl.constexpr, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offs = rows[:, None] * D + tl.arange(0, D)[None, :]
    if EVEN:
        x = tl.load(x_ptr + offs)
    else:
        x = tl.load(x_ptr + offs, mask=rows[:, None] < n, other=0.0)
    tl.store(out_ptr + offs, x * 2.0 + 1.0, mask=rows[:, None] < n)


def rows(x):
    out = torch.empty_like(x)
    n = x.numel() // 4  # rows of D=4
    rows_kernel[lambda META: (triton.cdiv(n, META["BLOCK"]),)](x, out, n, D=4)
    return out


def tritonlens_cases():
    yield rows, (torch.randn(64, 4, device=DEVICE),)
    yield rows, (torch.randn(21, 4, device=DEVICE),)
'''


def test_an_autotuned_heuristics_kernel_keeps_what_the_launch_and_the_heuristic_set(tmp_path):
    """Reproduces `Heuristics.run() got multiple values for keyword argument 'D'`: the new config list
    set D, which the launch passes, and the heuristic's EVEN; only BLOCK belongs to the autotuner."""
    report = _optimize(tmp_path, "rows_heur.py", HEURISTIC_AUTOTUNED)
    (auto,) = [c for c in report.candidates if c.title.startswith("autotune")]
    assert auto.accepted, auto.reason
    configs = auto.more["meta"]["configs"]
    assert all(set(c) <= {"BLOCK", "num_warps"} for c in configs), configs


GROUPED_AUTOTUNED = HEADER + '''

@triton.autotune(configs=[triton.Config({"BLOCK_M": 8, "BLOCK_N": 8, "GROUP_SIZE_M": 2}, num_warps=1)],
                 key=["M", "N"])
@triton.jit
def twice_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_SIZE_M * num_pid_n
    first_m = (pid // group) * GROUP_SIZE_M
    size_m = min(num_pid_m - first_m, GROUP_SIZE_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def twice(x):
    out = torch.empty_like(x)
    M, N = x.shape
    twice_kernel[lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),)](x, out, M, N)
    return out


def tritonlens_cases():
    yield twice, (torch.randn(40, 24, device=DEVICE),)
    yield twice, (torch.randn(9, 70, device=DEVICE),)
'''


def test_a_replaced_autotune_list_keeps_the_group_size_only_its_configs_gave(tmp_path):
    """Reproduces `dynamic_func() missing 1 required positional argument: 'GROUP_SIZE_M'`: the new
    config list lacked the GROUP_SIZE_M that the old configs, and nothing else, supplied."""
    report = _optimize(tmp_path, "twice_grouped.py", GROUPED_AUTOTUNED)
    (auto,) = [c for c in report.candidates if c.title.startswith("autotune")]
    assert auto.accepted, auto.reason
    assert auto.source.count('"GROUP_SIZE_M": 2') == 4


# -- what the config search may set, and where it finds it (source only: no worker) ------------
def _proposals(tmp_path, text: str, name: str = "k.py"):
    from tritonlens.rewrite import propose_config
    from tritonlens.rewrite.context import ProposalContext

    return {c.title: c for c in propose_config.propose(ProposalContext(str(tmp_path / name), text,
                                                                       device={"mode": "interpreter"}))}


FLAGGED = HEADER + '''

@triton.jit
def flagged_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BACKWARD_PASS: tl.constexpr, HAS_BIAS: tl.constexpr,
                   OUT_DTYPE: tl.constexpr, SCALE: tl.constexpr = False):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if BACKWARD_PASS:
        x = -x
    tl.store(out_ptr + offs, x.to(OUT_DTYPE), mask=offs < n)


def flagged(x):
    out = torch.empty_like(x)
    flagged_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64, BACKWARD_PASS=False, HAS_BIAS=0,
                                                  OUT_DTYPE=tl.float32, SCALE=1)
    return out
'''


def test_only_integer_tile_sizes_are_tuned_never_flags_or_dtypes(tmp_path):
    """Reproduces the proposal of BACKWARD_PASS=1024: a bool constexpr taken for a block size."""
    cands = _proposals(tmp_path, FLAGGED)
    assert cands, "BLOCK is still tuned"
    for c in cands.values():
        assert "BACKWARD_PASS=False, HAS_BIAS=0," in c.source and "OUT_DTYPE=tl.float32, SCALE=1" in c.source
        assert all(name not in c.title for name in ("BACKWARD_PASS", "HAS_BIAS", "OUT_DTYPE", "SCALE"))


def _launch(wrapper: str, kernel: str = SCALE_KERNEL) -> str:
    return HEADER + kernel + "\n\n" + wrapper


def test_a_block_size_given_as_the_wrappers_default_is_reached(tmp_path):
    text = _launch('''def scale(x, BLOCK_SIZE=32):
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), BLOCK_SIZE),)](x, out, x.numel(), BLOCK=BLOCK_SIZE)
    return out
''')
    literal = next(c for t, c in _proposals(tmp_path, text).items() if t.startswith("config "))
    assert "def scale(x, BLOCK_SIZE=1024):" in literal.source, literal.source


def test_a_block_size_left_to_the_kernels_default_is_given_at_the_launch(tmp_path):
    kernel = SCALE_KERNEL.replace("BLOCK: tl.constexpr)", "BLOCK: tl.constexpr = 32)")
    text = _launch('''def scale(x):
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 32),)](x, out, x.numel())
    return out
''', kernel)
    cands = _proposals(tmp_path, text)
    literal = next(c for t, c in cands.items() if t.startswith("config "))
    assert "(x, out, x.numel(), BLOCK=1024, num_warps=4)" in literal.source, literal.source


def test_a_module_constant_is_reached(tmp_path):
    text = _launch('''BLOCK_CONSTANT = 32


def scale(x):
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), BLOCK_CONSTANT),)](x, out, x.numel(), BLOCK=BLOCK_CONSTANT)
    return out
''')
    literal = next(c for t, c in _proposals(tmp_path, text).items() if t.startswith("config "))
    assert "BLOCK_CONSTANT = 1024\n" in literal.source


CONFIG_OBJECT = _launch('''TILE = triton.Config({"BLOCK": 32}, num_warps=2)


def scale(x):
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, TILE.kwargs["BLOCK"]),)](x, out, n, **TILE.kwargs, num_warps=TILE.num_warps)
    return out
''') + CASES


def test_tiles_of_a_triton_config_object_are_tuned_in_the_object(tmp_path):
    """The launch unpacks a triton.Config: its entries are the configuration, and no autotune list
    is offered (it would set what the launch unpacks a second time)."""
    report = _optimize(tmp_path, "scale_cfg.py", CONFIG_OBJECT)
    (literal,) = report.candidates
    assert literal.title == "config BLOCK=1024, num_warps=4", literal.title
    assert 'TILE = triton.Config({"BLOCK": 1024}, num_warps=4)' in literal.source
    assert literal.accepted, literal.reason


ROW_SUM = '''

@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))
'''


@pytest.mark.parametrize("computed, edited", [
    ("min(triton.next_power_of_2(n_cols), 4096)", "min(triton.next_power_of_2(n_cols), {})"),
    ("triton.next_power_of_2(n_cols)", "min(triton.next_power_of_2(n_cols), {})"),
])
def test_a_block_size_computed_in_the_wrapper_is_capped_where_the_kernel_loops_over_it(tmp_path, computed, edited):
    """Only num_warps used to be tried for `BLOCK = min(triton.next_power_of_2(n), 4096)`."""
    text = _launch(f'''def row_sum(x):
    n_rows, n_cols = x.shape
    out = torch.empty(n_rows, device=x.device)
    BLOCK = {computed}
    row_sum_kernel[(n_rows,)](x, out, n_cols, BLOCK=BLOCK)
    return out
''', ROW_SUM)
    cands = _proposals(tmp_path, text)
    literal = next(c for t, c in cands.items() if t.startswith("config BLOCK<="))
    value = int(literal.title.split("BLOCK<=")[1].split(",")[0])
    assert f"BLOCK = {edited.format(value)}\n" in literal.source
    assert not any(t.startswith("autotune") for t in cands)  # a cap is no autotune key


@pytest.mark.parametrize("computed", ["triton.next_power_of_2(x.numel())",
                                      "min(triton.next_power_of_2(x.numel()), 4096)"])
def test_a_block_the_kernel_takes_in_one_piece_stays_computed(tmp_path, computed):
    """Without a loop over the block, a lower cap would drop the rows past it: harness shapes under
    the cap could not show that, so only num_warps is tuned."""
    text = _launch(f'''def scale(x):
    out = torch.empty_like(x)
    BLOCK = {computed}
    scale_kernel[(1,)](x, out, x.numel(), BLOCK=BLOCK)
    return out
''')
    cands = _proposals(tmp_path, text)
    assert cands and all("BLOCK" not in t for t in cands)
    assert all(f"BLOCK = {computed}\n" in c.source for c in cands.values())


def test_a_proposer_or_a_verification_that_raises_is_a_refused_verdict_and_costs_no_other():
    """Reproduces the optimize run that ended with no output: an exception in one proposer lost the
    verdicts already computed. Each failure is now a refused verdict with a one-line reason."""
    from tritonlens.rewrite.candidate import Candidate, Verdict
    from tritonlens.rewrite.proposal_guard import failed, propose_and_verify

    def broken():
        raise ValueError("num_warps cannot be set at the launch\n  (a second line nobody needs)")

    (v,) = propose_and_verify("config", broken, lambda cands: [], "text")
    assert not v.accepted and v.reason == "not proposed: ValueError: num_warps cannot be set at the launch"
    good = Candidate("rules", "fix", "text2")
    bad = failed("rules", "hoist", "text", KeyError("x"))
    verdicts = propose_and_verify("rules", lambda: [bad, good], lambda cands: [Verdict(c, True, "ok") for c in cands],
                                  "text")
    assert [(v.candidate.title, v.accepted, v.reason) for v in verdicts] == [
        ("hoist", False, "not proposed: KeyError: 'x'"), ("fix", True, "ok")]

    def worker_gone(cands):
        raise RuntimeError("worker died")

    (v,) = propose_and_verify("rules", lambda: [good], worker_gone, "text")
    assert not v.accepted and v.reason == "verification failed: RuntimeError: worker died"
