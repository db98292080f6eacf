"""The kernel model's types: a kernel's parameters, loops, tl calls, assignments, launches and
resolved configurations, and the module that holds the kernels of one file.

Nodes are tree-sitter nodes of the text the model was built from (`Kernel.src`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .aliases import Aliases
from .findings import Range
from .source import Source
from .values import UNKNOWN, Value, fmt

MAX_CONFIGS = 32  # combinations of launch values × autotune configs considered per kernel

# tl functions whose call we record (the canonical short name after the `tl.` alias).
REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum", "cumsum", "cumprod", "associative_scan"}
ATOMICS = {"atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas"}


@dataclass
class Param:
    name: str
    index: int
    is_constexpr: bool
    annotation: str | None
    default: Any  # evaluated default, UNKNOWN when absent or not constant
    has_default: bool
    range: Range


@dataclass
class Loop:
    kind: str  # "range", "tl.range", "tl.static_range", "while", "for"
    var: str | None
    node: Any
    range: Range
    args: list  # argument nodes of range(...)
    parent: Loop | None = None


@dataclass
class TlCall:
    name: str  # canonical: "load", "store", "dot", "arange", "math.exp", …
    node: Any
    args: list
    kwargs: dict
    loops: tuple  # enclosing loops, outermost first
    range: Range

    def arg(self, index: int, keyword: str | None = None):
        if keyword and keyword in self.kwargs:
            return self.kwargs[keyword]
        return self.args[index] if index < len(self.args) else None


@dataclass
class Assignment:
    name: str
    value: Any  # node of the right-hand side (None for augmented/loop targets)
    node: Any  # the assignment statement node
    loops: tuple
    augmented: str | None = None  # "+=" etc.


@dataclass
class AutotuneConfig:
    index: int
    values: dict[str, Value]
    range: Range


@dataclass
class Launch:
    kernel: str
    node: Any  # the call node kernel[grid](...)
    range: Range
    grid: Any
    args: list
    kwargs: dict
    wrapper: Any  # enclosing function_definition node, or None at module level

    @property
    def line(self) -> int:
        return self.range.start.line + 1


@dataclass
class Config:
    """One resolved configuration of a kernel: a launch site, an autotune config, or both."""

    label: str  # "the launch at line 31", "autotune config #2 (line 5)", "defaults"
    values: dict[str, Value]  # constexpr params + num_warps / num_stages
    launch: Launch | None = None
    scalars: dict[str, Value] = field(default_factory=dict)  # runtime (non-constexpr) args we could resolve

    def get(self, name: str) -> Any:
        v = self.values.get(name)
        return v.value if v is not None else UNKNOWN

    def describe(self, name: str) -> str:
        v = self.values.get(name)
        if v is None:
            return f"{name}=?"
        return f"{name}={fmt(v.value)} from {v.origin or self.label}"


@dataclass
class Kernel:
    name: str
    node: Any  # function_definition
    outer: Any  # decorated_definition (or the function itself)
    range: Range
    name_range: Range
    params: list[Param]
    decorators: list[str]
    calls: list[TlCall] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    assignments: dict[str, list[Assignment]] = field(default_factory=dict)
    autotune_configs: list[AutotuneConfig] = field(default_factory=list)
    autotune_key: list[str] = field(default_factory=list)
    heuristics: dict[str, str] = field(default_factory=dict)
    launches: list[Launch] = field(default_factory=list)
    configs: list[Config] = field(default_factory=list)
    text: str = ""
    src: Source | None = None  # the text this model was built from (a cached model keeps its own)

    @property
    def autotuned(self) -> bool:
        return bool(self.autotune_configs) or any(d == "autotune" for d in self.decorators)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def signature(self) -> str:
        parts = []
        for p in self.params:
            s = p.name + (f": {p.annotation}" if p.annotation else "")
            if p.has_default:
                s += f"={fmt(p.default)}"
            parts.append(s)
        return f"{self.name}({', '.join(parts)})"

    def calls_named(self, *names: str) -> list[TlCall]:
        return [c for c in self.calls if c.name in names]

    def call_at(self, line: int, column: int) -> TlCall | None:
        best = None
        for c in self.calls:
            r = c.range
            inside = (r.start.line, r.start.column) <= (line, column) <= (r.end.line, r.end.column)
            if inside and (best is None or (r.start.line, r.start.column) >= (best.range.start.line, best.range.start.column)):
                best = c
        return best


@dataclass
class Module:
    src: Source
    aliases: Aliases
    kernels: list[Kernel]
    functions: dict[str, Any]  # top-level plain function name → node
    constants: dict[str, list[Any]]  # module-level simple assignments name → value nodes
    memo: dict = field(default_factory=dict)  # per-analysis facts rules share (computed once a file)

    def kernel(self, name: str) -> Kernel | None:
        """The kernel `name`; of a name defined more than once, its last definition in the file."""
        return next((k for k in reversed(self.kernels) if k.name == name), None)

    def kernel_at(self, line: int, column: int | None = None) -> Kernel | None:
        for k in self.kernels:
            if k.range.start.line <= line <= k.range.end.line:
                return k
        return None
