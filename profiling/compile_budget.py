"""A file's compile within a time budget: each kernel in a job of its own, within its share.

One configuration can keep Triton busy for minutes (fla's delta-rule kernel with a 128×128 fp32
tile at num_warps=2 took 168 s), and the compile job answers all at once: a single slow kernel used to cost every
kernel of its file its facts. Here each kernel is its own job on the same worker, its timeout
its share of what is left of the budget (what is left divided by the kernels still waiting, so a
quick kernel leaves its time to the others). A kernel past its share has its worker killed; the
kernels compiled before it keep their facts, the ones after it get a fresh worker, and it is
named with the time it had (`NOT_WITHIN`) unless a second round, with the time the quick kernels
left, finishes it. A kernel stopped with only refusals read back (its retries with other values
cut off) goes to that second round too, keeping its refusal should it stop again. A worker that crashes on one kernel costs that kernel only, the same way.
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
from tritonlens.profiling.worker.messages import (
    NOT_IN_CACHE,
    CompiledKernel,
    CompileJob,
    CompileResult,
)

# What a kernel that was still compiling when its share ran out is told: the seconds it had.
NOT_WITHIN = "not compiled within {seconds:.0f} s, its share of the file's {budget:.0f} s budget"
MIN_WARMUP_S = 5.0  # the least a worker start (Triton and torch imports) is given
SALVAGE_S = 10.0  # at most, to read back what a stopped kernel finished: a module load and cache reads
# Of a kernel's share, what its compile leaves for that read-back (a worker start and the reading).
SALVAGE_RESERVE = 0.25
ROUNDS = 2  # the first pass over the kernels, then one more for those stopped, with the time left
RETRY_GAIN = 1.5  # a stopped kernel is tried again only with this much more time than it had


@dataclass
class BudgetedResult:
    """The merged job result, and why each kernel the budget or a worker failure stopped has none."""

    result: CompileResult
    stopped: dict[str, str] = field(default_factory=dict)  # kernel → reason
    seconds: float = 0.0


def compile_within(job: CompileJob, python: str | None, cancel, budget: float) -> BudgetedResult:
    """`job`'s kernels one job each, in order, each within its share of `budget` seconds; then,
    while time is left, the kernels stopped past their share once more with a larger one (time the
    quick kernels did not use)."""
    t0 = time.monotonic()
    out = BudgetedResult(CompileResult(target=job.target))
    specs = list(job.kernels)
    got: dict[str, CompiledKernel] = {}
    had: dict[str, float] = {}  # kernel → the share it was stopped at
    state = {"warm": _warm(python, cancel, budget / 2)}
    todo, fatal = specs, False
    for _round in range(ROUNDS):
        for i, spec in enumerate(todo):
            left = budget - (time.monotonic() - t0)
            share = left / (len(todo) - i)
            name = spec["name"]
            if share <= (had[name] * RETRY_GAIN if name in had else 1.0):  # it would only stop again
                had.setdefault(name, max(share, 0.0))
                continue
            kernel, stopped_at, fatal = _one(job, spec, python, cancel, share, budget - (time.monotonic() - t0),
                                             budget, state, out.result)
            if kernel is not None:
                got[name] = kernel
            if stopped_at is None:
                had.pop(name, None)
            else:
                had[name] = stopped_at
            if fatal:
                break
        todo = [s for s in specs if s["name"] in had]
        if fatal or not todo or budget - (time.monotonic() - t0) < MIN_WARMUP_S:
            break
    for spec in specs:
        name = spec["name"]
        if name in had and (name not in got or not got[name].configs):  # a refusal read back says more
            out.stopped[name] = NOT_WITHIN.format(seconds=had[name], budget=budget)
        out.result.kernels.append(got.get(name) or CompiledKernel(name=name))
    out.seconds = time.monotonic() - t0
    return out


def _one(job: CompileJob, spec: dict, python, cancel, share: float, left: float, budget: float, state: dict,
         into: CompileResult) -> tuple[CompiledKernel | None, float | None, bool]:
    """One kernel's job within `share`: (its kernel, the seconds it was stopped at or None, whether
    the file itself failed). A stopped kernel's finished configurations are read back from the cache."""
    if not state["warm"]:
        state["warm"] = _warm(python, cancel, min(left / 2, MIN_WARMUP_S * 4))
    limit = share - min(share * SALVAGE_RESERVE, SALVAGE_S)
    try:
        reply = compile_job(dataclasses.replace(job, kernels=[spec]), python, cancel, limit)
    except CompileCancelled:
        raise
    except CompileError as exc:
        # The worker was killed (timeout) or died: the configurations it finished are in the
        # config cache, read back by a fresh worker that compiles nothing.
        if "(timeout)" not in str(exc):
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "the compile worker failed"
            state["warm"] = False
            return CompiledKernel(name=spec["name"], note=f"the compile worker failed on this kernel: {first}"), \
                None, False
        salvaged = _salvage(job, spec, python, cancel, left - limit)
        state["warm"] = salvaged is not None
        kept = [c for c in salvaged.configs if not _unfinished(c)] if salvaged is not None else []
        if not kept:
            return None, limit, False
        dropped = len(salvaged.configs) - len(kept)
        refused = not any(c.error is None for c in kept)
        # Only refusals came back: what was cut off was a retry with other values that may cure them.
        what = "its retries with other values" if refused and not dropped else \
            f"{dropped} of {len(salvaged.configs)} configurations"
        why = f"{what} " + NOT_WITHIN.format(seconds=limit, budget=budget)
        salvaged.note = f"{salvaged.note}; {why}" if salvaged.note else why
        salvaged.configs = kept
        return salvaged, (limit if refused else None), False
    _merge(into, reply)
    kernel = reply.kernels[0] if reply.kernels else None
    return kernel, None, reply.error is not None  # a file that does not parse: no other kernel will either


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


def _merge(into: CompileResult, reply: CompileResult) -> None:
    """The file-wide parts of one kernel's reply (its kernel is placed by the caller)."""
    into.triton_version = into.triton_version or reply.triton_version
    into.error = into.error or reply.error
    into.module_failures = into.module_failures or list(reply.module_failures)
    calls = reply.more.get("compile_calls")
    if isinstance(calls, int):  # the worker's running count: the latest is the largest
        into.more["compile_calls"] = max(calls, into.more.get("compile_calls", 0))
