"""TL021 — wrong arguments in a tl.* call

The message suggests the closest keyword.

## What it finds
A call of a `tl.*` function with more positional arguments than its signature takes, an unknown
keyword (`evict=` → did you mean `eviction_policy=`?; `boundary_check=` on `tl.load` in Triton
3.9, which removed block pointers — the message says which versions had it), or a missing
required argument (`tl.arange(BLOCK)` has no `end`). Signatures come from the real Triton
(`inspect.signature` of the installed package, or the snapshots generated from the 3.5.1, 3.6.0
and 3.9.0 wheels). Calls with `*args`/`**kwargs` splats and method calls are not checked.

## Why
Triton builtins are plain Python functions called while the kernel compiles: a wrong argument
is a `TypeError` inside a `CompilationError` at the first launch. Keyword names also change
between versions (`tl.sum(..., dtype=)` is recent; `boundary_check`/`padding_option` left
`tl.load` in 3.9), so code that compiled on one Triton fails on the next.

## Example
```python
x = tl.load(x_ptr + offs, mask=offs < n, evict="evict_last")   # TL021: did you mean `eviction_policy=`?
ids = tl.arange(BLOCK)                                          # TL021: missing `end`
```

## Fix
Use the keyword names and argument count of the signature shown in the message (also in the
hover and signature help of `tl.*` calls).
"""

from __future__ import annotations

import difflib

from .. import tlapi
from ..findings import Severity
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL021",
    name="wrong-call-arguments",
    severity=Severity.ERROR,
    summary="wrong number of arguments or unknown keyword in a tl.* call (checked against the real signature)",
)


def check(ctx: KernelContext):
    api = tlapi.active()
    src = ctx.src
    for call in ctx.kernel.calls:
        if call.name.startswith("."):
            continue
        if any(a.type in ("list_splat", "dictionary_splat") for a in call.args) or "" in call.kwargs:
            continue
        argnode = call.node.child_by_field_name("arguments")
        if argnode is not None and any(a.type == "dictionary_splat" for a in argnode.named_children):
            continue
        entry = api.lookup_tl(call.name)
        if entry is None or entry.params is None or entry.kind != "function":
            continue
        params = entry.params
        varargs = any(p.kind == "*" for p in params)
        varkw = any(p.kind == "**" for p in params)
        positional = [p for p in params if p.kind in ("p", "pk")]
        names = {p.name for p in params if p.kind in ("pk", "k")}
        shown = f"tl.{call.name}{entry.signature or ''}"
        where = f" (Triton {api.version}: `{shown}`)"
        if not varargs and len(call.args) > len(positional):
            yield ctx.finding(src.range(call.node), f"tl.{call.name} takes at most {len(positional)} positional "
                              f"argument{'s' if len(positional) != 1 else ''}, {len(call.args)} given{where}",
                              data={"problem": "too-many", "signature": shown})
            continue
        for kw, value in call.kwargs.items():
            if kw in names or varkw:
                continue
            sug = difflib.get_close_matches(kw, sorted(names), n=2, cutoff=0.5)
            hint = f"; did you mean {', '.join(f'`{s}=`' for s in sug)}?" if sug else ""
            older = [idx.version for idx in tlapi.all_snapshots()
                     if (e := idx.lookup_tl(call.name)) is not None and e.params and any(p.name == kw for p in e.params)]
            if older:
                hint = f" (it had one in Triton {', '.join(older)})" + hint
            kwnode = value.parent if value is not None and value.parent is not None else call.node
            yield ctx.finding(src.range(kwnode), f"tl.{call.name} has no parameter `{kw}`{hint}{where}",
                              data={"problem": "unknown-keyword", "keyword": kw, "suggestions": sug, "signature": shown})
        given = {p.name for p in positional[:len(call.args)]} | set(call.kwargs)
        missing = [p.name for p in params if p.required and p.name not in given]
        if missing:
            yield ctx.finding(src.range(call.node), f"tl.{call.name} is missing required argument"
                              f"{'s' if len(missing) > 1 else ''} {', '.join(f'`{m}`' for m in missing)}{where}",
                              data={"problem": "missing", "missing": missing, "signature": shown})
