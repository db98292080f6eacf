"""Where a kernel's configuration lives, seen from its launch sites: the text an edit must change to
launch it with another block size, num_warps or num_stages.

A value reaches the launch, by keyword or by position, as
- a literal (`BLOCK=64`), a local (`BLOCK = 64` above the launch), the wrapper's default parameter
  (`def fwd(x, BLOCK=1024)`), or a module constant: the literal itself is edited;
- a `triton.Config` object (`**cfg.kwargs`, `num_warps=cfg.num_warps`): the Config's own entry;
- nothing, the kernel's default (`BLOCK: tl.constexpr = 128`) or Triton's (num_warps): the launch
  gets the keyword;
- a computation (`BLOCK = min(triton.next_power_of_2(n), 4096)`) where any block is correct (the
  kernel loops over it, or the grid divides by it): its literal cap is edited, an uncapped
  computation gets one (`min(..., 1024)`). In a kernel that takes the row in one block the
  computation is a correctness requirement, left alone;
- a `@triton.heuristics` lambda: the same, on the lambda's body (config_heuristics.py);
- num_warps / num_stages the wrapper computes (`4 if BLOCK < 2048 else 8`, `calculate_settings`):
  the candidate pins its value at the call.

Only integer constexprs that size a tile or step a loop are knobs (sizes_tile): bools, floats,
dtypes, flags by name (HAS_*, IS_*, USE_*, *_PASS), flags by use (`if AFFINE:`, also in a helper
it is handed to) and flags a heuristic computes never are; a launch value that is a bool (a
literal, a comparison, wherever it is set) is never a size. A knob that cannot move says why.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .config_grid import floor_divided, named_divisors, opaque_grid
from .config_heuristics import heuristic_body, heuristics_keys
from .edits import Lines, dict_entry, dotted, local_assignment, local_literal

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
    override: bool = False  # the wrapper computes it (num_warps=warps): a candidate pins its own at the call
    whole_tiles: bool = False  # a grid floors a size by it (D // BLOCK): values must divide the current one

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


def is_int(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool)


def tile_like(fn: ast.FunctionDef, name: str) -> bool:
    """A constexpr a config search may set: not a flag by name, not bool-defaulted, not a dtype
    annotation. Its launch value is checked apart (an int); what a @triton.heuristics computes,
    apart too (config_heuristics.py)."""
    if _FLAG_NAME.search(name.upper()):
        return False
    args = fn.args.args
    defaults = dict(zip([a.arg for a in args[len(args) - len(fn.args.defaults):]], fn.args.defaults))
    default = defaults.get(name)
    return (default is None or is_int(default)) and not used_as_truth(fn, name)


def used_as_truth(fn: ast.FunctionDef, name: str) -> bool:
    """`if AFFINE:`, `AFFINE and COMPUTE_DW`, `not AFFINE`, `a if AFFINE else b`: a flag's uses. A
    size is compared (`if BLOCK_M == 1:`), never tested for truth, so such a constexpr is no knob
    whatever value (`True`, `1`) a launch passes it."""
    for n in ast.walk(fn):
        if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            tests = [n.test]
        elif isinstance(n, ast.BoolOp):
            tests = n.values
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            tests = [n.operand]
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in tests):
            return True
    return False


# calls whose arguments size a tile or step a loop: a constexpr used nowhere like this (a head
# count, a row length the kernel only compares against) is no knob
_TILE_CALLS = {"arange", "zeros", "full", "range", "static_range", "reshape", "view", "broadcast_to",
               "make_block_ptr", "make_tensor_descriptor", "multiple_of", "max_contiguous"}


def sizes_tile(fn: ast.FunctionDef, name: str, tree: ast.Module | None = None, depth: int = 0) -> bool:
    """Whether constexpr `name` sizes a tile or steps a loop in the kernel, or is handed to a
    function of the kernel's own that does (a @jit helper of `tree` is read as the kernel is; one
    this cannot read may size its tiles with it)."""
    for n in ast.walk(fn):
        if not isinstance(n, ast.Call):
            continue
        callee = dotted(n.func) or ""
        last = callee.split(".")[-1]
        args = list(n.args) + [k.value for k in n.keywords]
        if last in ("range", "static_range"):
            args = n.args[2:3]
        elif last not in _TILE_CALLS:
            # a helper of the kernel's own given the name itself; tl.where(x < BLOCK, ...),
            # tanh(x / SOFTCAP): a use, not a size
            if "." not in callee and any(isinstance(a, ast.Name) and a.id == name for a in args):
                if _helper_sizes_tile(n, name, tree, depth):
                    return True
            continue
        if any(isinstance(x, ast.Name) and x.id == name for a in args for x in ast.walk(a)):
            return True
    return False


def _helper_sizes_tile(call: ast.Call, name: str, tree: ast.Module | None, depth: int) -> bool:
    """Whether the helper `call` hands `name` to sizes a tile with it (its parameter is no flag)."""
    helper = None
    if tree is not None and depth < 3 and isinstance(call.func, ast.Name):
        helper = next((d for d in tree.body if isinstance(d, ast.FunctionDef) and d.name == call.func.id), None)
    if helper is None:
        return True  # not readable here: it may size its tiles with it
    params = [a.arg for a in helper.args.args]
    given = [params[i] for i, a in enumerate(call.args[:len(params)]) if isinstance(a, ast.Name) and a.id == name]
    given += [k.arg for k in call.keywords if isinstance(k.value, ast.Name) and k.value.id == name and k.arg]
    return any(not used_as_truth(helper, p) and sizes_tile(helper, p, tree, depth + 1) for p in given)


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


def truth_value(expr) -> bool:
    """`w is not None`, `a and b`, `not a`, `bool(w)`: an expression whose value is a bool."""
    if isinstance(expr, (ast.Compare, ast.BoolOp)) or (isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not)):
        return True
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "bool"


@dataclass
class Found:
    site: Site | None = None  # None: no editable place
    current: int | None = None
    capped: bool = False
    from_config: bool = False
    why: str = ""  # no site: why the value cannot be moved ("" for a value that is no size at all)


COMPUTED = "computed from the sizes, a correctness requirement"


def locate(expr, fn, tree: ast.Module, lines: Lines, before: int, free: bool, depth: int = 0) -> Found:
    """Where the value of `expr` (a launch argument's value) can be edited. `free`: any block is
    correct (the kernel loops over it, or the grid divides by it), so a computed size can be capped."""
    if is_int(expr):
        return Found(Site("lit", lines.span(expr)), expr.value)
    if depth > 3:
        return Found(why=COMPUTED)
    if isinstance(expr, ast.Constant) or truth_value(expr):
        return Found()  # a bool, a float, a string, a comparison: not a size
    if isinstance(expr, ast.Name):
        lit = local_literal(fn, expr.id, before)
        if lit is not None:
            # `affine = False` is an int to Python and never a size
            return Found(Site("lit", lines.span(lit)), lit.value) if is_int(lit) else Found()
        assign = local_assignment(fn, expr.id, before)
        if assign is not None:
            return _computed(assign.value, fn, tree, lines, assign.lineno, free, depth)
        if fn is not None and any(isinstance(t, ast.Tuple) and any(isinstance(e, ast.Name) and e.id == expr.id
                                                                   for e in t.elts)
                                  for n in ast.walk(fn) if isinstance(n, ast.Assign) for t in n.targets):
            return Found(why="unpacked from a value the wrapper computes")  # BLOCK, warps = settings(n)
        if fn is not None:
            args = fn.args.args + fn.args.kwonlyargs
            defaults = dict(zip([a.arg for a in fn.args.args[len(fn.args.args) - len(fn.args.defaults):]],
                                fn.args.defaults))
            defaults.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None})
            if expr.id in defaults:
                return locate(defaults[expr.id], fn, tree, lines, before, free, depth + 1)
            if any(a.arg == expr.id for a in args):
                return Found(why="passed in by the wrapper's caller")
        assign = _module_assignment(tree, expr.id)
        if assign is not None:
            return locate(assign.value, None, tree, lines, assign.lineno, free, depth + 1)
        return Found()
    if isinstance(expr, ast.Attribute) and expr.attr in CONFIG_OPTIONS:
        call = _config_call(expr.value, fn, tree, before)
        value = _config_entry(call, expr.attr) if call is not None else None
        if value is not None:
            got = locate(value, fn, tree, lines, before, free, depth + 1)
            got.from_config = True
            return got
    if (isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "kwargs"
            and isinstance(expr.slice, ast.Constant)):
        call = _config_call(expr.value.value, fn, tree, before)
        value = _config_entry(call, expr.slice.value) if call is not None else None
        if value is not None:
            got = locate(value, fn, tree, lines, before, free, depth + 1)
            got.from_config = True
            return got
    if isinstance(expr, ast.Attribute) and (dotted(expr) or "").split(".")[0] in ("tl", "torch", "triton"):
        return Found()  # tl.float16: a dtype, not a size
    if isinstance(expr, ast.Call):
        return _computed(expr, fn, tree, lines, before, free, depth)
    return Found(why=COMPUTED)


def _computed(value, fn, tree, lines, line, free, depth) -> Found:
    if not isinstance(value, ast.Call):
        return locate(value, fn, tree, lines, line, free, depth + 1)
    if not free:
        # the kernel takes the row in one block: the size is what makes it correct, and harness
        # shapes smaller than a lowered cap would not show the rows it no longer covers
        return Found(why=COMPUTED)
    name = (dotted(value.func) or "").split(".")[-1]
    if name == "min" and len(value.args) == 2 and not value.keywords:
        cap = next((a for a in value.args if is_int(a)), None)
        if cap is not None:  # a literal cap on a computed size: the cap is the knob
            return Found(Site("lit", lines.span(cap)), cap.value, capped=True)
    if name in ("next_power_of_2", "cdiv", "max"):
        # any block is correct here, so a cap is an edit
        return Found(Site("cap", lines.span(value)), None, capped=True)
    return Found(why=COMPUTED)


def launch_value(call: ast.Call, name: str, kernel: ast.FunctionDef, fn, tree: ast.Module):
    """The expression a launch gives `name`: its keyword, its position among the kernel's
    parameters, or an entry of a `**cfg.kwargs` / `**{...}` it unpacks. None when it gives none."""
    kw = next((k for k in call.keywords if k.arg == name), None)
    if kw is not None:
        return kw.value
    params = [a.arg for a in kernel.args.args]
    at = params.index(name) if name in params else -1
    if 0 <= at < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[:at + 1]):
        return call.args[at]
    for k in call.keywords:
        if k.arg is not None:
            continue
        inner = k.value
        if isinstance(inner, ast.Name):  # **kernel_args: the wrapper's own dict, and what it stores in it
            value = dict_entry(fn, inner.id, name, call.lineno)
            if value is not None:
                return value
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


def looped_params(fn: ast.FunctionDef) -> set[str]:
    """Constexprs the kernel loops over (a range's step): any value of them covers the work."""
    return {a.id for n in ast.walk(fn) if isinstance(n, ast.For) and isinstance(n.iter, ast.Call)
            for a in n.iter.args[2:3] if isinstance(a, ast.Name)}


def find_knobs(tree: ast.Module, fn: ast.FunctionDef, launches: list, consts: list[str], lines: Lines,
               loops: bool) -> tuple[dict[str, Knob], dict[str, str]]:
    """({param: Knob} reachable at every launch, {tile-like constexpr: why it stays where it is}).

    A block the grid may divide by where this cannot see (a grid passed in, or built by another
    function) is left as it is: moving it alone would launch too few programs."""
    knobs: dict[str, Knob] = {}
    unmovable: dict[str, str] = {}
    looped = looped_params(fn)
    by_heuristic = heuristics_keys(fn)
    opaque = next((why for why in (opaque_grid(site, tree) for site in launches) if why), None)
    divided = [named_divisors(site) for site in launches]
    sizes = [c for c in consts if tile_like(fn, c) and (role(c) == "group" or sizes_tile(fn, c, tree))]
    for name in sizes + list(LAUNCH_OPTIONS):
        option = name in LAUNCH_OPTIONS
        free = loops or name in looped
        sites, current, capped, from_config, override, why = [], None, False, False, False, ""
        if name in by_heuristic:
            body = heuristic_body(fn, name)
            if body is None:
                continue  # a flag: never a knob
            got = locate(body, None, tree, lines, body.lineno, free or all(name in d for d in divided))
            if got.site is None:
                unmovable[name] = f"{got.why or 'not a size'} (@triton.heuristics)"
                continue
            sites, current, capped = [got.site], got.current, got.capped
        for launch, div in zip(launches, divided):
            if name in by_heuristic:
                break
            expr = launch_value(launch.call, name, fn, launch.function, tree)
            if expr is None:
                default = None if option else _kernel_default(fn, name, launch.call)
                if option or default is not None:  # Triton's or the kernel's default: the launch can name another
                    sites.append(Site("add", call=launch.call))
                    current = default if default is not None else current
                    continue
                sites = []
                break
            got = locate(expr, launch.function, tree, lines, launch.call.lineno,
                         free or (isinstance(expr, ast.Name) and expr.id in div))
            if got.site is None and option and any(k.value is expr for k in launch.call.keywords):
                # num_warps the wrapper computes: the candidate pins its own at the call
                got, override = Found(Site("lit", lines.span(expr))), True
            if got.site is None:
                sites, why = [], got.why
                break
            if got.site.span not in [s.span for s in sites if s.span is not None]:
                sites.append(got.site)
            current = got.current if got.current is not None else current
            capped |= got.capped
            from_config |= got.from_config
        knob_role = {"num_warps": "warps", "num_stages": "stages"}.get(name, role(name))
        if sites and opaque and knob_role in ("M", "N", "K", "block") and name not in looped:
            unmovable[name] = opaque
        elif sites:
            knobs[name] = Knob(name, knob_role, sites, current, capped, from_config, override=override,
                               whole_tiles=any(name in floor_divided(site) for site in launches))
        elif why and not option:
            unmovable[name] = why
    return knobs, unmovable


def _kernel_default(fn: ast.FunctionDef, name: str, call: ast.Call) -> int | None:
    """The int default of kernel parameter `name`, where `call` does not pass it by position."""
    params = [a.arg for a in fn.args.args]
    first_default = len(params) - len(fn.args.defaults)
    at = params.index(name) if name in params else -1
    if at < first_default or len(call.args) > at:
        return None
    default = fn.args.defaults[at - first_default]
    return default.value if is_int(default) else None
