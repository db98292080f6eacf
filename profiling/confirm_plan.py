"""What confirming a file's error findings needs from its analysis: each kernel's standalone module
and configurations, and for each error finding the lines, configuration and names it rests on.

Read on the thread that owns the model (the language server's analysis thread); the `Request` it
makes is plain data that the worker step and the verdicts in confirm_errors.py use anywhere.

Configurations are the static model's (static_configs.py); where a constexpr, `num_warps` or
`num_stages` has no value the analysis can see, one per resolved configuration with guessed
values (a power of two, True for flag-like names, float32 for dtype-like ones, Triton's default
options), every guessed name recorded so that a refusal reading one proves nothing.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from tritonlens.analysis.findings import Finding, Severity
from tritonlens.analysis.standalone import Standalone, build_standalones
from tritonlens.analysis.values import UNKNOWN, Value
from tritonlens.profiling.worker.frontend_report import FrontendKernel

_IDENT = re.compile(r"[A-Za-z_]\w*")
_BOOL_NAME = re.compile(r"^(HAS|USE|IS|ENABLE|EVEN|NEED|DO|APPLY|WITH|SKIP|NO)_|_(FLAG|ENABLED)$", re.IGNORECASE)
_DTYPE_NAME = re.compile(r"dtype|_type$|^type_|^(DTYPE|TYPE)$", re.IGNORECASE)
GUESSED_INT = 32  # a power of two ≥ 16: what tl.arange and tl.dot accept


def key_of(f: Finding) -> tuple:
    return (f.code, f.range, f.message, f.kernel)


@dataclass
class Ask:
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
    asks: list[Ask] = field(default_factory=list)
    not_built: dict[str, str] = field(default_factory=dict)  # kernel → why it has nothing to lower
    absent: dict[str, frozenset] = field(default_factory=dict)  # kernel → file names its standalone lacks


class _Proxy:
    """The module with one kernel's configurations replaced (static_configs reads `kernels`)."""

    def __init__(self, module, kernel):
        self._module = module
        self.kernels = [kernel if k.name == kernel.name else k for k in module.kernels]

    def __getattr__(self, name):
        return getattr(self._module, name)


def _guess(param) -> tuple[object, str]:
    if (param.annotation and "bool" in param.annotation) or _BOOL_NAME.search(param.name):
        return True, "bool"
    if _DTYPE_NAME.search(param.name):
        return "float32", "dtype"
    return GUESSED_INT, "int"


def _configs(module, kernel) -> tuple[list[dict], dict[str, frozenset]]:
    """The kernel's CONFIG dicts and, per label, the constexprs whose values were guessed."""
    from tritonlens.profiling.static_configs import static_configs

    configs = static_configs(module, {kernel.name})[0].get(kernel.name) or []
    if configs:  # a refusal that reads an assumed value proves nothing
        return configs, {c["label"]: frozenset(n for n, s in c["value_sources"].items() if s == "assumed")
                         for c in configs}
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
        request.asks.append(Ask(key_of(f), f.code, f.kernel, range(f.range.start.line + 1, f.range.end.line + 2),
                                 f"static: {label}" if isinstance(label, str) else None,
                                 _reads(owner, owner.src or src if owner else src, f.range),
                                 _evidence(f)))
    return request
