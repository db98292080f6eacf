"""The rule registry: every module `tlNNN_*.py` in this package is one rule.

Each module defines `RULE: RuleInfo` and `check(ctx: KernelContext) -> Iterable[Finding]`;
its page is docs/rules/TLNNN.md and its fixtures live in tests/fixtures/rules/TLNNN/.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from .base import KernelContext, RuleInfo

__all__ = ["RULES", "ALL_RULES", "RULE_MODULES", "KernelContext", "RuleInfo"]


def _discover() -> dict[str, ModuleType]:
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.name.startswith("tl"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if isinstance(rule, RuleInfo) and callable(getattr(module, "check", None)):
            found[rule.id] = module
    return found


RULE_MODULES: dict[str, ModuleType] = _discover()
RULES: dict[str, RuleInfo] = {code: m.RULE for code, m in RULE_MODULES.items()}

from .compiled_rules import COMPILE_RULES  # noqa: E402

# Static rules plus the compiler-backed ones (TL101…): what docs, listings and links cover.
ALL_RULES: dict[str, RuleInfo] = {**RULES, **COMPILE_RULES}
