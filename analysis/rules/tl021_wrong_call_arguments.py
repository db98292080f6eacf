"""TL021 — wrong arguments in a tl.* call

The message suggests the closest keyword.

## What it finds
A call of a `tl.*` function with more positional arguments than its signature takes, an unknown
keyword (`evict=` → did you mean `eviction_policy=`?), a keyword the project's Triton removed
(`boundary_check=`/`padding_option=` on `tl.load` and `tl.store` in Triton 3.9, which removed
block pointers — reported once per file, on the first use, naming the versions that had it), or
a missing required argument (`tl.arange(BLOCK)` has no `end`). Signatures come from the real Triton
(`inspect.signature` of the installed package, or the snapshots generated from the 3.5.1, 3.6.0
and 3.9.0 wheels). Calls with `*args`/`**kwargs` splats and method calls are not checked, nor
kernels defined under a module-level `if` on the Triton version.

## Why
Triton builtins are plain Python functions called while the kernel compiles: a wrong argument
is a `TypeError` inside a `CompilationError` at the first launch (Triton 3.9.0:
`load() got an unexpected keyword argument 'boundary_check'`). Keyword names also change
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

from .. import message_text as mt
from .. import tlapi
from ..findings import Severity
from .base import KernelContext, RuleInfo
from .tl020_unknown_triton_api import version_alternative

RULE = RuleInfo(
    id="TL021",
    name="wrong-call-arguments",
    severity=Severity.ERROR,
    summary="wrong number of arguments or unknown keyword in a tl.* call (checked against the real signature)",
)


def _with_signature(message: str, version: str, shown: str) -> str:
    """The message with the signature it was checked against, or only the version when the
    signature would make it too long (the hover and signature help show it whole)."""
    return mt.shortest_needed(f"{message} (Triton {version}: {shown})", f"{message} (Triton {version})", message)


def check(ctx: KernelContext):
    api = tlapi.active()
    src = ctx.src
    if version_alternative(ctx):
        return  # a definition for another Triton version (see TL020)
    for call in ctx.kernel.calls:
        if call.name.startswith("."):
            continue
        if any(a.type in ("list_splat", "dictionary_splat") for a in call.args) or "" in call.kwargs:
            continue
        argnode = call.node.child_by_field_name("arguments")
        if argnode is not None and any(a.type == "dictionary_splat" for a in argnode.named_children):
            continue
        entry = api.lookup_tl(call.name)
        if entry is None or entry.params is None or entry.kind != "function" or tlapi.removed_stub(entry):
            continue  # a removal stub is TL020's: the call itself is the problem, not its arguments
        params = entry.params
        varargs = any(p.kind == "*" for p in params)
        varkw = any(p.kind == "**" for p in params)
        positional = [p for p in params if p.kind in ("p", "pk")]
        names = {p.name for p in params if p.kind in ("pk", "k")}
        shown = f"tl.{call.name}{entry.signature or ''}"
        if not varargs and len(call.args) > len(positional):
            msg = (f"tl.{call.name} takes at most {len(positional)} positional "
                   f"argument{'s' if len(positional) != 1 else ''}, {len(call.args)} given")
            yield ctx.finding(src.range(call.node), _with_signature(msg, api.version, shown),
                              data={"problem": "too-many", "signature": shown})
            continue
        for kw, value in call.kwargs.items():
            if kw in names or varkw:
                continue
            kwnode = value.parent if value is not None and value.parent is not None else call.node
            module, name = tlapi.split_tl(call.name)
            had = tlapi.working_in(module, name, keyword=kw)
            if had:
                feature = tlapi.removed_feature(module, name, kw)
                removed = f"tl.{call.name}'s {mt.code(kw + '=', 24)} was removed in Triton {api.version}"
                yield ctx.finding(src.range(kwnode), mt.shortest_needed(
                                      f"{removed}{' with ' + feature if feature else ''} (it exists in {', '.join(had)})",
                                      f"{removed}{' with ' + feature if feature else ''}", removed,
                                      limit=mt.MESSAGE_LIMIT - mt.USES_ROOM),
                                  data={"problem": "removed-keyword", "keyword": kw, "signature": shown,
                                        "exists_in": had, "once_per_file": tlapi.removal_key(module, name, kw)})
                continue
            sug = difflib.get_close_matches(kw, sorted(names), n=2, cutoff=0.5)
            hint = f"; did you mean {', '.join(f'{s}=' for s in sug)}?" if sug else ""
            yield ctx.finding(src.range(kwnode),
                              _with_signature(f"tl.{call.name} has no parameter {mt.clip(kw, 24)}{hint}", api.version, shown),
                              data={"problem": "unknown-keyword", "keyword": kw, "suggestions": sug, "signature": shown})
        given = {p.name for p in positional[:len(call.args)]} | set(call.kwargs)
        missing = [p.name for p in params if p.required and p.name not in given]
        if missing:
            msg = (f"tl.{call.name} is missing required argument"
                   f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
            yield ctx.finding(src.range(call.node), _with_signature(msg, api.version, shown),
                              data={"problem": "missing", "missing": missing, "signature": shown})
