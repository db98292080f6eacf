"""An existing @triton.autotune, read: its decorator, the literal entries of its configs, and the
constexprs it owns (those a config search of an autotuned kernel tunes)."""

from __future__ import annotations

import ast

from .config_heuristics import heuristics_keys
from .config_sites import CONFIG_OPTIONS, is_int, role, tile_like
from .edits import constexpr_params, dotted


def autotune_decorator(fn: ast.FunctionDef) -> ast.Call | None:
    return next((d for d in fn.decorator_list if isinstance(d, ast.Call)
                 and (dotted(d.func) or "").split(".")[-1] == "autotune"), None)


def existing_configs(fn: ast.FunctionDef) -> list[dict] | None:
    """The literal entries of the kernel's @triton.autotune configs ({name: int}, options included),
    None when the list is not written out (`configs=get_configs()`)."""
    dec = autotune_decorator(fn)
    if dec is None:
        return None
    kw = next((k for k in dec.keywords if k.arg == "configs"), None)
    node = kw.value if kw is not None else (dec.args[0] if dec.args else None)
    if not isinstance(node, ast.List | ast.Tuple):
        return None
    out = []
    for el in node.elts:
        if not (isinstance(el, ast.Call) and (dotted(el.func) or "").split(".")[-1] == "Config"):
            return None
        entry = {}
        table = el.args[0] if el.args else next((k.value for k in el.keywords if k.arg == "kwargs"), None)
        if isinstance(table, ast.Dict):
            entry.update({k.value: v.value for k, v in zip(table.keys, table.values)
                          if isinstance(k, ast.Constant) and is_int(v)})
        entry.update({k.arg: k.value.value for k in el.keywords if k.arg in CONFIG_OPTIONS and is_int(k.value)})
        if len(el.args) > 1 and is_int(el.args[1]):
            entry["num_warps"] = el.args[1].value
        out.append(entry)
    return out


def autotuned_params(tree: ast.Module, fn: ast.FunctionDef, launches: list) -> list[str]:
    """The tile-like constexprs an existing @triton.autotune owns: those its configs set (else those
    no launch passes), never a group size (kept from the configs) nor what a heuristic computes."""
    given = {k.arg for launch in launches for k in launch.call.keywords if k.arg}
    owned = existing_configs(fn)
    names = set().union(*owned) if owned else None
    computed = heuristics_keys(fn)
    return [p for p in constexpr_params(fn)
            if tile_like(fn, p) and p not in computed and role(p) != "group" and p not in given and (names is None or p in names)]
