"""A file's compile within a time budget: each kernel in a job of its own, within its share.

One configuration can keep Triton busy for minutes (a 128×128 fp32 tile at num_warps=2 took
ptxas 170 s), and the compile job answers all at once: a single slow kernel used to cost every
kernel of its file its facts. Here each kernel is its own job on the same worker, its timeout
its share of what is left of the budget (what is left divided by the kernels still waiting, so a
quick kernel leaves its time to the others). A kernel past its share has its worker killed; the
kernels compiled before it keep their facts, the ones after it get a fresh worker, and it is
named with the time it had (`NOT_WITHIN`). A worker that crashes on one kernel costs that kernel
only, the same way.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from tritonlens.profiling.compile_worker import (
    CompileCancelled,
    CompileError,
    client_for,
    compile_job,
    run,
)
from tritonlens.profiling.worker.messages import NOT_IN_CACHE, CompiledKernel, CompileJob, CompileResult

# What a kernel that was still compiling when its share ran out is told: the seconds it had.
NOT_WITHIN = "not compiled within {seconds:.0f} s, its share of the file's {budget:.0f} s budget"
MIN_WARMUP_S = 5.0  # the least a worker start (Triton and torch imports) is given
SALVAGE_S = 10.0  # at most, to read back what a stopped kernel finished: a module load and cache reads
# Of a kernel's share, what its compile leaves for that read-back (a worker start and the reading).
SALVAGE_RESERVE = 0.25


@dataclass
class BudgetedResult:
    """The merged job result, and why each kernel the budget or a worker failure stopped has none."""

    result: CompileResult
    stopped: dict[str, str] = field(default_factory=dict)  # kernel → reason
    seconds: float = 0.0


def compile_within(job: CompileJob, python: str | None, cancel, budget: float) -> BudgetedResult:
    """`job`'s kernels one job each, in order, each within its share of `budget` seconds."""
    t0 = time.monotonic()
    out = BudgetedResult(CompileResult(target=job.target))
    specs = list(job.kernels)
    warm = _warm(python, cancel, budget / 2)
    for i, spec in enumerate(specs):
        left = budget - (time.monotonic() - t0)
        share = left / (len(specs) - i)
        name = spec["name"]
        if share < 1.0:
            out.stopped[name] = NOT_WITHIN.format(seconds=max(share, 0.0), budget=budget)
            out.result.kernels.append(CompiledKernel(name=name))
            continue
        if not warm:
            warm = _warm(python, cancel, min(left / 2, MIN_WARMUP_S * 4))
        try:
            reply = compile_job(dataclasses.replace(job, kernels=[spec]), python, cancel,
                                share - min(share * SALVAGE_RESERVE, SALVAGE_S))
        except CompileCancelled:
            raise
        except CompileError as exc:
            # The worker was killed (timeout) or died: the configurations it finished are in the
            # config cache, read back by a fresh worker that compiles nothing.
            why = _why_stopped(str(exc), share - min(share * SALVAGE_RESERVE, SALVAGE_S), budget)
            salvaged = _salvage(job, spec, python, cancel, budget - (time.monotonic() - t0))
            warm = salvaged is not None
            kept = [c for c in salvaged.configs if not _unfinished(c)] if salvaged is not None else []
            if kept:
                dropped = len(salvaged.configs) - len(kept)
                note = f"{dropped} of {len(salvaged.configs)} configurations {why}"
                salvaged.note = f"{salvaged.note}; {note}" if salvaged.note else note
                salvaged.configs = kept
                out.result.kernels.append(salvaged)
            else:
                out.stopped[name] = why
                out.result.kernels.append(CompiledKernel(name=name))
            continue
        _merge(out.result, reply)
        if reply.error is not None:  # the file itself does not parse: no other kernel will either
            break
    out.seconds = time.monotonic() - t0
    return out


def _warm(python: str | None, cancel, limit: float) -> bool:
    """Start the worker (Triton and torch imported) outside any kernel's share."""
    try:
        run(client_for(python), CompileJob("compile", warmup=True), cancel, max(limit, MIN_WARMUP_S))
        return True
    except CompileCancelled:
        raise
    except CompileError:
        return False  # the first kernel's job starts it, or says why it cannot


def _salvage(job: CompileJob, spec: dict, python: str | None, cancel, left: float) -> CompiledKernel | None:
    """`spec`'s kernel as far as the config cache holds it, or None when that cannot be read in time."""
    if left < 2.0 or not _warm(python, cancel, min(left / 2, MIN_WARMUP_S * 4)):
        return None
    try:
        reply = compile_job(dataclasses.replace(job, kernels=[spec], cached_only=True), python, cancel,
                            min(SALVAGE_S, max(left / 2, 1.0)))
    except CompileCancelled:
        raise
    except CompileError:
        return None
    return reply.kernels[0] if reply.kernels else None


def _unfinished(c) -> bool:
    return c.error is not None and c.error.message == NOT_IN_CACHE


def _why_stopped(message: str, share: float, budget: float) -> str:
    if "(timeout)" in message:
        return NOT_WITHIN.format(seconds=share, budget=budget)
    first = message.strip().splitlines()[0] if message.strip() else "the compile worker failed"
    return f"the compile worker failed on this kernel: {first}"


def _merge(into: CompileResult, reply: CompileResult) -> None:
    into.triton_version = into.triton_version or reply.triton_version
    into.kernels.extend(reply.kernels)
    into.error = into.error or reply.error
    into.module_failures = into.module_failures or list(reply.module_failures)
    calls = reply.more.get("compile_calls")
    if isinstance(calls, int):  # the worker's running count: the latest is the largest
        into.more["compile_calls"] = max(calls, into.more.get("compile_calls", 0))
