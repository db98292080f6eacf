"""TL016 — runtime value used as an `arange` extent or tile shape

## What it finds
A `tl.arange` bound, or a shape given to `tl.zeros` / `tl.full` / `tl.empty` / `tl.reshape` /
`tl.broadcast_to` / `tl.view` (or the `.reshape`, `.broadcast_to`, `.view` methods), that the
shape engine knows to be a runtime value in a configuration Triton compiles: a kernel parameter
without a `tl.constexpr` annotation, a value loaded from memory, or a local bound by a plain
assignment (`HALF = BLOCK // 2`: Triton's code generator turns a constexpr assigned to a name
into a 0-d tensor; `HALF: tl.constexpr = BLOCK // 2` keeps it a constexpr).

Never reported: anything the engine does not know. A block's `.shape`, `.numel` and `.dtype`,
locals annotated `x: tl.constexpr = ...`, `tl.constexpr(...)` values, `tl.static_range` loop
variables and constexpr tuples are compile-time; the parameters of a @jit device helper (a
function the file does not launch and that returns a value or is called by another @jit
function) are whatever its callers pass, often the callers' constexprs, so they are unknown.

## Why
Tile shapes are compile-time: Triton specializes the kernel for each shape. A runtime value is
a tensor in the compiled program, and the compiler rejects it. With triton 3.9
(`triton.compile(..., target=GPUTarget("cuda", 90, 32))`):

```
CompilationError at 2:38:
def k(x_ptr, n, BLOCK):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                                      ^
arange's arguments must be of type tl.constexpr
```

and for a shape, `TypeError: Shape element 0 must have type `constexpr[int]`` from
`tl.zeros((BM, BLOCK), ...)` and `tl.reshape(x, (R, BLOCK // 4))`. The error only appears at
the first launch.

## Example
```python
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK=1024):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)     # TL016
```

## Fix
Annotate the parameter: `BLOCK: tl.constexpr = 1024` (the quick fix keeps an existing default
and replaces another annotation such as `: int`). Each distinct value then compiles its own
specialization, which is what a tile size needs. The quick fix is offered only when the shape is
built from one runtime parameter of a launched kernel and constexprs, never for a local or a
loaded value; annotate a local `NAME: tl.constexpr = ...` by hand.
"""

from __future__ import annotations

import dataclasses

from .. import message_text as mt
from ..findings import Applicability, Related, Severity, TextEdit
from ..source import captures, dotted_name
from ..values import UNKNOWN
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL016",
    name="non-constexpr-shape",
    severity=Severity.ERROR,
    summary="runtime value used as an arange extent or tile shape instead of a tl.constexpr",
    fix_title="annotate the parameter as tl.constexpr",
    fix_applicability=Applicability.SAFE,
    fix_safety=('The kernel cannot compile without it; the annotation changes how the value is passed (one '
                'compiled specialization per distinct value), not what the kernel computes.'),
)

# call name → index of the first shape argument (a method's receiver is not an argument)
_SHAPE_CALLS = {"zeros": 0, "full": 0, "empty": 0, "reshape": 1, "broadcast_to": 1, "view": 1,
                ".reshape": 0, ".broadcast_to": 0, ".view": 0}
# Calls that give a constexpr of constexpr arguments.
_CONSTEXPR_CALLS = {"cdiv", "next_power_of_2", "constexpr", "min", "max"}
_ARANGE_ERROR = "arange's arguments must be of type tl.constexpr"
_SHAPE_ERROR = "Shape element must have type `constexpr[int]`"


def _runtime(a) -> bool:
    """A value Triton holds as a tensor: never a constexpr, whatever its number."""
    return a is not None and a.kind == "tensor" and not a.weak


def _operands(call):
    """(node, what, compiler error) for each operand of `call` that must be a constexpr."""
    if call.name == "arange":
        return [(a, "a tl.arange bound", _ARANGE_ERROR) for a in (call.arg(0, "start"), call.arg(1, "end")) if a is not None]
    idx = _SHAPE_CALLS.get(call.name)
    if idx is None:
        return []
    shape = call.arg(idx, "shape")
    varargs = call.name.startswith(".") or (call.name in ("reshape", "view", "broadcast_to") and len(call.args) > idx + 1)
    nodes = call.args[idx:] if varargs and "shape" not in call.kwargs else [shape]
    what = f"the shape of {call.name if call.name.startswith('.') else 'tl.' + call.name}"
    return [(n, what, _SHAPE_ERROR) for n in nodes if n is not None]


def _offending(node, a) -> list:
    """The parts of an operand whose value is a runtime tensor: the operand itself, or the items
    of a shape tuple (their own nodes when the tuple is written out)."""
    if a is None:
        return []
    if a.kind == "tuple":
        kids = [c for c in node.named_children if c.type != "comment"] if node.type in ("tuple", "list") else []
        same = len(kids) == len(a.items)
        return [kids[i] if same else node for i, item in enumerate(a.items) if _runtime(item)]
    return [node] if _runtime(a) else []


def check(ctx: KernelContext):
    k = ctx.kernel
    shapes = ctx.shapes
    runs = shapes.results()
    runtime_params = {p.name: p for p in k.params if not p.is_constexpr}
    for call in k.calls:
        for node, what, error in _operands(call):
            parts = []
            for run in runs:
                if not run.executes(node):
                    continue  # Triton never compiles it in this configuration
                parts = _offending(node, run.at(node))
                if parts:
                    break
            if not parts:
                continue
            yield _finding(ctx, node, parts, what, error, run, runtime_params, shapes.helper)


def _constexpr_made_tensor(ctx, part, run) -> bool:
    """A local whose every assignment binds a constexpr: only the plain assignment made it a tensor."""
    if part.type != "identifier":
        return False
    defs = ctx.kernel.assignments.get(ctx.src.text_of(part), [])
    values = [run.at(a.value) for a in defs if a.value is not None and not a.augmented]
    return bool(values) and len(values) == len(defs) and all(v is not None and v.weak for v in values)


def _finding(ctx, node, parts, what, error, run, runtime_params, helper):
    k, config = ctx.kernel, run.config
    deps = set()
    for part in parts:
        deps |= ctx.depends_on(part)
    params = sorted(n for n in deps if n in runtime_params)
    text = ctx.src.text_of(parts[0]) if len(parts) == 1 else ctx.src.text_of(node)
    shown = mt.name(text, 32)
    if params == [text]:
        message = f"{shown} is used as {what} but is not a tl.constexpr: Triton refuses to compile it"
    elif len(parts) == 1 and _constexpr_made_tensor(ctx, parts[0], run):
        message = mt.shortest_needed(
            f"{shown} is used as {what}, but its plain assignment made it a tensor; annotate it tl.constexpr",
            f"{mt.name(text, 24)} is used as {what} but is a tensor; annotate it tl.constexpr")
    else:
        source = f" (from {mt.clip(', '.join(params), 24)})" if params else ""
        message = mt.shortest_needed(f"{shown} is used as {what} but is a runtime value{source}, which Triton refuses",
                                     f"{shown} is used as {what} but is a runtime value, which Triton refuses")
    fix = None
    if not helper and len(params) == 1 and _only_parameter_and_constexprs(ctx, parts, params[0]):
        fix = [_annotate(ctx, runtime_params[params[0]])]
    related = [Related(runtime_params[p].range, f"parameter {p}") for p in params]
    f = ctx.finding(
        ctx.src.range(node), message, fix=fix, related=related,
        # the constexprs of a configuration whose compilation meets the call
        data={"parameter": params[0] if params else None, "compiler_error": error,
              "constexprs": {} if config is None else {
                  q.name: config.get(q.name) for q in k.params if q.is_constexpr and config.get(q.name) is not UNKNOWN}},
    )
    if f.fix is not None:
        f = dataclasses.replace(f, fix=dataclasses.replace(f.fix, title=f"annotate {params[0]} as {_tl(ctx)}.constexpr"))
    return f


def _only_parameter_and_constexprs(ctx, parts, name: str) -> bool:
    """Whether annotating parameter `name` makes every offending part a constexpr: each is built
    from that parameter, constexpr parameters and module constants only, through no local."""
    k = ctx.kernel
    for part in parts:
        for call in captures(part, "(call) @c", "c"):
            fn = call.child_by_field_name("function")
            dotted = dotted_name(fn, ctx.src) if fn is not None else None
            if (dotted or "").rsplit(".", 1)[-1] not in _CONSTEXPR_CALLS:
                return False  # tl.program_id(0) * n stays a tensor whatever n is
        for n in ctx.names_in(part):
            if n == name:
                continue
            p = k.param(n)
            if p is not None and p.is_constexpr:
                continue
            if p is None and n not in k.assignments and (n in ctx.module.constants or n in ("tl", "triton")):
                continue
            return False
    return True


def _tl(ctx) -> str:
    langs = ctx.module.aliases.language
    if "tl" in langs:
        return "tl"
    short = sorted((a for a in langs if a != "triton.language"), key=len)
    return short[0] if short else "triton.language"


def _annotate(ctx, p) -> TextEdit:
    text = ctx.src.text_of(_param_node(ctx, p))
    default = None
    if p.has_default and "=" in text:
        default = text.split("=", 1)[1].strip()
    new = f"{p.name}: {_tl(ctx)}.constexpr" + (f" = {default}" if default is not None else "")
    return TextEdit(p.range, new)


def _param_node(ctx, p):
    params = ctx.kernel.node.child_by_field_name("parameters")
    for n in params.named_children if params is not None else []:
        if ctx.src.range(n) == p.range:
            return n
    return None
