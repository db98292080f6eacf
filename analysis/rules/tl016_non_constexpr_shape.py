"""TL016 — non-constexpr parameter used as an `arange` extent or tile shape

## What it finds
A kernel parameter without a `tl.constexpr` annotation that reaches (directly or through local
variables) a `tl.arange` bound, a `tl.zeros`/`tl.full` shape, or a `tl.reshape` /
`tl.broadcast_to` / `.reshape` shape.

## Why
Tile shapes are compile-time: Triton specializes the kernel for each shape. A runtime parameter is
a tensor in the compiled program, and the compiler rejects it. With triton 3.9
(`triton.compile(..., target=GPUTarget("cuda", 90, 32))`):

```
CompilationError at 2:38:
def k(x_ptr, n, BLOCK):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                                      ^
arange's arguments must be of type tl.constexpr
```

and for a shape, `TypeError: Shape element 0 must have type `constexpr[int]`, got
`constexpr[<class 'triton.language.core.tensor'>]`` from `tl.zeros((BM, BLOCK), ...)` and
`tl.reshape(x, (R, BLOCK // 4))`. The error only appears at the first launch.

## Example
```python
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK=1024):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)     # TL016
```

## Fix
Annotate the parameter: `BLOCK: tl.constexpr = 1024` (the quick fix keeps an existing default
and replaces another annotation such as `: int`). Each distinct value then compiles its own
specialization, which is what a tile size needs.
"""

from __future__ import annotations

from ..findings import Applicability, Related, Severity, TextEdit
from ..shapes import infer_kernel
from ..values import UNKNOWN
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL016",
    name="non-constexpr-shape",
    severity=Severity.ERROR,
    summary="parameter used as an arange extent or tile shape but not tl.constexpr",
    fix_title="annotate the parameter as tl.constexpr",
    fix_applicability=Applicability.SAFE,
    fix_safety=('The kernel cannot compile without it; the annotation changes how the value is passed (one '
                'compiled specialization per distinct value), not what the kernel computes.'),
)

_SHAPE_CALLS = {"zeros": 0, "full": 0, "empty": 0, "reshape": 1, "broadcast_to": 1, "view": 1,
                ".reshape": 0, ".broadcast_to": 0, ".view": 0}


def check(ctx: KernelContext):
    k = ctx.kernel
    runtime = {p.name: p for p in k.params if not p.is_constexpr}
    if not runtime:
        return
    runs = infer_kernel(ctx.module, k).per_config
    for call in k.calls:
        taking = [run for run in runs if run.executes(call.node)]
        if runs and not taking:
            continue  # in a branch no configuration takes: Triton never compiles it
        config = taking[0].config if taking else None
        uses = []
        if call.name == "arange":
            uses = [(a, "a tl.arange bound", "arange's arguments must be of type tl.constexpr")
                    for a in (call.arg(0, "start"), call.arg(1, "end")) if a is not None]
        elif call.name in _SHAPE_CALLS:
            idx = _SHAPE_CALLS[call.name]
            shape = call.arg(idx, "shape")
            nodes = call.args[idx:] if call.name.startswith(".") or (call.name in ("reshape", "view") and len(call.args) > 2) \
                else [shape]
            if call.name in ("zeros", "full", "empty") and len(call.args) < 1:
                nodes = [shape]
            what = f"the shape of {'tl.' + call.name if not call.name.startswith('.') else call.name}"
            uses = [(n, what, "Shape element 0 must have type `constexpr[int]`") for n in nodes if n is not None]
        for node, what, error in uses:
            for name in sorted(ctx.depends_on(node)):
                p = runtime.get(name)
                if p is None:
                    continue
                yield ctx.finding(
                    ctx.src.range(node),
                    f"`{name}` is used as {what} but is not a tl.constexpr parameter: Triton refuses to compile it "
                    f"(\"{error}\"); annotate it `{name}: {_tl(ctx)}.constexpr`",
                    fix=[_annotate(ctx, p)],
                    related=[Related(p.range, f"parameter {name}")],
                    # the constexprs of a configuration whose compilation meets the call
                    data={"parameter": name, "constexprs": {} if config is None else {
                        q.name: config.get(q.name) for q in k.params if q.is_constexpr and config.get(q.name) is not UNKNOWN}},
                )


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
