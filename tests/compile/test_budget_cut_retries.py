"""A kernel stopped at its share with only a refusal read back from the cache was cut off in its
retry with other values (the first, assumed configuration was refused at once; the retry that
would cure it compiles longer than the share). It goes to the budget's second round with the time
the quick kernels left, as a kernel with nothing read back does. The worker is stood in for: the
timing is what is tested, and a real compile slow enough to need it costs minutes of this CPU."""

from __future__ import annotations

from tritonlens.profiling import compile_budget
from tritonlens.profiling.compile_worker import CompileError
from tritonlens.profiling.worker.compile_report import CompileFailure
from tritonlens.profiling.worker.messages import (
    CompiledConfig,
    CompiledKernel,
    CompileJob,
    CompileResult,
)

BUDGET_S = 60.0
RETRY_NEEDS_S = 12.0  # more than a first-round share of 60 s over 6 kernels, less than the second round's


def _refused() -> CompiledConfig:
    return CompiledConfig(label="assumed", error=CompileFailure(message="tl.static_assert(BLOCK <= 4096)", line=3))


def _stand_in(job: CompileJob, python, cancel, timeout: float) -> CompileResult:
    (spec,) = job.kernels
    name = spec["name"]
    if name != "cured_by_retry":
        return CompileResult(kernels=[CompiledKernel(name=name, configs=[CompiledConfig(label="x", registers=32)])])
    if job.cached_only:  # the first configuration's refusal was cached before the retry began
        return CompileResult(kernels=[CompiledKernel(name=name, configs=[_refused()])])
    if timeout < RETRY_NEEDS_S:
        raise CompileError("the compile worker did not answer (timeout)")
    return CompileResult(kernels=[CompiledKernel(name=name, configs=[CompiledConfig(label="retried", registers=40)])])


def _within(monkeypatch, budget: float) -> compile_budget.BudgetedResult:
    monkeypatch.setattr(compile_budget, "compile_job", _stand_in)
    monkeypatch.setattr(compile_budget, "_warm", lambda python, cancel, limit: True)
    names = ["cured_by_retry"] + [f"quick_{i}" for i in range(5)]
    job = CompileJob("compile", path="k.py", kernels=[{"name": n, "configs": []} for n in names])
    return compile_budget.compile_within(job, None, None, budget)


def test_a_retry_cut_off_at_its_share_is_given_the_time_the_quick_kernels_left(monkeypatch):
    out = _within(monkeypatch, BUDGET_S)
    (kernel,) = [k for k in out.result.kernels if k.name == "cured_by_retry"]
    assert [c.registers for c in kernel.configs] == [40] and not out.stopped


def test_a_retry_never_finished_keeps_the_refusal_and_says_the_retry_was_cut(monkeypatch):
    out = _within(monkeypatch, RETRY_NEEDS_S)  # no share is ever long enough
    (kernel,) = [k for k in out.result.kernels if k.name == "cured_by_retry"]
    assert kernel.configs[0].error.message.startswith("tl.static_assert") and "cured_by_retry" not in out.stopped
    assert "its retries with other values not compiled within" in kernel.note
