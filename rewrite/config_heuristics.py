"""Constexprs a `@triton.heuristics({...})` decorator computes, seen as knobs or not.

A heuristic that computes a flag (`"EVEN_K": lambda args: args["K"] % 64 == 0`) is never a knob:
it states a fact about the sizes the kernel relies on. One that computes a tile size is: a
literal (`lambda args: 64`) is edited, a literal cap (`min(next_power_of_2(args["n"]), 1024)`) is
the knob, and an uncapped computation gets a cap, but only where any block is correct (the
kernel loops over it, or the grid divides by it: `meta["BLOCK"]`). Elsewhere the size covers a
row the kernel takes in one block, a correctness requirement left alone.
"""

from __future__ import annotations

import ast

from .edits import dotted


def _tables(fn: ast.FunctionDef):
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and (dotted(d.func) or "").split(".")[-1] == "heuristics":
            for arg in list(d.args) + [k.value for k in d.keywords if k.arg == "values"]:
                if isinstance(arg, ast.Dict):
                    yield arg


def heuristics_keys(fn: ast.FunctionDef) -> set[str]:
    """The constexprs a @triton.heuristics({...}) decorator computes."""
    return {k.value for table in _tables(fn) for k in table.keys
            if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def heuristic_body(fn: ast.FunctionDef, name: str) -> ast.AST | None:
    """The expression the heuristic for `name` computes (its lambda's body), None when there is
    none or it computes a flag (a comparison, a bool, a `not`)."""
    for table in _tables(fn):
        for k, v in zip(table.keys, table.values):
            if isinstance(k, ast.Constant) and k.value == name and isinstance(v, ast.Lambda):
                body = v.body
                if isinstance(body, ast.Compare | ast.BoolOp) or (
                        isinstance(body, ast.UnaryOp) and isinstance(body.op, ast.Not)):
                    return None
                if isinstance(body, ast.Constant) and not isinstance(body.value, int) or (
                        isinstance(body, ast.Constant) and isinstance(body.value, bool)):
                    return None
                if isinstance(body, ast.Call) and (dotted(body.func) or "") == "bool":
                    return None
                if isinstance(body, ast.IfExp) and all(isinstance(b, ast.Constant) and isinstance(b.value, bool)
                                                       for b in (body.body, body.orelse)):
                    return None  # `True if args["softcap"] != 0 else False`
                return body
    return None
