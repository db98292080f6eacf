"""TL021: a tl.* call with too many/too few arguments or an unknown keyword, from the real signatures."""

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
