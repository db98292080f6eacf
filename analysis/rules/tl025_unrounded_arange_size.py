"""TL025 — a tensor's size reaches a `tl.arange` extent unrounded

## What it finds
A launch that passes a tensor's last dimension (a head or feature size, `d = q.shape[-1]` or
`b, h, d = q.shape`, through plain arithmetic) unrounded into a constexpr that is a `tl.arange`
extent. The message names the size and the parameter it reaches. Silent where the size is rounded
(`triton.next_power_of_2(d)`, `max(16, ...)`, any other call or lookup), is a wrapper parameter
(the caller's choice), is tested anywhere in the file for a set or a power of two
(`assert d in (64, 128)`, `d & (d - 1) == 0`, `if d not in SUPPORTED:`), has its log2 taken, or
tiles a grid (`cdiv(T, BT)`: a chunk size the code chose).

Off by default: on real code most such sizes are fixed by the model the file serves (a 128 head
dim, a 512 latent rank), or kept to powers of two by a check in a caller or another file that
the rule does not follow.

## Why
Triton lays a block out over a power-of-two number of lanes and refuses any other range
(`arange's range must be a power of 2`) when the kernel is compiled. A head size passed as it is
compiles for 64 and 128 and fails for 80, 96 or 192, the day someone runs a model with one of
those: often a backward pass, while its forward rounds the same size up. It is a warning, not an
error: the code compiles for the sizes that are powers of two.

## Example
```python
def rows(q):                         # the kernel reads tl.arange(0, D)
    tokens, heads, d = q.shape
    row_kernel[(tokens * heads,)](q, D=d)  # TL025: d reaches D unrounded
```

## Fix
Pass the next power of two and the real size, to mask with (`D=triton.next_power_of_2(d), d=d`),
and mask every load and store by the real size; or assert the sizes the kernel supports.
"""

from __future__ import annotations

import re

from .. import message_text as mt
from ..findings import Related, Severity
from ..launches import bound_arguments
from ..source import captures
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL025",
    name="unrounded-arange-size",
    severity=Severity.WARNING,
    summary="a tensor's size passed unrounded into a constexpr that is a tl.arange extent",
    default=False,
    off_because="judged 2 of 20 findings true on real code",
)


def check(ctx: KernelContext):
    yield from _unrounded_dims(ctx)


def _unrounded_dims(ctx):
    """Warnings: a launch passes a tensor's last dimension (a head or feature size, which a model
    picks freely: 80, 96, 192) unrounded into a constexpr that is a tl.arange extent."""
    k = ctx.kernel
    extents: dict[str, list] = {}
    for call in k.calls_named("arange"):
        start, end = call.arg(0, "start"), call.arg(1, "end")
        name = _scaled_name(end, ctx.src) if start is not None and ctx.src.text_of(start) == "0" else None
        p = k.param(name) if name else None
        if p is not None and p.is_constexpr and p.name not in k.heuristics:
            extents.setdefault(p.name, []).append((call, end))
    for launch in [la for la in k.launches if la.wrapper is not None] if extents else ():
        landed = bound_arguments(k, launch)
        assigns = _wrapper_assignments(ctx.src, launch) if extents.keys() & landed.keys() else {}
        for name, arg in landed.items():
            if name not in extents or arg is None:
                continue
            configs = [c for c in k.configs if c.launch is launch]
            live = [(c, e) for c, e in extents[name] if not configs or any(ctx.values(e, cf) for cf in configs)]
            if not live:
                continue  # every arange it sizes sits in a branch this launch does not take
            chain: list[str] = []
            dim = _last_dim(arg, ctx.src, assigns, chain, 0)
            if dim is None or _guarded(ctx.src, launch.wrapper, chain + [dim[0], ctx.src.text_of(arg)]):
                continue
            yield _unrounded_finding(ctx, launch, name, arg, dim, live[0][0])


def _unrounded_finding(ctx, launch, name, arg, dim, call):
    text, (origin, at) = ctx.src.text_of(arg), dim
    source = mt.clip(text, 28) + ("" if origin == text else f" ({mt.clip(origin, 28)})")
    msg = mt.shortest_needed(
        f"{source} reaches {mt.clip(name, 24)} unrounded: a size that is not a power of two (96) fails to compile; round it up",
        f"{source} reaches {mt.clip(name, 24)} unrounded: a size that is not a power of two fails to compile",
        f"{mt.clip(text, 28)} reaches {mt.clip(name, 24)} unrounded: fails to compile unless a power of two")
    related = [Related(ctx.src.range(call.node), f"the tl.arange {name} sizes")]
    if at is not None and at != arg:
        related.append(Related(ctx.src.range(at), "where the size is read"))
    return ctx.finding(ctx.src.range(arg), msg, severity=Severity.WARNING, related=related,
                       data={"landed": name, "source": origin, "config": f"the launch at line {launch.line}"})


def _scaled_name(node, src):
    """`D` in an extent `D`, `D // 2` or `D * 2`: the name whose value sets the extent."""
    while node is not None and node.type == "parenthesized_expression":
        node = node.named_children[0] if node.named_children else None
    if node is not None and node.type == "identifier":
        return src.text_of(node)
    if node is not None and node.type == "binary_operator" and src.text_of(node.child_by_field_name("operator")) in ("//", "*"):
        right = node.child_by_field_name("right")
        return _scaled_name(node.child_by_field_name("left"), src) if right is not None and right.type == "integer" else None
    return None


def _wrapper_assignments(src, launch):
    """{name: [(statement, right side or None, index in an unpacking or None, its length)]} of
    the wrapper's assignments before the launch, the last top-level one and those after it."""
    body = launch.wrapper.child_by_field_name("body")
    out: dict[str, list] = {}
    for n in captures(body, "[(assignment) (augmented_assignment)] @a", "a") if body is not None else []:
        if n.start_byte >= launch.node.start_byte:
            continue
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if n.type == "augmented_assignment" or left is None:
            if left is not None and left.type == "identifier":
                out.setdefault(src.text_of(left), []).append((n, None, None, 0))
            continue
        if left.type == "identifier":
            out.setdefault(src.text_of(left), []).append((n, right, None, 0))
        elif left.type in ("pattern_list", "tuple_pattern"):
            items = left.named_children
            for i, item in enumerate(items):
                if item.type == "identifier":
                    out.setdefault(src.text_of(item), []).append((n, right, i, len(items)))
    for name, defs in out.items():
        top = [d for d in defs if d[0].parent is not None and d[0].parent.parent == body]
        if top:
            out[name] = [d for d in defs if d[0].start_byte >= top[-1][0].start_byte]
    return out


def _last_dim(node, src, assigns, chain, depth):
    """(`x.shape[-1]`, the node that reads it) when `node` is a tensor's last dimension, or a
    multiple or fraction of it by a literal, through the wrapper's assignments; else None."""
    if node is None or depth > 8:
        return None
    t = node.type
    if t == "parenthesized_expression":
        return _last_dim(node.named_children[0] if node.named_children else None, src, assigns, chain, depth + 1)
    if t == "subscript":
        value = node.child_by_field_name("value")
        index = node.child_by_field_name("subscript")
        if _is_shape(value, src) and index is not None and src.text_of(index).replace(" ", "") == "-1":
            return src.text_of(node), node
        return None
    if t == "call":
        fn, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        items = [a for a in args.named_children if a.type != "comment"] if args is not None else []
        if fn is not None and fn.type == "attribute" and src.text_of(fn.child_by_field_name("attribute")) == "size":
            return (src.text_of(node), node) if len(items) == 1 and src.text_of(items[0]).replace(" ", "") == "-1" else None
        if fn is not None and src.text_of(fn) == "int" and len(items) == 1:
            return _last_dim(items[0], src, assigns, chain, depth + 1)
        return None
    if t == "binary_operator" and src.text_of(node.child_by_field_name("operator")) in ("//", "*"):
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if right is not None and right.type == "integer":
            return _last_dim(left, src, assigns, chain, depth + 1)
        if left is not None and left.type == "integer" and src.text_of(node.child_by_field_name("operator")) == "*":
            return _last_dim(right, src, assigns, chain, depth + 1)
        return None
    if t != "identifier":
        return None
    name = src.text_of(node)
    defs = assigns.get(name)
    if not defs or name in chain:
        return None  # a wrapper parameter, a global, or a cycle: the size is the caller's
    chain.append(name)
    found = None
    for stmt, right, index, count in defs:
        if right is None:
            return None
        if index is None:
            dim = _last_dim(right, src, assigns, chain, depth + 1)
        else:
            # `b, h, d = q.shape`: only the last name is the last dimension
            dim = (src.text_of(right) + "[-1]", stmt) if index == count - 1 and _is_shape(right, src) else None
        if dim is None:
            return None
        found = found or dim
    return found


def _is_shape(node, src):  # `x.shape`, `x.size()`
    if node is not None and node.type == "call" and not getattr(node.child_by_field_name("arguments"), "named_children", 1):
        node = node.child_by_field_name("function")
        return node is not None and node.type == "attribute" and src.text_of(node.child_by_field_name("attribute")) == "size"
    return node is not None and node.type == "attribute" and src.text_of(node.child_by_field_name("attribute")) == "shape"


# Tests that keep a size to powers of two (`d in (64, 128)`, `d & (d - 1) == 0`, `is_pow2(d)`),
# and calls that only make sense of one (`log2_d = get_log2(d)`) or check it.
_POW2_TESTS = (" in ", "&", "power", "pow2", "pow_2", "bit_")
_POW2_CALLS = ("log2", "is_pow", "ispow", "check_pow")


def _guarded(src, wrapper, names):
    """Whether the file keeps the size to powers of two (a test anywhere in it: `D not in SUPPORTED`
    or `return d == 256 and ...` may sit in the function that picks this path; the wrapper takes
    its log2) or tiles by it (`cdiv(T, BT)`: a chunk size the code chose, its tensor made with it)."""
    memo = src.memo_for("tl025_guards")
    conds = memo.get("conds")
    if conds is None:
        nodes = captures(src.root, "[(assert_statement) (if_statement) (elif_clause) (comparison_operator)] @g", "g")
        conds = memo["conds"] = [src.text_of(n.named_children[0] if n.type == "assert_statement" else
                                             (n.child_by_field_name("condition") or n)) for n in nodes]
    wrapper_text = src.text_of(wrapper)
    for name in names:
        pat = _mention(name)
        # `d == 128`, `128 == d`: the path is taken for one size only
        one = re.compile(rf"{pat.pattern}\s*==\s*\d|\d\s*==\s*{pat.pattern}")
        if any(pat.search(c) and (any(w in c for w in _POW2_TESTS) or one.search(c)) for c in conds):
            return True
        for call in re.finditer(r"([\w.]+)\(([^()]*)\)", wrapper_text):
            fn, args = call.group(1).lower(), call.group(2)
            if pat.search(args) and (any(w in fn for w in _POW2_CALLS)
                                     or (fn.endswith("cdiv") and pat.search(args.split(",")[-1]))):
                return True
    return False


def _mention(name):
    return re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
