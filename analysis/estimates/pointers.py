"""Which pointer parameter an address is based on, read from the kernel's assignments."""

from __future__ import annotations

from ..model import Kernel, TlCall

# Calls whose first argument is the pointer they pass on.
_POINTER_THROUGH = ("multiple_of", "max_contiguous", "max_constancy", "make_block_ptr", "advance",
                    "make_tensor_descriptor")


def unwrap(node):
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def reaching(kernel: Kernel, name: str, at: int):
    """The assignment of `name` that reaches byte `at`: the last plain one before it, or the loop
    whose target it is (back edges ignored: Triton requires loop-carried values to keep their
    shape, and `p += step` keeps the base of `p`)."""
    best = None
    for a in kernel.assignments.get(name, []):
        n = a.node
        if n is None:
            continue
        inside = n.start_byte <= at < n.end_byte
        if a.value is None and n.type == "for_statement":
            if inside:
                return a
            continue
        if inside or n.start_byte >= at or a.augmented:
            continue
        if best is None or n.start_byte > best.node.start_byte:
            best = a
    return best


def call_at(kernel: Kernel, node) -> TlCall | None:
    """The tl call whose node is `node`, if it is one."""
    calls = kernel.__dict__.get("_tl_calls_by_span")
    if calls is None:
        calls = kernel.__dict__["_tl_calls_by_span"] = {(c.node.start_byte, c.node.end_byte): c for c in kernel.calls}
    return calls.get((node.start_byte, node.end_byte))


def base_pointer(kernel: Kernel, node, depth: int = 0) -> str | None:
    """The pointer parameter an address expression is based on (`x_ptr + offs` → "x_ptr")."""
    node = unwrap(node)
    if node is None or depth > 16:
        return None
    t = node.type
    if t == "identifier":
        name = kernel.src.text_of(node)
        a = reaching(kernel, name, node.start_byte)
        if a is None:
            return name if kernel.param(name) is not None else None
        if a.value is None:
            return None
        return base_pointer(kernel, a.value, depth + 1)
    if t == "binary_operator":
        op = kernel.src.text_of(node.child_by_field_name("operator"))
        if op not in ("+", "-"):
            return None
        for side in ("left", "right"):
            b = base_pointer(kernel, node.child_by_field_name(side), depth + 1)
            if b is not None:
                return b
        return None
    if t == "subscript":
        return base_pointer(kernel, node.child_by_field_name("value"), depth + 1)
    if t == "call":
        c = call_at(kernel, node)
        if c is not None and c.name in _POINTER_THROUGH:
            return base_pointer(kernel, c.args[0] if c.args else c.kwargs.get("base"), depth + 1)
    return None
