"""The rule registry: every module `tlNNN_*.py` in this package is one rule.

A module defines `RULE: RuleInfo`, and its docstring is the rule's documentation (docs/rules/TLNNN.md
and `tritonlens rule TLNNN` are rendered from it by `rule_docs`). A static rule also defines
`check(ctx: KernelContext) -> Iterable[Finding]` and has fixtures in tests/fixtures/rules/TLNNN/;
a compiler-backed rule (TL101…) has no `check`: the compile job reports it.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from .base import KernelContext, RuleInfo

__all__ = ["RULES", "ALL_RULES", "RULE_MODULES", "DOC_MODULES", "COMPILE_RULES", "KernelContext", "RuleInfo"]


def _discover() -> dict[str, ModuleType]:
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.name.startswith("tl"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if isinstance(rule, RuleInfo):
            found[rule.id] = module
    return found


# Every rule's module, static and compiler-backed: where its documentation lives.
DOC_MODULES: dict[str, ModuleType] = _discover()
# The rules the analyzer runs.
RULE_MODULES: dict[str, ModuleType] = {code: m for code, m in DOC_MODULES.items() if callable(getattr(m, "check", None))}
RULES: dict[str, RuleInfo] = {code: m.RULE for code, m in RULE_MODULES.items()}
COMPILE_RULES: dict[str, RuleInfo] = {code: m.RULE for code, m in DOC_MODULES.items() if m.RULE.kind == "compile"}
# Static rules plus the compiler-backed ones (TL101…): what docs, listings and links cover.
ALL_RULES: dict[str, RuleInfo] = {**RULES, **COMPILE_RULES}


def is_selected(code: str, select=None, ignore=None) -> bool:
    """Whether rule `code` runs (or is shown) under these settings: without `select` the default set,
    with it `ALL`, ids and prefixes (`TL0`); `ignore` takes ids and prefixes away."""
    code = code.upper()
    wanted = {c.strip().upper() for c in select or () if c.strip()}
    if not wanted:
        info = ALL_RULES.get(code)
        if info is not None and not info.default:
            return False
    elif "ALL" not in wanted and not any(code.startswith(w) for w in wanted):
        return False
    return not any(code.startswith(u) for u in {c.strip().upper() for c in ignore or () if c.strip()})
