"""Tree helpers the rules share: parentheses, method calls, enclosing conditions, names, lines."""

from __future__ import annotations

from ..source import walk


def ancestors(node, stop=None):
    p = node.parent
    while p is not None and (stop is None or p.id != stop.id):
        yield p
        if p.type == "function_definition":
            return
        p = p.parent


def strip_parens(node):
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def method_call(node, src, name: str):
    """`x.to(...)` → (x, call args node) when `node` calls method `name`; else None."""
    if node is None or node.type != "call":
        return None
    fn = node.child_by_field_name("function")
    if fn is None or fn.type != "attribute":
        return None
    if src.text_of(fn.child_by_field_name("attribute")) != name:
        return None
    return fn.child_by_field_name("object"), node.child_by_field_name("arguments")


def enclosing_conditions(node):
    """Condition nodes of the `if`/`elif` statements (and conditional expressions) around `node`."""
    out = []
    child = node
    for p in ancestors(node):
        if p.type in ("if_statement", "elif_clause"):
            cond = p.child_by_field_name("condition")
            if cond is not None and cond.id != child.id:
                out.append(cond)
        elif p.type == "conditional_expression":
            kids = p.named_children
            if len(kids) == 3 and child.id != kids[1].id:
                out.append(kids[1])
        child = p
    return out


def line_of(node) -> int:
    return node.start_point[0] + 1


def names_in_text(node, src) -> set[str]:
    return {src.text_of(n) for n in [node] + list(walk(node)) if n.type == "identifier"}
