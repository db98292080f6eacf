"""TL020: a tl.* / triton.* name that does not exist in the project's Triton (typo, removed, or newer)."""

from __future__ import annotations

from .. import tlapi
from ..findings import Severity
from ..source import captures, dotted_name
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL020",
    name="unknown-triton-api",
    severity=Severity.ERROR,
    summary="tl.*/triton.* API that does not exist, was removed, or is newer than the project's Triton",
)


def _resolve(ctx, dotted: str):
    al = ctx.module.aliases
    tl = al.tl_function(dotted)
    if tl is not None:
        return tlapi.split_tl(tl)
    head, _, rest = dotted.partition(".")
    if head in al.triton and rest and "." not in rest:
        return "triton", rest
    if head in al.triton and rest.startswith("testing.") and rest.count(".") == 1:
        return "triton.testing", rest.split(".", 1)[1]
    return None


def check(ctx: KernelContext):
    api = tlapi.active()
    src = ctx.src
    known = set(api.modules())
    seen = set()
    for node in captures(ctx.kernel.outer, "(attribute) @a", "a"):
        parent = node.parent
        if parent is not None and parent.type == "attribute" and parent.child_by_field_name("object") == node:
            continue  # only whole chains: tl.math.exp, not tl.math
        dotted = dotted_name(node, src)
        if not dotted:
            continue
        resolved = _resolve(ctx, dotted)
        if resolved is None or resolved[0] not in known:
            continue
        module, name = resolved
        if api.get(module, name) is not None or (module, name) in seen:
            continue
        seen.add((module, name))
        history = [v for v, present in tlapi.history(module, name) if present]
        newer = [v for v in history if tlapi._version_key(v) > tlapi._version_key(api.version)]
        if newer:
            why = f"is newer than the project's Triton {api.version} (it exists in Triton {', '.join(newer)})"
        elif history:
            why = f"was removed: it is not in Triton {api.version} (it exists in Triton {', '.join(history)})"
        else:
            why = f"does not exist in Triton {api.version}"
        sug = api.suggest(module, name)
        prefix = dotted.rsplit(".", 1)[0]
        hint = f"; did you mean {', '.join(f'`{prefix}.{s}`' for s in sug)}?" if sug else ""
        yield ctx.finding(src.range(node), f"`{dotted}` {why}{hint}",
                          data={"module": module, "name": name, "triton": api.version, "suggestions": sug,
                                "exists_in": history})
