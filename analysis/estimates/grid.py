"""Programs per launch: the launch site's grid, evaluated with what is known at the launch (the
wrapper's assignments, the configuration's values, runtime sizes the caller gives)."""

from __future__ import annotations

from ..launches import wrapper_scope
from ..model import Config, Kernel, Launch, Module
from ..source import dotted_name, walk
from ..values import UNKNOWN, Scope, Value, binary, call, evaluate
from .pointers import unwrap


def grid_programs(kernel: Kernel, module: Module | None, config: Config | None,
                  scalars: dict[str, int] | None = None) -> int | None:
    """Programs launched by `config`'s launch site, when its grid evaluates to numbers."""
    if module is None or config is None or config.launch is None or config.launch.grid is None:
        return None
    launch = config.launch
    src = module.src
    wscope = wrapper_scope(module, launch)
    bound: dict[str, int] = {}
    # Runtime values given by the caller reach the wrapper through the names passed at the launch.
    given = {k: v.value for k, v in config.scalars.items() if v.known and isinstance(v.value, int)}
    given.update(scalars or {})
    for i, a in enumerate(launch.args):
        if i < len(kernel.params) and a.type == "identifier" and kernel.params[i].name in given:
            bound[src.text_of(a)] = given[kernel.params[i].name]
    for name, a in launch.kwargs.items():
        if a is not None and a.type == "identifier" and name in given:
            bound[src.text_of(a)] = given[name]
    meta = {k: v.value for k, v in config.values.items() if v.known}

    def lookup(name):
        if name in bound:
            return [Value(bound[name])]
        return wscope.lookup(name)

    scope = Scope(lookup=lookup)
    wscope_seen = wscope.seen
    scope.seen = wscope_seen
    grid = _resolve_grid_node(src, launch, launch.grid)
    if grid is None:
        return None
    meta_name = None
    if grid.type == "lambda":
        params = grid.child_by_field_name("parameters")
        if params is not None and params.named_children:
            meta_name = src.text_of(params.named_children[0])
        grid = unwrap(grid.child_by_field_name("body"))
    if grid is None:
        return None
    items = grid.named_children if grid.type in ("tuple", "list") else [grid]
    total = 1
    for item in items:
        v = _eval_grid(item, src, scope, meta_name, meta)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return None
        total *= v
    return total


def _resolve_grid_node(src, launch: Launch, grid):
    grid = unwrap(grid)
    if grid is None or grid.type != "identifier" or launch.wrapper is None:
        return grid
    name = src.text_of(grid)
    body = launch.wrapper.child_by_field_name("body")
    found = None
    for n in walk(body, stop_at=("function_definition", "class_definition")) if body is not None else []:
        if n.type == "assignment" and n.start_byte < launch.node.start_byte:
            left = n.child_by_field_name("left")
            if left is not None and left.type == "identifier" and src.text_of(left) == name:
                found = n.child_by_field_name("right")
    return unwrap(found)


def _eval_grid(node, src, scope, meta_name, meta):
    node = unwrap(node)
    if node is None:
        return UNKNOWN
    t = node.type
    if t == "subscript" and meta_name is not None:
        value = node.child_by_field_name("value")
        if value is not None and src.text_of(value) == meta_name:
            key = [c for c in node.named_children if c != value]
            if len(key) == 1:
                k = evaluate(key[0], src, Scope(lambda n: None))
                if len(k) == 1 and isinstance(k[0], str) and k[0] in meta:
                    return meta[k[0]]
        return UNKNOWN
    if t == "binary_operator":
        op = src.text_of(node.child_by_field_name("operator"))
        left = _eval_grid(node.child_by_field_name("left"), src, scope, meta_name, meta)
        right = _eval_grid(node.child_by_field_name("right"), src, scope, meta_name, meta)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        return binary(op, left, right)
    if t == "call":
        name = (dotted_name(node.child_by_field_name("function"), src) or "").rsplit(".", 1)[-1]
        args_node = node.child_by_field_name("arguments")
        args = [a for a in (args_node.named_children if args_node else []) if a.type != "comment"]
        if name in ("cdiv", "min", "max", "next_power_of_2", "int") and args and all(a.type != "keyword_argument" for a in args):
            return call(name, [_eval_grid(a, src, scope, meta_name, meta) for a in args])
        vals = evaluate(node, src, scope)
        return vals[0] if len(vals) == 1 else UNKNOWN
    vals = evaluate(node, src, scope)
    return vals[0] if len(vals) == 1 else UNKNOWN
