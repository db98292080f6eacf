"""Where a kernel's configuration lives, seen from its launch sites: the text an edit must change to
launch it with another block size, num_warps or num_stages.

A value reaches the launch keyword as
- a literal (`BLOCK=64`), a local (`BLOCK = 64` above the launch), the wrapper's default parameter
  (`def fwd(x, BLOCK=1024)`), or a module constant: the literal itself is edited;
- a `triton.Config` object (`**cfg.kwargs`, `num_warps=cfg.num_warps`): the Config's own entry;
- nothing, the kernel's default (`BLOCK: tl.constexpr = 128`) or Triton's (num_warps): the launch
  gets the keyword;
- a computation (`BLOCK = min(triton.next_power_of_2(n), 4096)`) in a kernel that loops over the
  block: its literal cap is edited, an uncapped computation gets one (`min(..., 1024)`). In a
  kernel that takes the row in one block the computation is a correctness requirement, left alone.

Only integer tile-like constexprs are knobs: bools, dtypes, flags by name (HAS_*, IS_*, USE_*,
*_PASS) and what a `@triton.heuristics` computes never are.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .edits import Lines, constexpr_params, dotted, local_assignment, local_literal

LAUNCH_OPTIONS = ("num_warps", "num_stages")
# what every triton.Config sets whether it names it or not: a launch passing one of these under
# @triton.autotune gets it twice
CONFIG_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
_FLAG_NAME = re.compile(r"^(HAS|IS|USE|ENABLE|EVEN|NO)_|_PASS$|DTYPE|_TYPE$|^ACTIVATION")


@dataclass
class Site:
    kind: str  # "lit": replace the literal at `span` | "add": add the keyword to `call` | "cap": wrap `span` in min()
    span: tuple[int, int] | None = None
    call: ast.Call | None = None


@dataclass
class Knob:
    param: str  # constexpr name, or "num_warps" / "num_stages"
    role: str  # "M" | "N" | "K" | "block" | "group" | "warps" | "stages"
    sites: list[Site] = field(default_factory=list)
    current: int | None = None
    capped: bool = False  # the value is a cap on a computed size, not the size itself
    from_config: bool = False  # lives in a triton.Config object the launch unpacks
    grid: list = field(default_factory=list)  # config_grid.Divisor: grid literals that move with it
    pinned: bool = False  # a grid literal may be its size, and may be another knob's: left as it is

    @property
    def autotunable(self) -> bool:
        """An @triton.autotune can take it over: its launch keyword can simply go."""
        return not self.capped and not self.from_config


def role(name: str) -> str:
    up = name.upper()
    if "GROUP" in up:
        return "group"
    for suffix, r in (("_M", "M"), ("_N", "N"), ("_K", "K")):
        if up.endswith(suffix):
            return r
    return "block"


def _is_int(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool)


def heuristics_keys(fn: ast.FunctionDef) -> set[str]:
    """The constexprs a @triton.heuristics({...}) decorator computes."""
    keys = set()
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and (dotted(d.func) or "").split(".")[-1] == "heuristics":
            for arg in list(d.args) + [k.value for k in d.keywords if k.arg == "values"]:
                if isinstance(arg, ast.Dict):
                    keys |= {k.value for k in arg.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return keys


def tile_like(fn: ast.FunctionDef, name: str) -> bool:
    """A constexpr a config search may set: not a flag by name, not bool-defaulted, not a dtype
    annotation, not computed by @triton.heuristics. Its launch value is checked apart (an int)."""
    if _FLAG_NAME.search(name.upper()) or name in heuristics_keys(fn):
        return False
    args = fn.args.args
    defaults = dict(zip([a.arg for a in args[len(args) - len(fn.args.defaults):]], fn.args.defaults))
    default = defaults.get(name)
    return default is None or _is_int(default)


def _config_call(node, fn, tree, before: int) -> ast.Call | None:
    """`cfg` → its `triton.Config({...}, ...)` call (assigned in `fn` before `before`, or at module level)."""
    if isinstance(node, ast.Name):
        assign = local_assignment(fn, node.id, before) or _module_assignment(tree, node.id)
        node = assign.value if assign is not None else None
    if isinstance(node, ast.Call) and (dotted(node.func) or "").split(".")[-1] == "Config":
        return node
    return None


def _module_assignment(tree: ast.Module, name: str) -> ast.Assign | None:
    found = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            found = stmt
    return found


def _config_entry(call: ast.Call, name: str):
    """The value node `name` has in a triton.Config call (its dict, or a keyword for the options)."""
    if name in CONFIG_OPTIONS:
        return next((k.value for k in call.keywords if k.arg == name), None)
    table = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "kwargs"), None)
    if isinstance(table, ast.Dict):
        for k, v in zip(table.keys, table.values):
            if isinstance(k, ast.Constant) and k.value == name:
                return v
    return None


@dataclass
class Found:
    site: Site | None = None  # None: no editable place
    current: int | None = None
    capped: bool = False
    from_config: bool = False
    computed: bool = False  # a value computed in the wrapper that no edit can reach


def locate(expr, fn, tree: ast.Module, lines: Lines, before: int, loops: bool, depth: int = 0) -> Found:
    """Where the value of `expr` (a launch keyword's value) can be edited."""
    if _is_int(expr):
        return Found(Site("lit", lines.span(expr)), expr.value)
    if depth > 3:
        return Found(computed=True)
    if isinstance(expr, ast.Constant):
        return Found()  # a bool, a string: not a size
    if isinstance(expr, ast.Name):
        lit = local_literal(fn, expr.id, before)
        if lit is not None:
            return Found(Site("lit", lines.span(lit)), lit.value)
        assign = local_assignment(fn, expr.id, before)
        if assign is not None:
            return _computed(assign.value, fn, tree, lines, assign.lineno, loops, depth)
        if fn is not None:
            args = fn.args.args + fn.args.kwonlyargs
            defaults = dict(zip([a.arg for a in fn.args.args[len(fn.args.args) - len(fn.args.defaults):]],
                                fn.args.defaults))
            defaults.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None})
            if expr.id in defaults:
                return locate(defaults[expr.id], fn, tree, lines, before, loops, depth + 1)
            if any(a.arg == expr.id for a in args):
                return Found(computed=True)  # the caller decides it
        assign = _module_assignment(tree, expr.id)
        if assign is not None:
            return locate(assign.value, None, tree, lines, assign.lineno, loops, depth + 1)
        return Found()
    if isinstance(expr, ast.Attribute) and expr.attr in CONFIG_OPTIONS:
        call = _config_call(expr.value, fn, tree, before)
        value = _config_entry(call, expr.attr) if call is not None else None
        if value is not None:
            got = locate(value, fn, tree, lines, before, loops, depth + 1)
            got.from_config = True
            return got
    if (isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "kwargs"
            and isinstance(expr.slice, ast.Constant)):
        call = _config_call(expr.value.value, fn, tree, before)
        value = _config_entry(call, expr.slice.value) if call is not None else None
        if value is not None:
            got = locate(value, fn, tree, lines, before, loops, depth + 1)
            got.from_config = True
            return got
    if isinstance(expr, ast.Attribute) and (dotted(expr) or "").split(".")[0] in ("tl", "torch", "triton"):
        return Found()  # tl.float16: a dtype, not a size
    return Found(computed=True)


def _computed(value, fn, tree, lines, line, loops, depth) -> Found:
    if not isinstance(value, ast.Call):
        return locate(value, fn, tree, lines, line, loops, depth + 1)
    if not loops:
        # the kernel takes the row in one block: the size is what makes it correct, and harness
        # shapes smaller than a lowered cap would not show the rows it no longer covers
        return Found(computed=True)
    name = (dotted(value.func) or "").split(".")[-1]
    if name == "min" and len(value.args) == 2 and not value.keywords:
        cap = next((a for a in value.args if _is_int(a)), None)
        if cap is not None:  # a literal cap on a computed size: the cap is the knob
            return Found(Site("lit", lines.span(cap)), cap.value, capped=True)
    if name in ("next_power_of_2", "cdiv", "max"):
        # the kernel walks the row in BLOCK chunks: any power of two is correct, so a cap is an edit
        return Found(Site("cap", lines.span(value)), None, capped=True)
    return Found(computed=True)


def keyword_value(call: ast.Call, name: str, fn, tree: ast.Module):
    """The expression a launch gives `name`: its keyword, or an entry of a `**cfg.kwargs` /
    `**{...}` it unpacks. None when it gives none."""
    kw = next((k for k in call.keywords if k.arg == name), None)
    if kw is not None:
        return kw.value
    for k in call.keywords:
        if k.arg is not None:
            continue
        inner = k.value
        if isinstance(inner, ast.Dict):
            for key, value in zip(inner.keys, inner.values):
                if isinstance(key, ast.Constant) and key.value == name:
                    return value
        if isinstance(inner, ast.Attribute) and inner.attr == "kwargs":
            cfg = _config_call(inner.value, fn, tree, call.lineno)
            value = _config_entry(cfg, name) if cfg is not None else None
            if value is not None:
                return ast.Subscript(value=inner, slice=ast.Constant(name), lineno=call.lineno,
                                     col_offset=call.col_offset)
    return None


def find_knobs(tree: ast.Module, fn: ast.FunctionDef, launches: list, consts: list[str], lines: Lines,
               loops: bool) -> tuple[dict[str, Knob], list[str]]:
    """({param: Knob} reachable at every launch, [tile-like constexprs computed where no edit reaches])."""
    knobs: dict[str, Knob] = {}
    computed: list[str] = []
    for name in [c for c in consts if tile_like(fn, c)] + list(LAUNCH_OPTIONS):
        option = name in LAUNCH_OPTIONS
        sites, current, capped, from_config, reachable = [], None, False, False, True
        for launch in launches:
            expr = keyword_value(launch.call, name, launch.function, tree)
            if expr is None:
                if option:
                    sites.append(Site("add", call=launch.call))
                    continue
                default = _kernel_default(fn, name, launch.call)
                if default is not None:  # the kernel's default: the launch can name another
                    sites.append(Site("add", call=launch.call))
                    current = default
                    continue
                reachable = False
                break
            got = locate(expr, launch.function, tree, lines, launch.call.lineno, loops)
            if got.site is None:
                reachable = False
                if got.computed and not option:
                    computed.append(name)
                break
            if got.site.span not in [s.span for s in sites if s.span is not None]:
                sites.append(got.site)
            current = got.current if got.current is not None else current
            capped |= got.capped
            from_config |= got.from_config
        if reachable and sites:
            knobs[name] = Knob(name, {"num_warps": "warps", "num_stages": "stages"}.get(name, role(name)),
                               sites, current, capped, from_config)
    return knobs, list(dict.fromkeys(computed))


def _kernel_default(fn: ast.FunctionDef, name: str, call: ast.Call) -> int | None:
    """The int default of kernel parameter `name`, where `call` does not pass it by position."""
    params = [a.arg for a in fn.args.args]
    first_default = len(params) - len(fn.args.defaults)
    at = params.index(name) if name in params else -1
    if at < first_default or len(call.args) > at:
        return None
    default = fn.args.defaults[at - first_default]
    return default.value if _is_int(default) else None


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
                          if isinstance(k, ast.Constant) and _is_int(v)})
        entry.update({k.arg: k.value.value for k in el.keywords if k.arg in CONFIG_OPTIONS and _is_int(k.value)})
        if len(el.args) > 1 and _is_int(el.args[1]):
            entry["num_warps"] = el.args[1].value
        out.append(entry)
    return out


def autotuned_params(tree: ast.Module, fn: ast.FunctionDef, launches: list) -> list[str]:
    """The tile-like constexprs an existing @triton.autotune owns: those its configs set (else those
    no launch passes), never a group size (kept from the configs) nor what a heuristic computes."""
    given = {k.arg for launch in launches for k in launch.call.keywords if k.arg}
    owned = existing_configs(fn)
    names = set().union(*owned) if owned else None
    return [p for p in constexpr_params(fn)
            if tile_like(fn, p) and role(p) != "group" and p not in given and (names is None or p in names)]
