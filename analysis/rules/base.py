"""What every rule module provides and what it gets to look at.

A rule module defines `RULE = RuleInfo(...)` and `check(ctx: KernelContext) -> Iterable[Finding]`.
The context answers the questions rules share: what value an expression has in each
configuration (the shape engine's, which interprets the kernel per configuration), what an
expression depends on, where a value came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import message_text as mt
from ..findings import Applicability, Finding, Fix, Range, Related, Severity, TextEdit
from ..kernel_roles import is_device_helper
from ..model import Config, Kernel, Module, TlCall
from ..shapes import NOT_RUN, KernelShapes, infer_kernel
from ..source import captures
from ..values import LITERAL_TYPES, UNKNOWN, fmt, literal

DOCS_URL_BASE = "https://github.com/tritonlens/tritonlens/blob/main/docs/rules/"


@dataclass(frozen=True)
class RuleInfo:
    """A rule's metadata; its documentation is the docstring of the module that defines it."""

    id: str
    name: str  # short kebab-case name, e.g. "arange-not-power-of-two"
    severity: Severity
    summary: str  # one line: what it finds
    fix_title: str | None = None  # set when the rule offers a deterministic fix
    # How far its fix can be trusted, and why: required with a fix, rendered in the rule's page.
    fix_applicability: Applicability | None = None
    fix_safety: str = ""
    # Its fix changes speed, not results (num_warps, a block size, float64 to float32), so optimize
    # may time it; a correctness fix (a mask, an int64 offset) can only tie or lose a race and is
    # left to the editor's quick fix.
    fix_makes_faster: bool = False
    kind: str = "static"  # "static": decided from the source; "compile": from the compiler's output
    # In the default rule set, which runs when no rules are selected. A rule whose findings on real
    # code are mostly right but seldom worth acting on stays out: `--select TLNNN` or `ALL` runs it.
    default: bool = True
    # Why a rule is out of the default set, in a few words that `tritonlens rules` and the rule's
    # page print after "off by default": its judged precision on real code where it was judged.
    off_because: str = ""

    def __post_init__(self) -> None:
        if (self.fix_title is None) != (self.fix_applicability is None) or (self.fix_title is not None) != bool(self.fix_safety):
            raise ValueError(f"{self.id}: a fix needs fix_title, fix_applicability and fix_safety together")

    @property
    def help_uri(self) -> str:
        return DOCS_URL_BASE + f"{self.id}.md"


class KernelContext:
    """One kernel of one module, seen by one rule."""

    def __init__(self, module: Module, kernel: Kernel, rule: RuleInfo, target: str | None = None):
        self.module = module
        self.kernel = kernel
        self.rule = rule
        self.target = target  # the GPU the user targets ("H100", "sm_80", …); None = the default
        self.src = kernel.src or module.src  # a cached kernel keeps the text it was built from
        self._shapes: KernelShapes | None = None

    @property
    def device_helper(self) -> bool:
        """Whether this `@jit` function is a device helper rather than a kernel (not launched in
        the file, and it returns a value or other JIT functions call it): `kernel_roles`'
        judgement, made once per file."""
        return is_device_helper(self.module, self.kernel)

    # -- values -------------------------------------------------------------------------------

    @property
    def shapes(self) -> KernelShapes:
        """The shape engine's runs of this kernel (made once per kernel and configuration)."""
        if self._shapes is None:
            self._shapes = infer_kernel(self.module, self.kernel)
        return self._shapes

    def values(self, node, config: Config | None) -> list[Any]:
        """The value of expression `node` in `config` (None: in no particular configuration), as
        the shape engine evaluates the kernel there: [value], [UNKNOWN] when it is not known
        statically, and [] when `config` does not execute the node (a branch a constexpr rules
        out), since Triton never compiles that code in that configuration."""
        if node is None:
            return [UNKNOWN]
        if config is None and node.type in LITERAL_TYPES:
            return [literal(node, self.src)]  # no symbolic run for the common `tl.program_id(0)`
        v = self.shapes.constant_at(node, config)
        return [] if v is NOT_RUN else [v]

    def origin_of(self, node, config: Config | None) -> tuple[str, Range | None]:
        """Where the value of `node` comes from in `config`: the constexpr it names, if any."""
        names = self.names_in(node)
        if config is not None:
            for n in names:
                if n in config.values:
                    v = config.values[n]
                    return f"{n}={fmt(v.value)} from {v.origin or config.label}", v.range
        return "", None

    def value_where(self, node, config: Config | None) -> tuple[str, Range | None]:
        """origin_of for a message: 'BLOCK=100 at line 12', the line where the value is written."""
        for n in self.names_in(node) if config is not None else ():
            if n in config.values:
                v = config.values[n]
                at = f" at line {v.range.start.line + 1}" if v.range is not None else ""
                return f"{mt.clip(n, 24)}={fmt(v.value)}{at}", v.range
        return "", None

    # -- dependencies -------------------------------------------------------------------------

    def names_in(self, node) -> list[str]:
        if node is None:
            return []
        memo = self.src.memo_for("names_in")
        out = memo.get(node)
        if out is not None:
            return list(out)
        if node.type == "identifier":
            nodes = [node]
        elif node.named_child_count == 0:
            nodes = []  # a literal: no query needed
        else:
            nodes = captures(node, "(identifier) @i", "i")
        out = []
        for n in nodes:
            parent = n.parent
            if parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") == n:
                continue
            if parent is not None and parent.type == "keyword_argument" and parent.child_by_field_name("name") == n:
                continue
            t = self.src.text_of(n)
            if t not in out:
                out.append(t)
        memo[node] = tuple(out)
        return out

    def depends_on(self, node, _seen: set | None = None) -> set[str]:
        """Transitive closure of the names `node` reads through the kernel's local assignments."""
        seen = _seen if _seen is not None else set()
        out: set[str] = set()
        for n in self.names_in(node):
            if n in seen:
                continue
            seen.add(n)
            out.add(n)
            for a in self.kernel.assignments.get(n, []):
                if a.value is not None:
                    out |= self.depends_on(a.value, seen)
                elif a.node is not None and a.node.type == "for_statement":
                    out.add("<loop:" + n + ">")
                elif a.node is not None:
                    right = a.node.child_by_field_name("right")
                    out |= self.depends_on(right, seen)
        return out

    def calls_in(self, node, *names: str) -> list[TlCall]:
        """The recorded tl calls that sit inside `node` (the node itself included)."""
        out = []
        for c in self.kernel.calls:
            if c.name in names and node.start_byte <= c.node.start_byte and c.node.end_byte <= node.end_byte:
                out.append(c)
        return out

    def definition_calls(self, node, *names: str, _seen: set | None = None) -> list[TlCall]:
        """tl calls named `names` that feed `node`, directly or through local assignments."""
        seen = _seen if _seen is not None else set()
        out = list(self.calls_in(node, *names))
        for n in self.names_in(node):
            if n in seen:
                continue
            seen.add(n)
            for a in self.kernel.assignments.get(n, []):
                src_node = a.value if a.value is not None else (a.node.child_by_field_name("right") if a.node is not None and a.node.type != "for_statement" else None)
                if src_node is not None:
                    out.extend(c for c in self.definition_calls(src_node, *names, _seen=seen) if c not in out)
        return out

    # -- reporting ----------------------------------------------------------------------------

    def finding(self, range: Range, message: str, *, severity: Severity | None = None, fix: list[TextEdit] | None = None,
                fix_title: str | None = None, related: list[Related] | None = None, data: dict | None = None) -> Finding:
        """`fix_title` names what this finding's fix changes ("round BLOCK up to 64 and mask the
        tail"); the editor shows it as the quick fix. Without one, the rule's generic fix_title."""
        if fix and self.rule.fix_applicability is None:
            raise ValueError(f"{self.rule.id} offers a fix but declares no fix_title/fix_applicability")
        return Finding(
            code=self.rule.id,
            severity=severity or self.rule.severity,
            message=message,
            range=range,
            kernel=self.kernel.name,
            fix=Fix(fix_title or self.rule.fix_title, tuple(fix), self.rule.fix_applicability) if fix else None,
            related=tuple(related or ()),
            data=dict(data or {}),
        )

    def related_for(self, config: Config | None, rng: Range | None, what: str) -> list[Related]:
        if rng is None:
            if config is not None and config.launch is not None:
                return [Related(config.launch.range, f"{what}: {config.label}")]
            return []
        return [Related(rng, what)]
