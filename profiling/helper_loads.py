"""Pointers a kernel loads, itself or through a jit helper (`b = load_ptr(b_ptrs, mask, ...)`, whose
body returns `tl.load(ptrs, ...)`), typed by what is done with the loaded values, there or in the
helper they are handed to (`dequantize(b, ...)`, whose body shifts and masks `b`): packed quantized
weights are integers, and a float stand-in does not compile. The helpers may live in another
file of the project (imported_helpers.py)."""

from __future__ import annotations

import re

from tritonlens.analysis.estimates import base_pointer
from tritonlens.analysis.kernel_body import split_arguments
from tritonlens.analysis.source import captures
from tritonlens.profiling.kernel_pointers import (
    computed_from,
    derived_reads,
    held_type,
    joined_lines,
)

_CALLS = "(call function: (identifier) @f) @c"


def helper_loaded_pointers(kernel, helpers, pointers: set[str]) -> dict[str, str]:
    """{pointer: integer dtype} for the pointers whose helper-loaded values are integers."""
    src = kernel.src
    text = joined_lines(kernel.text)
    derived = derived_reads(kernel)
    calls = captures(kernel.node, _CALLS, "c")
    out: dict[str, str] = {}
    for call in calls:
        helper = helpers.get(src.text_of(call.child_by_field_name("function")))
        index = _loaded_param(helper) if helper is not None and helper is not kernel else None
        left = _assigned(call, src)
        args, _kwargs = split_arguments(call, src)
        if index is None or left is None or index >= len(args):
            continue
        try:
            base = base_pointer(kernel, args[index])
        except Exception:  # noqa: BLE001 - half-typed code: a pointer we cannot trace keeps its type
            base = None
        if base not in pointers:
            continue
        held = computed_from({left}, derived, pointers)
        dt = held_type(held, pointers - {base}, text) or _bitwise_in_helpers(calls, src, helpers, held)
        if dt is not None:
            out.setdefault(base, dt)
    for c in kernel.calls:  # `b = tl.load(b_ptrs)`, then `dequantize(b, ...)` shifts it
        left = _assigned(c.node, src) if c.name == "load" else None
        if left is None:
            continue
        try:
            base = base_pointer(kernel, c.arg(0, "pointer"))
        except Exception:  # noqa: BLE001 - half-typed code: a pointer we cannot trace keeps its type
            base = None
        if base in pointers and _bitwise_in_helpers(calls, src, helpers, computed_from({left}, derived, pointers)):
            out.setdefault(base, "int32")
    return out


def _loaded_param(helper) -> int | None:
    """The index of the parameter a helper loads from and returns (`return tl.load(ptrs, ...)`)."""
    names = [p.name for p in helper.params]
    for c in helper.calls:
        if c.name != "load" or "return" not in helper.text:
            continue
        try:
            base = base_pointer(helper, c.arg(0, "pointer"))
        except Exception:  # noqa: BLE001 - half-typed code
            base = None
        if base in names:
            return names.index(base)
    return None


def _assigned(call, src) -> str | None:
    """The name a call's result is assigned to (`b = load_ptr(...)`), or None."""
    parent = call.parent
    if parent is not None and parent.type == "assignment" and parent.child_by_field_name("right") == call:
        left = parent.child_by_field_name("left")
        return src.text_of(left) if left is not None and left.type == "identifier" else None
    return None


def _bitwise_in_helpers(calls, src, helpers, held: set[str]) -> str | None:
    """int32 when a value in `held` is handed to a helper that shifts or masks that parameter."""
    for call in calls:
        args, _kwargs = split_arguments(call, src)
        passed = [i for i, a in enumerate(args) if a is not None and a.type == "identifier" and src.text_of(a) in held]
        helper = helpers.get(src.text_of(call.child_by_field_name("function"))) if passed else None
        if helper is None:
            continue
        for i in passed:
            if i < len(helper.params):
                p = re.escape(helper.params[i].name)
                if re.search(rf"\b{p}\b\s*(?:>>|<<|[&|^](?!=))", helper.text or ""):
                    return "int32"
    return None
