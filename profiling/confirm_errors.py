"""Error severity means Triton refuses the code: each error finding is put to Triton's own front end.

Three steps, so that the language server can run each where it belongs:

    request = prepare(findings, module)          # the analysis' thread: reads the kernel model
    lowered = lower(request, python, cancel)     # any thread: a killable worker lowers to TTIR
    findings = apply(findings, judge(request, lowered))

`prepare` builds each kernel's standalone module (analysis/standalone.py: never the user's module)
and its configurations: the static model's (static_configs.py), or, where a constexpr has no
value the analysis can see, one with guessed values, every guess named. `lower` runs the worker's
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
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from tritonlens.analysis.findings import Finding, Severity
from tritonlens.analysis.standalone import Standalone, build_standalones
from tritonlens.analysis.values import UNKNOWN, Value
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

CACHE_FORMAT = 2  # bump when the worker answers differently for the same kernel
TARGET = "sm_90"
TIMEOUT_S = 120.0
# Rules whose claim is about how the code is spelled (a construct, a name, a call's arguments),
# not about the values it runs with: any configuration that lowers the line settles them.
CONFIG_FREE = {"TL019", "TL020", "TL021", "TL022"}
_IDENT = re.compile(r"[A-Za-z_]\w*")
_BOOL_NAME = re.compile(r"^(HAS|USE|IS|ENABLE|EVEN|NEED|DO|APPLY|WITH|SKIP|NO)_|_(FLAG|ENABLED)$", re.IGNORECASE)
_DTYPE_NAME = re.compile(r"dtype|_type$|^type_|^(DTYPE|TYPE)$", re.IGNORECASE)
GUESSED_INT = 32  # a power of two ≥ 16: what tl.arange and tl.dot accept


class Verdict(str, Enum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    reason: str


def key_of(f: Finding) -> tuple:
    return (f.code, f.range, f.message, f.kernel)


@dataclass
class _Ask:
    """One error finding to judge: its 1-based lines, the configuration it names, the names it reads."""

    key: tuple
    code: str
    kernel: str | None
    lines: range
    config: str | None
    reads: frozenset
    evidence: frozenset  # words a refusal of what the finding claims names (a keyword, an API name)


@dataclass
class Request:
    """What `prepare` read off the model: kernels to lower and findings to judge. Plain data."""

    path: str
    kernels: dict[str, FrontendKernel] = field(default_factory=dict)
    guessed: dict[tuple[str, str], frozenset] = field(default_factory=dict)  # (kernel, label) → guessed names
    asks: list[_Ask] = field(default_factory=list)
    not_built: dict[str, str] = field(default_factory=dict)  # kernel → why it has nothing to lower
    absent: dict[str, frozenset] = field(default_factory=dict)  # kernel → file names its standalone lacks


# -------------------------------------------------------------------------------------------------
# prepare: on the thread that owns the model


class _Proxy:
    """The module with one kernel's configurations replaced (static_configs reads `kernels`)."""

    def __init__(self, module, kernel):
        self._module = module
        self.kernels = [kernel if k.name == kernel.name else k for k in module.kernels]

    def __getattr__(self, name):
        return getattr(self._module, name)


def _guess(param) -> tuple[object, str]:
    if param.annotation and "bool" in param.annotation or _BOOL_NAME.search(param.name):
        return True, "bool"
    if _DTYPE_NAME.search(param.name):
        return "float32", "dtype"
    return GUESSED_INT, "int"


def _configs(module, kernel) -> tuple[list[dict], dict[str, frozenset]]:
    """The kernel's CONFIG dicts and, per label, the constexprs whose values were guessed."""
    from tritonlens.profiling.static_configs import static_configs

    configs = static_configs(module, {kernel.name})[0].get(kernel.name) or []
    if configs:
        return configs, {c["label"]: frozenset() for c in configs}
    guessed_configs, dtypes, guessed = [], {}, {}
    for cfg in kernel.configs[:4]:
        values = dict(cfg.values)
        names = []
        for p in kernel.params:
            v = values.get(p.name)
            if p.is_constexpr and (v is None or v.value is UNKNOWN):
                value, kind = (p.default, "default") if p.has_default and p.default is not UNKNOWN else _guess(p)
                values[p.name] = Value(value, "guessed")
                names.append(p.name)
                if kind == "dtype":
                    dtypes[p.name] = value
        for option, default in (("num_warps", 4), ("num_stages", 3)):  # Triton's defaults
            if option in values and values[option].value is UNKNOWN:
                values[option] = Value(default, "guessed")
        guessed_configs.append(dataclasses.replace(cfg, values=values))
        guessed[f"static: {cfg.label}"] = frozenset(names)
    if not guessed_configs:
        return [], {}
    configs = static_configs(_Proxy(module, dataclasses.replace(kernel, configs=guessed_configs)), {kernel.name})[0]
    out = configs.get(kernel.name) or []
    for c in out:
        for name, value in dtypes.items():
            if name in c["args"]:
                c["args"][name] = {"kind": "dtype", "value": value}
    return out, {c["label"]: guessed.get(c["label"], frozenset()) for c in out}


def _reads(kernel, src, rng) -> frozenset:
    """Names the finding's own text reads, directly or through the kernel's assignments."""
    rows = [src.line_text(r) for r in range(rng.start.line, rng.end.line + 1)]
    if rows:
        rows[-1] = rows[-1][:rng.end.column] if rng.end.column else rows[-1]
        rows[0] = rows[0][rng.start.column:]
    todo, seen = _IDENT.findall("\n".join(rows)), set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        for a in kernel.assignments.get(n, []) if kernel is not None else []:
            node = a.value if a.value is not None else (a.node.child_by_field_name("right") if a.node is not None else None)
            if node is not None:
                todo.extend(_IDENT.findall(src.text_of(node)))
    return frozenset(seen)


_EVIDENCE_KEYS = ("keyword", "name", "construct", "missing", "function")


def _evidence(f: Finding) -> frozenset:
    data = f.data if isinstance(f.data, dict) else {}
    # Triton's stand-ins for removed functions (tl.make_block_ptr) refuse with "... removed".
    words = {"removed"} if " removed" in f.message else set()
    for key in _EVIDENCE_KEYS:
        v = data.get(key)
        for item in v if isinstance(v, (list, tuple)) else [v]:
            if isinstance(item, str):
                words.update(w.lower() for w in _IDENT.findall(item) if len(w) > 2 and w.lower() != "in")
    return frozenset(words)


def prepare(findings: list[Finding], module, path: str = "") -> Request:
    """What to lower for the error findings of one analyzed file (`module`: the analysis' model)."""
    request = Request(path)
    errors = [f for f in findings if f.severity is Severity.ERROR]
    if not errors or module is None:
        return request
    src = module.src
    standalones: dict[str, Standalone] = build_standalones(src)
    users: dict[str, list[str]] = {}  # jit function → kernels whose standalone defines it
    for name, s in standalones.items():
        for fn in s.functions:
            users.setdefault(fn, []).append(name)
    wanted = {k for f in errors if f.kernel for k in users.get(f.kernel, [f.kernel])}
    for k in module.kernels:
        if k.name not in wanted or k.name not in standalones:
            continue
        try:
            configs, guessed = _configs(module, k)
        except Exception as exc:  # noqa: BLE001 - a model the configurations cannot be read from
            request.not_built[k.name] = f"its configurations could not be read ({type(exc).__name__})"
            continue
        if not configs:
            request.not_built[k.name] = "it has no configuration to compile (no launch or autotune config here)"
            continue
        s = standalones[k.name]
        request.kernels[k.name] = FrontendKernel(name=k.name, path=path, text=s.text,
                                                 statements=[list(x) for x in s.statements],
                                                 functions=list(s.functions), configs=configs)
        request.absent[k.name] = s.absent
        for label, names in guessed.items():
            request.guessed[(k.name, label)] = names
    for f in errors:
        owner = module.kernel(f.kernel) if f.kernel else None
        label = f.data.get("config") if isinstance(f.data, dict) else None
        request.asks.append(_Ask(key_of(f), f.code, f.kernel, range(f.range.start.line + 1, f.range.end.line + 2),
                                 f"static: {label}" if isinstance(label, str) else None,
                                 _reads(owner, owner.src or src if owner else src, f.range),
                                 _evidence(f)))
    return request


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
    for (i, kernel, path), answer in zip(todo, result.kernels):
        out[i][kernel.name] = answer
        _write(path, answer.to_json())
    return result.triton_version or version, out


def _write(path: Path, obj) -> None:
    import os

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(obj), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs another lowering


# -------------------------------------------------------------------------------------------------
# judge and apply: pure


_NOT_DEFINED = re.compile(r"'?(\w+)'? is not defined")


def _on_lines(o, ask: _Ask) -> bool:
    """A refusal on the finding's lines, or of a statement holding them (Triton reports a `for …
    else` at its `for`, a `return` in a loop at the enclosing `if`)."""
    if o.line is None:
        return False
    if o.line in ask.lines:
        return True
    return o.line < ask.lines.start and (o.end_line or o.line) >= ask.lines.stop - 1


def _judge_one(ask: _Ask, request: Request, lowered: dict[str, FrontendKernelResult], version: str) -> Judgement:
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
                if not tainted or ask.code in CONFIG_FREE:
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
