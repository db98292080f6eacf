"""TL001 — `tl.arange` extent that is not a power of two

## What it finds
A `tl.arange(start, end)` whose extent `end - start` is not a power of two in at least one
configuration the file lets us see: a literal, a constexpr passed at a launch site
(`BLOCK_SIZE=100`), a wrapper assignment (`BLOCK_SIZE = 100`), a constexpr default or an
autotune `triton.Config`. The message names the value and where it came from.

It also finds a bool where the extent's block parameter goes: a launch that passes one positional
argument too many, so that a flag (`False`) lands in `BLOCK_M`. The message says which argument
lands where, and whether `@triton.heuristics` sets that parameter too. An extent of 0 from a
number (`X=0 if flash else x`) is a sentinel for a branch the launch does not take and stays silent.

At warning severity, since it fails only for some inputs: a tensor's last dimension (a head or
feature size, `d = q.shape[-1]` or `b, h, d = q.shape`, through plain arithmetic) passed unrounded
into a constexpr that is a `tl.arange` extent. The message names the size and the parameter it
reaches. Silent where the size is rounded (`triton.next_power_of_2(d)`, `max(16, ...)`, any other
call or lookup), is a wrapper parameter (the caller's choice), is tested anywhere in the file for
a set or a power of two (`assert d in (64, 128)`, `d & (d - 1) == 0`, `if d not in SUPPORTED:`),
has its log2 taken, or tiles a grid (`cdiv(T, BT)`: a chunk size the code chose).

## Why
Triton lays a block out over a power-of-two number of lanes; its code generator rejects any
other range (`arange's range must be a power of 2`) when the kernel is compiled, i.e. at the
first launch on the GPU — often long after the code was written. Nothing is slower than a kernel
that does not build. A bool in the block parameter is an empty range (`tl.arange(0, False)`), and
where `@triton.heuristics` sets the parameter as well, the launch stops before that: the heuristic's
value and the positional one are two values for one argument (`TypeError: got multiple values for
argument 'BLOCK_M'`). A head size passed as it is compiles for 64 and 128 and fails for 80, 96 or
192, the day someone runs a model with one of those: often a backward pass, while its forward
rounds the same size up.

## Example
```python
@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

def run(x):
    BLOCK = 100                      # TL001: 100 is not a power of two
    scale[(triton.cdiv(x.numel(), BLOCK),)](x, x.numel(), BLOCK=BLOCK)

def rows(q):                         # the kernel reads tl.arange(0, D)
    tokens, heads, d = q.shape
    row_kernel[(tokens * heads,)](q, D=d)  # TL001 warning: d reaches D unrounded
```

## Fix
Use the next power of two (`triton.next_power_of_2(n)` or the literal: here 128) and keep a
mask on every load and store so the lanes past the real size do nothing; for a runtime size, pass
the real size as well, to mask with (`D=triton.next_power_of_2(d), d=d`), or assert the sizes the
kernel supports. The quick fix is
offered only where it keeps what the kernel computes:

- the literal the value came from (the launch argument, `BLOCK = 100`, the autotune config) is
  rounded up when every load and store through the arange is already masked, so the padding
  lanes of the last block are masked off as the tail was before;
- a literal in the kernel (`offs = tl.arange(0, 96)`) becomes `tl.arange(0, 128)` and each load
  and store of `offs` gets `mask=offs < 96` (or its mask `& (offs < 96)`), when `offs` is the bare
  arange, every access is 1-D and nothing combines lanes (a reduction, `tl.dot`, a reshape or an
  atomic would see the padding lanes).
"""

from __future__ import annotations

import re

from .. import message_text as mt
from ..findings import Applicability, Range, Related, Severity, TextEdit
from ..model import ATOMICS
from ..source import captures
from ..values import UNKNOWN, fmt, is_power_of_two, literal, next_power_of_2
from . import _offsets as off
from ._literals import literal_edit
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL001",
    name="arange-not-power-of-two",
    severity=Severity.ERROR,
    summary="tl.arange extent that is not a power of two",
    fix_title="round the block up to a power of two and mask the tail",
    fix_applicability=Applicability.UNSAFE,
    fix_safety=('The new extent changes what each program covers: the result stays right only if every load '
                'and store is masked by the real size and the grid follows the block, which the fix checks '
                "for the kernel's own literal but not for a block passed at a launch."),
)


def check(ctx: KernelContext):
    for call in ctx.kernel.calls_named("arange"):
        start_node, end_node = call.arg(0, "start"), call.arg(1, "end")
        if end_node is None:
            continue
        for config in ctx.kernel.configs or [None]:
            starts = ctx.values(start_node, config) if start_node is not None else [0]
            for end in ctx.values(end_node, config):
                for start in starts:
                    if end is UNKNOWN or start is UNKNOWN or not isinstance(end, int) or not isinstance(start, int):
                        continue
                    if isinstance(end, bool):
                        landed = _bool_block(ctx, end_node, config, end)
                        if landed is not None:
                            yield landed
                            continue
                    extent = end - start
                    # an empty range is a sentinel for a branch the launch does not take (`X=0 if
                    # flash else x`, a dead `flag = 0`): Triton would name another error anyway
                    if extent <= 0 or is_power_of_two(extent):
                        continue
                    yield _finding(ctx, call, config, start_node, end_node, extent)
    yield from _unrounded_dims(ctx)


def _finding(ctx, call, config, start_node, end_node, extent):
    origin, origin_range = ctx.origin_of(end_node, config)
    short, _ = ctx.value_where(end_node, config)
    where = f" ({short})" if short else (f" in {config.label}" if config is not None and config.launch else "")
    target = next_power_of_2(extent) if isinstance(extent, int) and extent > 0 else None
    msg = (f"tl.arange extent {fmt(extent)}{where} is not a power of two, which Triton refuses"
           + (f"; use {target}" if target else ""))
    related = [Related(origin_range, origin)] if origin_range is not None and origin else ctx.related_for(config, None, "configuration")
    edits, title = _fix(ctx, call, end_node, config, origin_range, extent, target) if target else (None, None)
    return ctx.finding(ctx.src.range(call.node), msg, fix=edits, fix_title=title, related=related,
                       data={"extent": extent, "suggested": target, "config": config.label if config else None})


def _bool_block(ctx, end_node, config, value):
    """A bool where the block size goes: a launch passed one positional argument too many, so a
    flag landed on the block parameter (which Triton then refuses: a bound of False is an empty
    range, and a @triton.heuristics that sets the parameter too makes the launch a TypeError)."""
    k = ctx.kernel
    if config is None or config.launch is None or end_node.type != "identifier":
        return None
    p = k.param(ctx.src.text_of(end_node))
    args = config.launch.args
    if p is None or p.index >= len(args) or any(a.type in ("list_splat", "dictionary_splat") for a in args[:p.index + 1]):
        return None
    arg = args[p.index]
    nth = p.index + 1
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(nth if nth < 20 else nth % 10, "th")
    sets = ", which @triton.heuristics sets" if p.name in k.heuristics else ""
    msg = f"the {nth}{suffix} positional argument, {value!r}, lands in {p.name}{sets}"
    return ctx.finding(ctx.src.range(end_node), msg, related=[Related(ctx.src.range(arg), "the argument that lands there")],
                       data={"extent": int(value), "config": config.label, "landed": p.name})


# Operations that combine lanes: a rounded-up block would feed them the padding lanes.
_CROSS_LANE = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum", "cumsum", "cumprod",
               "associative_scan", "dot", "dot_scaled", "reshape", "view", "permute", "trans", "sort", "flip",
               "histogram", "gather", "join", "split", "interleave", "cat"} | ATOMICS


def _fix(ctx, call, end_node, config, origin_range, extent, target):
    """(edits, title), or (None, None) where no rounding keeps the kernel's results.

    A literal in the kernel is rounded up and every load and store of the arange's variable is
    masked to the old extent, when the variable is the bare arange (so `var < end` bounds the
    padding lanes) and nothing combines lanes. A literal the value came from (a launch argument,
    `BLOCK = 100`, an autotune config) is rounded up when every memory access through the arange is
    already masked: the whole block then moves with it and the mask bounds the tail as before."""
    src = ctx.src
    start = call.arg(0, "start")
    if end_node.type == "integer" and start is not None and start.type == "integer":
        end = literal(end_node, src)
        var = _bare_arange_name(call, src)
        if var is None or any(c.name.lstrip(".") in _CROSS_LANE for c in ctx.kernel.calls):
            return None, None
        edits = [TextEdit(src.range(end_node), str(literal(start, src) + target))]
        for mem, mask in _accesses(ctx, call, var):
            if "[" in off.chain_text(ctx, mem.arg(0, "pointer")):
                return None, None  # a 2-D access: a 1-D lane mask does not fit it
            if mask is None:
                close = mem.node.child_by_field_name("arguments").end_point  # the closing parenthesis
                pos = src.pos((close[0], close[1] - 1))
                edits.append(TextEdit(Range(pos, pos), f", mask={var} < {end}"))
            else:
                edits.append(TextEdit(src.range(mask), f"({src.text_of(mask)}) & ({var} < {end})"))
        masked = " and mask the tail" if len(edits) > 1 else ""
        return edits, f"round tl.arange(0, {fmt(extent)}) up to {target}{masked}"
    edit = literal_edit(src, origin_range, target)
    if edit is None or any(mask is None for _, mask in _accesses(ctx, call, _assigned_name(call, src))):
        return None, None
    name = next((n for n in ctx.names_in(end_node) if config is not None and n in config.values), None)
    what = name or "the block"
    return [edit], f"round {what} up from {fmt(extent)} to {target} (line {origin_range.start.line + 1})"


def _accesses(ctx, call, var):
    """(load or store, its mask node or None) for each access whose pointer reads the arange."""
    out = []
    for mem in ctx.kernel.calls_named("load", "store"):
        ptr = mem.arg(0, "pointer")
        if ptr is None:
            continue
        uses = (var is not None and var in ctx.depends_on(ptr)) or \
            (ptr.start_byte <= call.node.start_byte and call.node.end_byte <= ptr.end_byte)
        if uses:
            out.append((mem, mem.arg(1 if mem.name == "load" else 2, "mask")))
    return out


def _bare_arange_name(call, src):
    """`offs` in `offs = tl.arange(0, 96)`: a name whose value is the lane index itself."""
    parent = call.node.parent
    if parent is not None and parent.type == "assignment" and parent.child_by_field_name("right") == call.node:
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return src.text_of(left)
    return None


def _assigned_name(call, src):
    parent = call.node.parent
    while parent is not None and parent.type in ("binary_operator", "parenthesized_expression"):
        parent = parent.parent
    if parent is not None and parent.type == "assignment":
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return src.text_of(left)
    return None


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
        landed = dict(launch.kwargs)
        for p, a in zip(k.params, launch.args):
            if a.type in ("list_splat", "dictionary_splat"):
                break
            landed.setdefault(p.name, a)
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
    memo = src.memo_for("tl001_guards")
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
