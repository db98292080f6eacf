"""Autotune configs built by code of the file rather than written as a list literal:
`@triton.autotune(configs=scale_configs(), ...)` where `scale_configs()` loops over block sizes
and appends `triton.Config(...)`, a module constant holding such a list, or a comprehension.

Nothing is imported or run: host_fold.py folds the code from the text, within a step budget. Code
it cannot fold (an import, a call it does not know, a `while`, a value it cannot read) gives up on
the whole list: a partial list would hide configs the autotuner really tries.
"""

from __future__ import annotations

from .host_fold import Fold, FoldedConfig, GiveUp, Jump
from .kernel_body import decorator_kind
from .kernel_types import AutotuneConfig, Kernel, Module
from .values import Value


def configs_node(module: Module, k: Kernel):
    """The `configs=` argument of the kernel's @triton.autotune, or None."""
    outer = k.outer
    for dec in (c for c in (outer.named_children if outer is not None else []) if c.type == "decorator"):
        kind, node = decorator_kind(dec, module.src, module.aliases)
        if kind != "autotune" or node is None:
            continue
        args = node.child_by_field_name("arguments")
        kids = [a for a in (args.named_children if args is not None else []) if a.type != "comment"]
        for a in kids:
            if a.type == "keyword_argument" and module.src.text_of(a.child_by_field_name("name")) == "configs":
                return a.child_by_field_name("value")
        positional = [a for a in kids if a.type != "keyword_argument"]
        return positional[0] if positional else None
    return None


def built_configs(module: Module, k: Kernel) -> list[AutotuneConfig] | None:
    """The kernel's autotune configs folded from the code that builds them, or None when there is
    no such code or it cannot be folded."""
    node = configs_node(module, k)
    if node is None or node.type in ("list", "tuple"):
        return None  # a literal list: kernel_body.py reads it
    src = module.src
    try:
        value = Fold(module).expr(node, {})
    except (GiveUp, Jump, RecursionError):
        return None
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(c, FoldedConfig) for c in value):
        return None
    by = src.text_of(node)
    out = []
    for i, c in enumerate(value):
        origin = f"autotune config #{i + 1} (built by `{by}`, line {c.node.start_point[0] + 1})"
        rng = src.range(c.node)
        out.append(AutotuneConfig(i, {n: Value(v, origin, rng) for n, v in c.values.items()}, rng))
    return out
