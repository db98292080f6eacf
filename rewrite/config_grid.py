"""Grid literals that duplicate a block size: `grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64),)`
beside `BLOCK_M=64, BLOCK_N=64`. A config that changes the block must change those divisors with
it, or a larger tile launches programs that only mask (a smaller one would skip work).

A divisor is the `V` of `cdiv(X, V)`, `X // V`, `(X + V - 1) // V` or `-(-X // V)` in the launch's
grid: inline, the grid variable assigned before the launch in the same function, or a local the
grid reads (`num_blocks = (n + 1023) // 1024; kernel[(num_blocks,)]`). A grid dividing by the
block's own name (`cdiv(n, BLOCK)`, `meta["BLOCK"]`) needs no edit: the name moves with the value. It belongs to the block
knob whose current value is `V` and whose name ends with X's size name (BLOCK_M ↔ M, BLOCK_ROWS ↔
n_rows, BLOCK_M ↔ x.shape[0]); failing a name, to the only block knob of that value when the grid
divides by that value once. Where the owner cannot be told apart, the knobs of that value are
pinned: the search leaves them at their current value rather than guess.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from .edits import dotted, local_assignment

_SIZE_ROLES = ("M", "N", "K", "block")
_PREFIXES = ("BLOCK_SIZE_", "BLOCK_", "TILE_SIZE_", "TILE_")


@dataclass
class Divisor:
    value: int
    parts: list  # (literal node, offset): the literals that move, each written as block + offset
    key: str | int | None  # X's size name (upper case), a shape index, or None for an expression
    whole: bool = False  # a plain floor X // V: the programs cover whole tiles only (see floor_divided)
    argument: str | None = None  # set when the division is in this launch argument, not the grid


def grid_expr(site):
    """The expression the launch's grid is written with: inline, or the grid variable's value."""
    grid = site.grid
    if isinstance(grid, ast.Name):
        assign = local_assignment(site.function, grid.id, site.call.lineno)
        return assign.value if assign is not None else None
    return grid


def grid_locals(site, expr=None, depth: int = 0) -> dict[str, ast.AST]:
    """{name: value} of the wrapper's locals the grid expression reads (`num_blocks` in
    `(num_blocks,)`), followed through locals they read in turn."""
    expr = grid_expr(site) if expr is None else expr
    found: dict[str, ast.AST] = {}
    if expr is None or depth > 3:
        return found
    line = site.call.lineno
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and n.id not in found:
            assign = local_assignment(site.function, n.id, line)
            if assign is not None and assign.value is not expr:
                found[n.id] = assign.value
                found.update({k: v for k, v in grid_locals(site, assign.value, depth + 1).items() if k not in found})
    return found


def grid_sources(site) -> list[ast.AST]:
    """The grid expression and the values of the locals it reads: where its divisors are written.
    A grid function defined in the wrapper (`def grid(meta): return (cdiv(n, meta["BLOCK"]),)`)
    is read like a lambda: its return values."""
    expr = grid_expr(site)
    returns = [n.value for n in ast.walk(_grid_function(site) or ast.Pass()) if isinstance(n, ast.Return) and n.value]
    return ([expr] if expr is not None else []) + returns + list(grid_locals(site).values())


def _grid_function(site) -> ast.FunctionDef | None:
    """The function the wrapper defines as the grid, when it reads its meta argument."""
    if not isinstance(site.grid, ast.Name) or site.function is None:
        return None
    for n in ast.walk(site.function):
        if isinstance(n, ast.FunctionDef) and n.name == site.grid.id and n.args.args:
            meta = n.args.args[0].arg
            if any(isinstance(x, ast.Subscript) and isinstance(x.value, ast.Name) and x.value.id == meta
                   for x in ast.walk(n)):
                return n
    return None


# what a grid may call and still be read here: anything else computes it where this cannot look
_GRID_CALLS = {"cdiv", "next_power_of_2", "min", "max", "int", "len", "numel", "size", "ceil", "prod", "float"}


def opaque_grid(site, tree: ast.Module) -> str | None:
    """Why the launch's grid cannot be seen from here (it may divide by a block this cannot move
    with it), or None: it is passed in by the wrapper's caller, or built by another function."""
    grid = site.grid
    fn = site.function
    if (isinstance(grid, ast.Name) and local_assignment(fn, grid.id, site.call.lineno) is None
            and _grid_function(site) is None):
        params = [a.arg for a in (fn.args.args + fn.args.kwonlyargs)] if fn is not None else []
        if grid.id in params:
            return "grid passed in as a parameter"
        if any(isinstance(n, ast.FunctionDef) and n.name == grid.id for n in ast.walk(tree)):
            return "grid built in another function"
    expr = grid_expr(site)
    if expr is None:
        return None
    tops = list(expr.elts) if isinstance(expr, ast.Tuple) else [expr]
    for top in tops:  # an element that is a local: its value
        if isinstance(top, ast.Name):
            assign = local_assignment(fn, top.id, site.call.lineno)
            top = assign.value if assign is not None else top
        if isinstance(top, ast.Call) and (dotted(top.func) or "").split(".")[-1] not in _GRID_CALLS:
            return "grid built in another function"
    return None


def _divisions(site):
    """(division node, the name or meta key it divides by) for each `cdiv(n, B)` and `n // B` in the
    grid whose divisor is named (`B`, `meta["B"]`)."""
    for expr in grid_sources(site):
        for n in ast.walk(expr):
            v = None
            if isinstance(n, ast.Call) and (dotted(n.func) or "").split(".")[-1] == "cdiv" and len(n.args) == 2:
                v = n.args[1]
            elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv):
                v = n.right
            if isinstance(v, ast.Name):
                yield n, v.id
            elif isinstance(v, ast.Subscript) and isinstance(v.slice, ast.Constant) and isinstance(v.slice.value, str):
                yield n, v.slice.value


def named_divisors(site) -> set[str]:
    """Names and meta keys the grid divides by (`cdiv(n, BLOCK)`, `n // BLOCK`, `meta["BLOCK"]`):
    a block of that name moves its grid with it whatever its value."""
    return {name for _, name in _divisions(site)}


def floor_divided(site) -> set[str]:
    """Names and meta keys the grid floors a size by without rounding up (`D // BLOCK`): the
    programs cover whole tiles only, so the block must divide the size. A block may shrink to a
    divisor of its value (which still divides the size) but never grow."""
    return {name for n, name in _divisions(site) if isinstance(n, ast.BinOp) and not _rounds_up(n)}


def _rounds_up(n: ast.BinOp) -> bool:
    """`(X + V - 1) // V`, `(X + V-1) // V` or `-(-X // V)` (the minus is on the outside, so
    only the inner operand's sign shows here); V a literal or a name."""
    x, v = n.left, n.right
    same = (lambda a: ast.dump(a) == ast.dump(v))
    if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.USub):
        return True
    if (isinstance(x, ast.BinOp) and isinstance(x.op, ast.Sub) and _is_int(x.right) and x.right.value == 1
            and isinstance(x.left, ast.BinOp) and isinstance(x.left.op, ast.Add) and same(x.left.right)):
        return True
    if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Add):
        r = x.right
        if _is_int(r) and _is_int(v) and r.value == v.value - 1:
            return True
        if (isinstance(r, ast.BinOp) and isinstance(r.op, ast.Sub) and same(r.left) and _is_int(r.right)
                and r.right.value == 1):
            return True
    return False


def _is_int(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool)


def _size_key(x):
    if isinstance(x, ast.Name):
        return x.id.upper()
    if isinstance(x, ast.Attribute):
        return x.attr.upper()
    # x.shape[0] / x.size(0): the dimension's index
    if (isinstance(x, ast.Subscript) and isinstance(x.value, ast.Attribute) and x.value.attr == "shape"
            and _is_int(x.slice)):
        return x.slice.value
    if (isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and x.func.attr == "size"
            and len(x.args) == 1 and _is_int(x.args[0])):
        return x.args[0].value
    return None


def divisors(expr) -> list[Divisor]:
    out = []
    if expr is None:
        return out
    for n in ast.walk(expr):
        if (isinstance(n, ast.Call) and (dotted(n.func) or "").split(".")[-1] == "cdiv" and len(n.args) == 2
                and _is_int(n.args[1])):
            v = n.args[1]
            out.append(Divisor(v.value, [(v, 0)], _size_key(n.args[0])))
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv) and _is_int(n.right):
            v, x = n.right, n.left
            parts = [(v, 0)]
            # the rounding up moves with the divisor: (X + V - 1) // V, (X + V-1) // V
            if (isinstance(x, ast.BinOp) and isinstance(x.op, ast.Sub) and _is_int(x.right) and x.right.value == 1
                    and isinstance(x.left, ast.BinOp) and isinstance(x.left.op, ast.Add)
                    and _is_int(x.left.right) and x.left.right.value == v.value):
                parts.append((x.left.right, 0))
                x = x.left.left
            elif (isinstance(x, ast.BinOp) and isinstance(x.op, ast.Add) and _is_int(x.right)
                  and x.right.value == v.value - 1):
                parts.append((x.right, -1))
                x = x.left
            elif isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.USub):  # -(-X // V)
                x = x.operand
            out.append(Divisor(v.value, parts, _size_key(x), whole=not _rounds_up(n)))
    return out


def _suffix(param: str) -> str:
    up = param.upper()
    for p in _PREFIXES:
        if up.startswith(p):
            return up[len(p):]
    return ""


def _names(knob, key) -> bool:
    suffix = _suffix(knob.param)
    if isinstance(key, int):
        return (knob.role, key) in (("M", 0), ("N", 1))
    if not suffix or key is None:
        return False
    return key == suffix or key.endswith("_" + suffix)


def pair(knobs: dict, sites: list) -> tuple[dict[str, list], set[str]]:
    """({knob: [grid divisors it moves]}, {knobs pinned because their divisor's owner is unclear})."""
    blocks = [k for k in knobs.values()
              if k.role in _SIZE_ROLES and not k.capped and k.current is not None]
    owned: dict[str, list] = {}
    pinned: set[str] = set()
    for site in sites:
        found = [d for expr in grid_sources(site) for d in divisors(expr)]
        # a count the launch passes beside the grid (a coarsened kernel's n_programs_0=cdiv(n, 1024))
        found += [replace(d, argument=kw.arg) for kw in site.call.keywords if kw.arg for d in divisors(kw.value)]
        for d in found:
            same = [k for k in blocks if k.current == d.value]
            if not same:
                continue
            named = [k for k in same if _names(k, d.key)]
            owner = None
            if len(named) == 1:
                owner = named[0]
            elif (not named and len(same) == 1 and same[0].role != "K"
                  and sum(o.value == d.value for o in found) == 1
                  and not any(_names(k, d.key) for k in blocks)):
                owner = same[0]
            if owner is not None:
                owned.setdefault(owner.param, []).append(d)
            else:
                pinned |= {k.param for k in (named or [k for k in same if k.role != "K"])}
    return owned, pinned
