"""TL020 — Triton API that does not exist in the project's Triton

The message suggests the closest existing names, or where a function moved.

## What it finds
A `tl.*`, `tl.math.*`, `libdevice.*` or `triton.*` name used in a kernel that the project's
Triton does not have or no longer honours:
- a typo (`tl.arnage` → did you mean `tl.arange`?);
- a name that was removed (`tl.advance` is not in `triton.language` in Triton 3.9), or one Triton
  keeps only as a stub that raises (3.9's `tl.make_block_ptr`: "Block pointers have been
  removed"). A removed API is reported once per file, on its first use, with the count of the
  others; `tl.make_block_ptr` and `tl.advance` are one feature, block pointers;
- a module path that is gone (`tl.libdevice.erf`, the spelling of Triton 2.0)
  or a function in the wrong math module (`tl.math.log1p` is `libdevice.log1p` in 3.9): the
  message names the spellings the project's Triton offers (`tl.math.erf`, `tl.erf`,
  `libdevice.erf` from `triton.language.extra`);
- a name newer than the installed version.

A kernel defined under a module-level `if` on the Triton version (`if TRITON3: … else: …`) is
not checked: one of its definitions is meant for another Triton.

The API comes from the real package — introspected from the project's Python when Triton is
importable there, else from snapshots generated from the PyPI wheels of Triton 3.5.1, 3.6.0 and
3.9.0 (`scripts/gen_api_snapshot.py`) — and the message says in which versions the name exists.

## Why
Triton resolves `tl.<name>` only when it compiles the kernel: a misspelt or missing name is an
`AttributeError` (wrapped in a `CompilationError`) at the first launch, typically on the GPU
machine after a long queue. A removal stub fails the same way (Triton 3.9.0:
`CompilationError: Block pointers have been removed in favor of the tensor descriptor API`).
Triton's API moves quickly between minor versions (3.5 → 3.9 added `tl.squeeze`,
`tl.unsqueeze`, `tl.atomic_load`… and removed block pointers), so code copied from a tutorial
for another version breaks in exactly this way. Code under a `tl.constexpr` branch that is
false in every launch is never compiled; such a branch is still reported.

## Example
```python
offs = tl.program_id(0) * BLOCK + tl.arnage(0, BLOCK)   # TL020: did you mean `tl.arange`?
bp = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))   # TL020: removed in Triton 3.9.0
y = tl.libdevice.erf(x)   # TL020: `tl.libdevice` does not exist; use `tl.math.erf` or `tl.erf`
```

## Fix
Use the suggested name, or the replacement API of your Triton version (tensor descriptors,
`tl.make_tensor_descriptor`, instead of block pointers in 3.9), or pin the Triton version the
kernel was written for.
"""

from __future__ import annotations

from .. import message_text as mt
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


def _advice(doc: str) -> str:
    """What a removal stub's doc tells the user to do: its sentences after the one saying it went."""
    rest = [x.strip() for x in doc.split(". ") if x.strip() and not tlapi.removed_stub_text(x)]
    return "; " + rest[0][0].lower() + rest[0][1:].rstrip(".") if rest else ""


def _homes(homes: list[str]) -> str:
    """`tl.math.erf` or `libdevice.erf` (`from triton.language.extra import libdevice`)."""
    homes = homes[:2]
    text = " or ".join(homes)
    if any(h.startswith("libdevice.") for h in homes):
        text += " (from triton.language.extra import libdevice)"
    return text


def _with(message: str, *hints: str, room: int = mt.USES_ROOM) -> str:
    """`message` with the first of `hints` (fullest first) that fits, leaving `room` for what
    once-per-file merging adds."""
    return next((message + h for h in hints if len(message) + len(h) <= mt.MESSAGE_LIMIT - room), message)


# Submodules triton.language imports without exporting them: `tl.core.tensor` works, yet the
# API (read from `__all__`) does not list them.
_UNEXPORTED_SUBMODULES = ("core", "standard", "semantic", "random")


def _missing_module(api, module: str) -> str | None:
    """For a chain into a module `api` does not know (`tl.libdevice.erf`): the missing part
    (`libdevice`) when triton.language has no such attribute, else None (a module the
    snapshots do not list, such as a backend's `tl.extra.*`)."""
    head = module[len("triton.language."):].split(".")[0] if module.startswith("triton.language.") else ""
    if not head or head in _UNEXPORTED_SUBMODULES or api.get("triton.language", head) is not None:
        return None
    return head


def version_alternative(ctx) -> bool:
    """Whether the kernel is defined under a module-level `if` on the Triton version
    (`if TRITON3: @triton.jit def f… else: @triton.jit def f…`): one definition is for another
    Triton, whose API it may use."""
    src, node = ctx.src, ctx.kernel.outer.parent
    constants = ctx.module.constants
    while node is not None and node.type != "module":
        if node.type in ("if_statement", "elif_clause"):
            cond = node.child_by_field_name("condition")
            texts = [src.text_of(cond)] if cond is not None else []
            for name in (captures(cond, "(identifier) @i", "i") if cond is not None else []):
                texts += [src.text_of(v) for v in constants.get(src.text_of(name), [])]
            if any("version" in t.lower() for t in texts):
                return True
        node = node.parent
    return False


def check(ctx: KernelContext):
    api = tlapi.active()
    src = ctx.src
    known = set(api.modules())
    if version_alternative(ctx):
        return
    seen = set()
    for node in captures(ctx.kernel.outer, "(attribute) @a", "a"):
        parent = node.parent
        if parent is not None and parent.type == "attribute" and parent.child_by_field_name("object") == node:
            continue  # only whole chains: tl.math.exp, not tl.math
        dotted = dotted_name(node, src)
        if not dotted:
            continue
        resolved = _resolve(ctx, dotted)
        if resolved is None or (resolved[0], resolved[1]) in seen:
            continue
        module, name = resolved
        if module not in known:
            head = _missing_module(api, module)
            if head is None:
                continue
            seen.add(resolved)
            homes = tlapi.math_homes(api, name)
            hint = f"; use {_homes(homes)}" if homes else ""
            spelled = dotted.split("." + head, 1)[0] + "." + head
            yield ctx.finding(src.range(node), _with(f"{mt.clip(spelled, 40)} does not exist in Triton {api.version}",
                                                     hint, f"; use {' or '.join(homes)}" if homes else ""),
                              data={"module": module, "name": name, "triton": api.version, "replacements": homes,
                                    "once_per_file": f"missing:{module}"})
            continue
        entry = api.get(module, name)
        if entry is not None and not tlapi.removed_stub(entry):
            continue
        seen.add(resolved)
        data = {"module": module, "name": name, "triton": api.version}
        if entry is not None:  # a stub that raises: the API still lists it, the compiler refuses it
            had = tlapi.working_in(module, name)
            was = f" (it works in Triton {', '.join(had)})" if had else ""
            yield ctx.finding(src.range(node), _with(f"{mt.clip(dotted, 40)} was removed in Triton {api.version}",
                                                     was + _advice(entry.doc), _advice(entry.doc), was),
                              data={**data, "exists_in": had, "once_per_file": tlapi.removal_key(module, name)})
            continue
        history = [v for v, present in tlapi.history(module, name) if present]
        newer = [v for v in history if tlapi._version_key(v) > tlapi._version_key(api.version)]
        if history and not newer:
            yield ctx.finding(src.range(node), _with(f"{mt.clip(dotted, 40)} was removed in Triton {api.version}",
                                                     f" (it exists in Triton {', '.join(history)})"),
                              data={**data, "exists_in": history, "once_per_file": tlapi.removal_key(module, name)})
            continue
        if newer:
            why = f"is newer than the project's Triton {api.version} (it is in {', '.join(newer)})"
        else:
            why = f"does not exist in Triton {api.version}"
        homes = tlapi.math_homes(api, name, exclude=module)
        sug = [] if homes else api.suggest(module, name)
        prefix = dotted.rsplit(".", 1)[0]
        if homes:
            hint = f"; use {_homes(homes)}"
        else:
            hint = f"; did you mean {', '.join(f'{prefix}.{s}' for s in sug)}?" if sug else ""
        yield ctx.finding(src.range(node), _with(f"{mt.clip(dotted, 40)} {why}", hint, f"; use {' or '.join(homes)}"
                                                 if homes else "", room=0),
                          data={**data, "suggestions": sug, "replacements": homes, "exists_in": history})
