"""Building one kernel's model from its tree-sitter definition: parameters, decorators
(autotune configs, heuristics), loops and assignments statement by statement, and every tl call.
"""

from __future__ import annotations

from typing import Any

from .aliases import Aliases
from .kernel_types import Assignment, AutotuneConfig, Kernel, Loop, Param, TlCall
from .source import Source, captures, dotted_name
from .values import UNKNOWN, Scope, Value, evaluate


def decorator_kind(dec, src: Source, al: Aliases) -> tuple[str | None, Any]:
    expr = dec.named_children[0] if dec.named_children else None
    call = None
    if expr is not None and expr.type == "call":
        call = expr
        expr = expr.child_by_field_name("function")
    return al.triton_attr(dotted_name(expr, src)) if expr is not None else None, call



def build_kernel(src: Source, al: Aliases, outer, fn, decorators, name: str) -> Kernel:
    params = _params(fn, src)
    decos = []
    k = Kernel(
        name=name, node=fn, outer=outer, range=src.range(outer), name_range=src.range(fn.child_by_field_name("name")),
        params=params, decorators=decos, text=src.text_of(outer), src=src,
    )
    for d in decorators:
        kind, call = decorator_kind(d, src, al)
        decos.append(kind or src.text_of(d))
        if kind == "autotune" and call is not None:
            _read_autotune(k, call, src, al)
        elif kind == "heuristics" and call is not None:
            args = call.child_by_field_name("arguments")
            for a in (args.named_children if args else []):
                target = a.child_by_field_name("value") if a.type == "keyword_argument" else a
                if target is not None and target.type == "dictionary":
                    for pair in target.named_children:
                        if pair.type == "pair":
                            key = evaluate(pair.child_by_field_name("key"), src, Scope(lambda n: None))
                            if key and isinstance(key[0], str):
                                k.heuristics[key[0]] = src.text_of(pair.child_by_field_name("value"))
    body = fn.child_by_field_name("body")
    if body is not None:
        _walk_body(k, body, src, al, ())
        nested = captures(body, "[(function_definition) (class_definition)] @d", "d")
        _collect_calls(k, body, src, al, [(d.start_byte, d.end_byte) for d in nested])
        k.loops.sort(key=lambda l: l.node.start_byte)
    return k


def _params(fn, src: Source) -> list[Param]:
    out = []
    params = fn.child_by_field_name("parameters")
    if params is None:
        return out
    index = 0
    for p in params.named_children:
        name_node, ann, default = None, None, None
        if p.type == "identifier":
            name_node = p
        elif p.type == "typed_parameter":
            name_node = next((c for c in p.named_children if c.type == "identifier"), None)
            ann = p.child_by_field_name("type")
        elif p.type == "default_parameter":
            name_node, default = p.child_by_field_name("name"), p.child_by_field_name("value")
        elif p.type == "typed_default_parameter":
            name_node, ann, default = p.child_by_field_name("name"), p.child_by_field_name("type"), p.child_by_field_name("value")
        else:
            continue  # *args, **kwargs, separators: not kernel parameters Triton accepts
        if name_node is None:
            continue
        ann_text = src.text_of(ann).strip() if ann is not None else None
        constexpr = bool(ann_text) and ann_text.strip("'\"").split(".")[-1] == "constexpr"
        default_val = evaluate(default, src, Scope(lambda n: None))[0] if default is not None else UNKNOWN
        out.append(Param(src.text_of(name_node), index, constexpr, ann_text, default_val, default is not None, src.range(p)))
        index += 1
    return out


def _read_autotune(k: Kernel, call, src: Source, al: Aliases) -> None:
    args = call.child_by_field_name("arguments")
    if args is None:
        return
    configs_node, key_node = None, None
    positional = [a for a in args.named_children if a.type != "keyword_argument" and a.type != "comment"]
    for a in args.named_children:
        if a.type == "keyword_argument":
            n = src.text_of(a.child_by_field_name("name"))
            if n == "configs":
                configs_node = a.child_by_field_name("value")
            elif n == "key":
                key_node = a.child_by_field_name("value")
    if configs_node is None and positional:
        configs_node = positional[0]
    if key_node is None and len(positional) > 1:
        key_node = positional[1]
    if key_node is not None and key_node.type in ("list", "tuple"):
        for item in key_node.named_children:
            v = evaluate(item, src, Scope(lambda n: None))[0]
            if isinstance(v, str):
                k.autotune_key.append(v)
    if configs_node is None:
        return
    if configs_node.type in ("list", "tuple"):
        items = [c for c in configs_node.named_children if c.type != "comment"]
    else:
        items = []  # a list built elsewhere (a comprehension, a variable): values stay unknown
        k.autotune_configs.append(AutotuneConfig(0, {}, src.range(configs_node)))
        return
    for i, item in enumerate(items):
        if item.type != "call":
            continue
        fname = al.triton_attr(dotted_name(item.child_by_field_name("function"), src))
        if fname != "Config":
            continue
        vals: dict[str, Value] = {}
        origin = f"autotune config #{i + 1} (line {item.start_point[0] + 1})"
        cargs = item.child_by_field_name("arguments")
        for a in (cargs.named_children if cargs else []):
            if a.type == "dictionary":
                for pair in a.named_children:
                    if pair.type != "pair":
                        continue
                    key = evaluate(pair.child_by_field_name("key"), src, Scope(lambda n: None))[0]
                    valnode = pair.child_by_field_name("value")
                    if isinstance(key, str):
                        v = evaluate(valnode, src, Scope(lambda n: None))
                        vals[key] = Value(v[0] if len(v) == 1 else UNKNOWN, origin, src.range(valnode))
            elif a.type == "keyword_argument":
                name = src.text_of(a.child_by_field_name("name"))
                if name in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
                    valnode = a.child_by_field_name("value")
                    v = evaluate(valnode, src, Scope(lambda n: None))
                    vals[name] = Value(v[0] if len(v) == 1 else UNKNOWN, origin, src.range(valnode))
        k.autotune_configs.append(AutotuneConfig(i, vals, src.range(item)))


def _walk_body(k: Kernel, node, src: Source, al: Aliases, loops: tuple) -> None:
    """Record loops and assignments statement by statement; tl calls are collected afterwards
    by one query (`_collect_calls`), which places them in these loops by position."""
    for child in node.named_children:
        t = child.type
        if t in ("function_definition", "class_definition", "decorated_definition"):
            continue  # nested definitions are not part of the kernel's own body
        if t == "for_statement":
            right = child.child_by_field_name("right")
            left = child.child_by_field_name("left")
            kind, rargs = "for", []
            if right is not None and right.type == "call":
                fname = dotted_name(right.child_by_field_name("function"), src)
                tlname = al.tl_function(fname)
                if fname == "range":
                    kind = "range"
                elif tlname in ("range", "static_range"):
                    kind = "tl." + tlname
                a = right.child_by_field_name("arguments")
                rargs = [x for x in (a.named_children if a else []) if x.type != "keyword_argument"]
            loop = Loop(kind, src.text_of(left) if left is not None and left.type == "identifier" else None,
                        child, src.range(child), rargs, loops[-1] if loops else None)
            k.loops.append(loop)
            if loop.var:
                k.assignments.setdefault(loop.var, []).append(Assignment(loop.var, None, child, loops + (loop,)))
            body = child.child_by_field_name("body")
            if body is not None:
                _walk_body(k, body, src, al, loops + (loop,))
            alt = child.child_by_field_name("alternative")
            if alt is not None:
                _walk_body(k, alt, src, al, loops)
        elif t == "while_statement":
            loop = Loop("while", None, child, src.range(child), [], loops[-1] if loops else None)
            k.loops.append(loop)
            body = child.child_by_field_name("body")
            if body is not None:
                _walk_body(k, body, src, al, loops + (loop,))
        elif t == "expression_statement":
            for e in child.named_children:
                if e.type in ("assignment", "augmented_assignment"):
                    _record_assignment(k, e, src, loops)
        elif t in ("if_statement", "elif_clause", "else_clause", "with_statement", "try_statement",
                   "except_clause", "finally_clause"):
            for c in child.named_children:
                if c.type in ("block", "elif_clause", "else_clause", "except_clause", "finally_clause"):
                    _walk_body(k, c, src, al, loops)
        elif t in ("block", "ERROR"):
            _walk_body(k, child, src, al, loops)


def _record_assignment(k: Kernel, e, src: Source, loops: tuple) -> None:
    left = e.child_by_field_name("left")
    right = e.child_by_field_name("right")
    aug = None
    if e.type == "augmented_assignment":
        aug = src.text_of(e.child_by_field_name("operator"))
    if left is None:
        return
    if left.type == "identifier":
        name = src.text_of(left)
        k.assignments.setdefault(name, []).append(Assignment(name, right, e, loops, aug))
    elif left.type in ("pattern_list", "tuple_pattern"):
        for item in left.named_children:
            if item.type == "identifier":
                name = src.text_of(item)
                k.assignments.setdefault(name, []).append(Assignment(name, None, e, loops, aug))


def split_arguments(call, src: Source) -> tuple[list, dict]:
    """A call's positional argument nodes and its keyword arguments (name → value node)."""
    argnode = call.child_by_field_name("arguments")
    args, kwargs = [], {}
    for a in (argnode.named_children if argnode else []):
        if a.type == "keyword_argument":
            kn = a.child_by_field_name("name")
            if kn is not None:
                kwargs[src.text_of(kn)] = a.child_by_field_name("value")
        elif a.type != "comment":
            args.append(a)
    return args, kwargs


_METHODS = ("to", "sum", "max", "min", "reshape", "trans", "permute", "broadcast_to", "expand_dims")


def _collect_calls(k: Kernel, body, src: Source, al: Aliases, skip: list) -> None:
    """Every tl call in the kernel body (nested definitions excluded), with its enclosing loops."""
    loop_bodies = []
    for loop in k.loops:
        b = loop.node.child_by_field_name("body")
        if b is not None:
            loop_bodies.append((b.start_byte, b.end_byte, loop))
        if loop.kind == "while":
            c = loop.node.child_by_field_name("condition")
            if c is not None:
                loop_bodies.append((c.start_byte, c.end_byte, loop))
    for n in captures(body, "(call) @c", "c"):
        if any(a <= n.start_byte < b for a, b in skip):
            continue
        fn = n.child_by_field_name("function")
        if fn is None:
            continue
        name = al.tl_function(dotted_name(fn, src)) if fn.type in ("attribute", "identifier") else None
        if name is None and fn.type == "attribute":
            # method forms: x.to(tl.float16), acc.sum(axis=0) are recorded by their method name
            attr = src.text_of(fn.child_by_field_name("attribute"))
            if attr in _METHODS:
                name = "." + attr
        if name is None:
            continue
        args, kwargs = split_arguments(n, src)
        enclosing = tuple(l for a, b, l in loop_bodies if a <= n.start_byte < b)
        k.calls.append(TlCall(name, n, args, kwargs, enclosing, src.range(n)))
