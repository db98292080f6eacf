"""Launch sites (`kernel[grid](...)`) and the configurations they resolve to: the values each
constexpr, num_warps and num_stages can take per launch and per autotune config.
"""

from __future__ import annotations

import itertools
from typing import Any

from .autotune_builders import built_configs
from .kernel_body import split_arguments
from .kernel_types import MAX_CONFIGS, Config, Kernel, Launch, Module
from .source import Source, captures
from .values import UNKNOWN, Scope, Value, constants_scope, evaluate

_LAUNCH = "(call function: (subscript value: [(identifier) (call)] @k)) @launch"


def find_launches(src: Source, kernel_names: set[str], root=None) -> list[Launch]:
    """Every `kernel[grid](...)` under `root` (default: the file), with the function it sits in."""
    out = []
    if not kernel_names:
        return out
    root = src.root if root is None else root
    data = src.data[root.start_byte:root.end_byte]
    # Cheap pre-filter: a launch needs `name[`, or `name` and a wrapped launch's `)[`, somewhere in the text.
    wrapped = b")[" in data
    if not any((n + "[").encode() in data or (wrapped and n.encode() in data) for n in kernel_names):
        return out
    for n in captures(root, _LAUNCH, "launch"):
        fn = n.child_by_field_name("function")
        value = fn.child_by_field_name("value")
        kname = src.text_of(_wrapped_kernel(value))
        if kname not in kernel_names:
            continue
        subs = [c for c in fn.named_children if c != value and c.type != "comment"]
        grid = subs[0] if subs else None
        args, kwargs = split_arguments(n, src)
        wrapper = n.parent
        while wrapper is not None and wrapper.type != "function_definition":
            wrapper = wrapper.parent
        out.append(Launch(kname, n, src.range(n), grid, args, kwargs, wrapper))
    return out


def _wrapped_kernel(value):
    """The kernel a launch's subscript names: `kernel[grid]`, or a wrapper's first argument, as in
    torch's `wrap_triton(kernel)[grid](...)` (the launch torch.compile traces) or a project's own
    `launcher(kernel, traceable)[grid](...)`."""
    if value.type != "call":
        return value
    args = value.child_by_field_name("arguments")
    first = next((c for c in args.named_children if c.type != "comment"), None) if args is not None else None
    return first if first is not None and first.type == "identifier" else value


def wrapper_scope(module: Module, launch: Launch) -> Scope:
    """Names visible at a launch: the wrapper's simple assignments before it, then module constants."""
    src = module.src
    assigns: dict[str, list[tuple[Any, Any]]] = {}
    if launch.wrapper is not None:
        body = launch.wrapper.child_by_field_name("body")
        for n in captures(body, "(assignment) @a", "a") if body is not None else []:
            if n.start_byte < launch.node.start_byte:
                left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
                if left is not None and left.type == "identifier" and right is not None:
                    assigns.setdefault(src.text_of(left), []).append((n, right))
                elif left is not None and left.type in ("pattern_list", "tuple_pattern"):
                    # `BLOCK_M, BLOCK_N = 32, 64` binds element-wise; `M, N = x.shape` stays unknown.
                    targets = left.named_children
                    values = right.named_children if right is not None and right.type in ("expression_list", "tuple") else []
                    for i, item in enumerate(targets):
                        if item.type == "identifier":
                            value = values[i] if len(values) == len(targets) else None
                            assigns.setdefault(src.text_of(item), []).append((n, value))

    scope = Scope(lookup=lambda name: None)
    constants = constants_scope(module.constants, src)
    # Is an assignment directly in the wrapper's body (assignment → statement → body block)?
    # Every assignment here lies inside that block, so its grandparent is the wrapper exactly when
    # its parent's parent is the block: asked once per statement, not per name looked up.
    wrapper_body = launch.wrapper.child_by_field_name("body") if launch.wrapper is not None else None
    at_top_memo: dict = {}

    def at_top(stmt) -> bool:
        r = at_top_memo.get(stmt)
        if r is None:
            p = stmt.parent
            r = at_top_memo[stmt] = p is not None and p.parent is not None and p.parent == wrapper_body
        return r

    def lookup(name: str):
        if name in assigns:
            defs = assigns[name]
            # The last assignment at the wrapper's top level overrides earlier ones; assignments in
            # branches all remain possible.
            top = [d for d in defs if at_top(d[0])]
            chosen = defs
            if top:
                last_top = top[-1]
                chosen = [d for d in defs if d[0].start_byte >= last_top[0].start_byte]
            out = []
            scope.seen.add(name)
            scope.depth += 1
            try:
                for stmt, right in chosen:
                    line = stmt.start_point[0] + 1
                    vals = evaluate(right, src, scope) if right is not None else [UNKNOWN]
                    out.extend(Value(v, f"`{src.text_of(stmt).strip()}` at line {line}", src.range(stmt)) for v in vals)
            finally:
                scope.seen.discard(name)
                scope.depth -= 1
            return out
        return constants.lookup(name)

    scope.lookup = lookup
    return scope


def bound_arguments(k: Kernel, launch: Launch) -> dict[str, Any]:
    """{parameter name: the argument node `launch` passes for it}: positional arguments up to the
    first `*`/`**` splat (past it, positions are unknown), then keywords."""
    by_name: dict[str, Any] = {}
    for i, a in enumerate(launch.args):
        if a.type in ("list_splat", "dictionary_splat"):
            break
        if i < len(k.params):
            by_name[k.params[i].name] = a
    by_name.update(launch.kwargs)
    return by_name


def _launch_values(module: Module, k: Kernel, launch: Launch) -> dict[str, list[Value]]:
    src = module.src
    scope = wrapper_scope(module, launch)
    where = f"the launch at line {launch.line}"
    out: dict[str, list[Value]] = {}
    for name, node in bound_arguments(k, launch).items():
        vals: list[Value] = []
        found = scope.lookup(src.text_of(node)) if node.type == "identifier" else None
        if found is not None:
            vals = [Value(v.value, v.origin + f", passed at line {launch.line}", v.range) for v in found]
        else:
            vals = [Value(v, where, src.range(node)) for v in evaluate(node, src, scope)]
        out[name] = vals or [Value(UNKNOWN, where, src.range(node))]
    return out


def resolve_configs(module: Module, k: Kernel) -> list[Config]:
    """Every configuration the kernel can run with that this file lets us see."""
    bases: list[tuple[str, dict[str, list[Value]], Launch | None]] = []
    for launch in k.launches:
        bases.append((f"the launch at line {launch.line}", _launch_values(module, k, launch), launch))
    if not bases:
        bases.append(("defaults", {}, None))
    constexpr = [p for p in k.params if p.is_constexpr]
    tunes = k.autotune_configs or [None]
    if len(tunes) == 1 and tunes[0] is not None and not tunes[0].values:
        tunes = built_configs(module, k) or tunes  # `configs=make_configs()`: fold the code that builds them
    configs: list[Config] = []
    for label, vals, launch in bases:
        for tune in tunes:
            merged: dict[str, list[Value]] = {}
            for p in constexpr:
                if tune is not None and p.name in tune.values:
                    merged[p.name] = [tune.values[p.name]]
                elif p.name in vals:
                    merged[p.name] = vals[p.name]
                elif p.name in k.heuristics:
                    merged[p.name] = [Value(UNKNOWN, f"@triton.heuristics: {k.heuristics[p.name]}")]
                elif p.has_default:
                    merged[p.name] = [Value(p.default, f"the default of {p.name}", p.range)]
                else:
                    merged[p.name] = [Value(UNKNOWN, label)]
            for opt, dflt in (("num_warps", 4), ("num_stages", 3)):
                if tune is not None and opt in tune.values:
                    merged[opt] = [tune.values[opt]]
                elif opt in vals:
                    merged[opt] = vals[opt]
                else:
                    merged[opt] = [Value(dflt, f"Triton's default {opt}={dflt}")]
            scalars = {p.name: vals[p.name] for p in k.params if not p.is_constexpr and p.name in vals}
            tlabel = label if tune is None else (f"{label} with autotune config #{tune.index + 1}" if launch else f"autotune config #{tune.index + 1}")
            names = list(merged)
            for combo in itertools.product(*(merged[n] for n in names)):
                sc = {n: vs[0] for n, vs in scalars.items() if len(vs) == 1}
                configs.append(Config(tlabel, dict(zip(names, combo)), launch, sc))
                if len(configs) >= MAX_CONFIGS:
                    return configs
    return configs
