"""Error severity means Triton refuses the code: each error finding is put to Triton's own front end.

Three steps, so that the language server can run each where it belongs:

    request = prepare(findings, module)          # the analysis' thread: reads the kernel model
    lowered = lower(request, python, cancel)     # any thread: a killable worker lowers to TTIR
    findings = apply(findings, judge(request, lowered))

`prepare` (confirm_plan.py) builds each kernel's standalone module (analysis/standalone.py: never
the user's module) and its configurations, guessed values named. `lower` runs the worker's
"frontend" job for the kernels not in the cache. `judge` decides, per error finding:

- confirmed: a configuration was refused on the finding's lines, and those lines read no guessed
  value; the finding stays an error;
- refuted: the front end lowered the finding's lines and accepted them (in the configuration the
  finding names, or in all of them); the finding is dropped, its claim is false;
- inconclusive otherwise (no Triton, the module could not be made, a name it needs was left out,
  a refusal elsewhere, a timeout): published as a warning, its message unchanged and its data
  saying why it is unconfirmed.

Verdicts of the front end are cached per kernel on (standalone text, configurations, target,
Triton version) under the compile cache (compile_job.cache_root).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import threading
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from tritonlens.analysis.findings import Finding, Severity
from tritonlens.profiling.confirm_plan import Ask, Request, key_of, prepare
from tritonlens.profiling.worker.frontend_report import (
    ACCEPTED,
    REFUSED,
    FrontendKernel,
    FrontendKernelResult,
)
from tritonlens.profiling.worker.messages import (
    FrontendJob,
    FrontendResult,
    MessageError,
)

__all__ = [
    "CONFIG_FREE",
    "DTYPE_DEPENDENT",
    "STATS",
    "Ask",
    "Judgement",
    "LowerError",
    "Request",
    "Verdict",
    "apply",
    "confirm",
    "judge",
    "key_of",
    "lower",
    "lower_many",
    "prepare",
    "shutdown",
    "unconfirmed",
    "warm_up",
]

CACHE_FORMAT = 2  # bump when the worker answers differently for the same kernel
TARGET = "sm_90"
TIMEOUT_S = 120.0
# Rules whose claim is about how the code is spelled (a construct, a name, a call's arguments),
# not about the values it runs with: any configuration that lowers the line settles them.
CONFIG_FREE = {"TL019", "TL020", "TL021", "TL022"}
# Rules whose claim depends on the operands' element types, which the configurations only assume
# (fp32 pointers unless the kernel names a half type): an accepted lowering does not refute them
# (a K=8 tl.dot compiles for fp32 and is refused for fp16).
DTYPE_DEPENDENT = {"TL004"}


class Verdict(str, Enum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    reason: str


# -------------------------------------------------------------------------------------------------
# lower: the worker


class LowerError(RuntimeError):
    """The front end could not be asked at all (no Triton, the worker failed, a timeout)."""


_clients: dict = {}
_clients_lock = threading.Lock()
STATS = {"jobs": 0, "cache_hits": 0}


def _client(python: str | None):
    import sys

    from tritonlens.profiling.client import WorkerClient

    key = python or sys.executable
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = WorkerClient(python=python, timeout=TIMEOUT_S, env={"TRITON_INTERPRET": "0"})
        return client


def warm_up(python: str | None = None) -> None:
    """Start the worker and import Triton in it now, so that the first confirmation pays only for
    its lowering (the language server calls this at start-up)."""
    from tritonlens.profiling.compile_worker import triton_version

    if triton_version(python) != "none":
        _client(python).run(FrontendJob("frontend", target=TARGET), timeout=TIMEOUT_S)


def shutdown() -> None:
    with _clients_lock:
        for client in _clients.values():
            client.close()
        _clients.clear()


def _cache_file(kernel: FrontendKernel, version: str) -> Path:
    from tritonlens.profiling.compile_job import cache_root

    key_src = json.dumps([CACHE_FORMAT, kernel.name, kernel.text, kernel.statements, kernel.functions,
                          kernel.configs, TARGET, version], sort_keys=True, default=str)
    key = hashlib.sha256(key_src.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return cache_root() / "frontend" / key[:2] / f"{key}.json"


def lower(request: Request, python: str | None = None, cancel: threading.Event | None = None,
          timeout: float = TIMEOUT_S) -> tuple[str, dict[str, FrontendKernelResult]]:
    """(Triton version, {kernel: what the front end said}); LowerError when it could not be asked."""
    version, results = lower_many([request], python, cancel, timeout)
    return version, results[0]


def lower_many(requests: list[Request], python: str | None = None, cancel: threading.Event | None = None,
               timeout: float = TIMEOUT_S) -> tuple[str, list[dict[str, FrontendKernelResult]]]:
    """`lower` for several files in one worker job (the CLI's batch)."""
    from tritonlens.profiling.compile_worker import triton_version

    version = triton_version(python)
    if version == "none":
        raise LowerError("Triton is not installed")
    out: list[dict[str, FrontendKernelResult]] = [{} for _ in requests]
    todo: list[tuple[int, FrontendKernel, Path]] = []
    for i, request in enumerate(requests):
        for name, kernel in request.kernels.items():
            path = _cache_file(kernel, version)
            try:
                out[i][name] = FrontendKernelResult.from_json(json.loads(path.read_text(encoding="utf-8")))
                STATS["cache_hits"] += 1
            except (OSError, ValueError):  # MessageError is a ValueError: a torn entry is asked again
                todo.append((i, kernel, path))
    if not todo:
        return version, out
    STATS["jobs"] += 1
    job = FrontendJob("frontend", target=TARGET, kernels=[k for _, k, _ in todo])
    reply = _client(python).run(job, timeout=timeout, cancel=cancel)
    if not reply.ok:
        err = reply.error
        raise LowerError(f"{err.type}: {err.message}" if err is not None else "the worker gave no reason")
    try:
        result = FrontendResult.from_json(reply.result)
    except MessageError as exc:
        raise LowerError(f"the frontend job's result is malformed: {exc}") from exc
    if [k.name for k in result.kernels] != [k.name for _, k, _ in todo]:
        raise LowerError("the frontend job answered for other kernels than it was asked")
    from tritonlens.profiling.compile_job import _write_json

    for (i, kernel, path), answer in zip(todo, result.kernels):
        out[i][kernel.name] = answer
        _write_json(path, answer.to_json())  # atomic; a cache that cannot be written costs a lowering
    return result.triton_version or version, out


# -------------------------------------------------------------------------------------------------
# judge and apply: pure


_NOT_DEFINED = re.compile(r"'?(\w+)'? is not defined")


def _on_lines(o, ask: Ask) -> bool:
    """A refusal on the finding's lines, or of a statement holding them (Triton reports a `for …
    else` at its `for`, a `return` in a loop at the enclosing `if`)."""
    if o.line is None:
        return False
    if o.line in ask.lines:
        return True
    return o.line < ask.lines.start and (o.end_line or o.line) >= ask.lines.stop - 1


def _judge_one(ask: Ask, request: Request, lowered: dict[str, FrontendKernelResult], version: str) -> Judgement:
    notes: list[str] = []
    accepted = refused_here = refused_other = 0
    for name, result in lowered.items():
        if ask.kernel not in request.kernels.get(name, FrontendKernel(name=name)).functions:
            continue
        if result.error:
            notes.append(f"the standalone module could not be made: {result.error}")
            continue
        outcomes = result.configs
        if ask.config is not None and name == ask.kernel:
            named = [o for o in outcomes if o.label == ask.config]
            outcomes = named or outcomes
        for o in outcomes:
            guessed = request.guessed.get((name, o.label), frozenset())
            # In a helper, every value may come from the caller: any guess taints it.
            tainted = bool(guessed & ask.reads) if name == ask.kernel else bool(guessed)
            missing = _NOT_DEFINED.search(o.message) if o.status == REFUSED and o.type == "NameError" else None
            if missing and missing.group(1) in request.absent.get(name, frozenset()):
                notes.append(f"the standalone module lacks `{missing.group(1)}`, which the file defines")
                refused_other += 1
            elif o.status == REFUSED and _on_lines(o, ask):
                named = any(w in o.message.lower() for w in ask.evidence)
                exact = o.line in ask.lines
                if (exact and not tainted) or (ask.code in CONFIG_FREE and named):
                    return Judgement(Verdict.CONFIRMED, f"Triton {version} refuses it: {o.message[:200]}")
                notes.append("refused here, but with guessed constexpr values: " + ", ".join(sorted(guessed))
                             if tainted else f"refused around here for another reason: {o.message[:120]}")
                refused_here += 1
            elif o.status == REFUSED:
                notes.append(f"Triton refused line {o.line} first: {o.message[:120]}" if o.line
                             else f"Triton refused the kernel: {o.message[:120]}")
                refused_other += 1
            elif o.status == ACCEPTED and any(line in ask.lines for line in o.visited):
                if ask.code in DTYPE_DEPENDENT:
                    notes.append("lowered, but with assumed element types")
                elif not tainted or ask.code in CONFIG_FREE:
                    accepted += 1
                else:
                    notes.append("lowered, but with guessed constexpr values: " + ", ".join(sorted(guessed)))
            elif o.status == ACCEPTED:
                notes.append(f"the line is not compiled in {o.label.removeprefix('static: ')}")
            else:
                notes.append(f"not lowered in {o.label.removeprefix('static: ')} ({o.message[:120]})")
    if accepted and not refused_here and (ask.code in CONFIG_FREE or not refused_other):
        return Judgement(Verdict.REFUTED, f"Triton {version} lowers these lines without an error")
    if ask.kernel in request.not_built and not notes:
        notes.append(request.not_built[ask.kernel])
    return Judgement(Verdict.INCONCLUSIVE, notes[0] if notes else "no kernel that reaches it could be lowered")


def judge(request: Request, lowered: dict[str, FrontendKernelResult] | None, version: str = "",
          failure: str | None = None) -> dict[tuple, Judgement]:
    """A judgement per error finding of `request`; `failure` (why nothing was lowered) makes them
    all inconclusive."""
    if failure is not None or lowered is None:
        return {a.key: Judgement(Verdict.INCONCLUSIVE, failure or "not checked") for a in request.asks}
    return {a.key: _judge_one(a, request, lowered, version) for a in request.asks}


def unconfirmed(f: Finding, reason: str) -> Finding:
    """An error finding the compiler did not confirm: shown as a warning, its message unchanged."""
    return dataclasses.replace(f, severity=Severity.WARNING, data={**f.data, "unconfirmed": reason})


def apply(findings: list[Finding], judgements: dict[tuple, Judgement], default: str | None = None) -> list[Finding]:
    """`findings` with confirmed errors kept, refuted ones dropped and the others made warnings;
    an error finding with no judgement becomes a warning saying `default` (left alone when None)."""
    out = []
    for f in findings:
        if f.severity is not Severity.ERROR:
            out.append(f)
            continue
        j = judgements.get(key_of(f))
        if j is None:
            out.append(f if default is None else unconfirmed(f, default))
        elif j.verdict is Verdict.CONFIRMED:
            out.append(dataclasses.replace(f, data={**f.data, "confirmed": j.reason}))
        elif j.verdict is Verdict.INCONCLUSIVE:
            out.append(unconfirmed(f, j.reason))
    return out


def confirm(findings: list[Finding], module, path: str = "", python: str | None = None,
            cancel: threading.Event | None = None, timeout: float = TIMEOUT_S) -> tuple[list[Finding], dict]:
    """All three steps on one thread (the CLI): (findings to publish, {key: Judgement})."""
    request = prepare(findings, module, path)
    if not request.asks:
        return findings, {}
    try:
        version, lowered = lower(request, python, cancel, timeout) if request.kernels else ("", {})
        judgements = judge(request, lowered, version)
    except LowerError as exc:
        judgements = judge(request, None, failure=f"Triton's front end could not be asked: {exc}")
    return apply(findings, judgements), judgements
