"""TL020 — Triton API that does not exist in the project's Triton

The message suggests the closest existing names.

## What it finds
A `tl.*`, `tl.math.*`, `libdevice.*` or `triton.*` name used in a kernel that the project's
Triton does not have: a typo (`tl.arnage` → did you mean `tl.arange`?), a name that was removed
(`tl.advance` is no longer in `triton.language` in Triton 3.9), or one newer than the installed
version. The API comes from the real package — introspected from the project's Python when
Triton is importable there, else from snapshots generated from the PyPI wheels of Triton 3.5.1,
3.6.0 and 3.9.0 (`scripts/gen_api_snapshot.py`) — and the message says in which versions the
name exists.

## Why
Triton resolves `tl.<name>` only when it compiles the kernel: a misspelt or missing name is an
`AttributeError` (wrapped in a `CompilationError`) at the first launch, typically on the GPU
machine after a long queue. Triton's API moves quickly between minor versions (3.5 → 3.9 added
`tl.squeeze`, `tl.unsqueeze`, `tl.atomic_load`… and removed `tl.advance` and block-pointer
loads), so code copied from a tutorial for another version breaks in exactly this way.

## Example
```python
offs = tl.program_id(0) * BLOCK + tl.arnage(0, BLOCK)   # TL020: did you mean `tl.arange`?
bp = tl.advance(bp, (BLOCK,))   # TL020: removed (exists in Triton 3.5.1, 3.6.0)
```

## Fix
Use the suggested name, or the replacement API of your Triton version (tensor descriptors,
`tl.make_tensor_descriptor`, instead of block pointers in 3.9), or pin the Triton version the
kernel was written for.
"""

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
