"""The launch side of coarsening (rewrite/transform_coarsen.py): read a launch's grid, and divide
one of its axes by the factor wherever the grid is written.

A grid is read when it is a tuple written inline (`kernel[(M, triton.cdiv(N, B))]`), a local of
the launching function assigned once (`grid = (M,)`), or a one-argument lambda returning a tuple
(`grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)`). Any expression
may stand on an axis (`n_rows`, `x.shape[0]`, `(n + B - 1) // B`, `-(-n // B)`): it is kept as
written and wrapped, `triton.cdiv(<axis>, R)`, and the launch passes the original expression as the
kernel's program count. A tuple local that other code reads too (one grid for several kernels) is
left as it is: this launch indexes it, `kernel[(triton.cdiv(grid[0], R), grid[1])]`. A lambda's
`meta["X"]` is read from the launch's own keyword `X=`; a grid passed in as a parameter, built in
another function, or a lambda shared with other launches is refused with its reason (the edit would
reach code this launch does not own).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .coarsen_check import Refusal
from .edits import Edit, LaunchSite, Lines, apply, local_assignment


@dataclass
class GridRead:
    site: LaunchSite
    elts: list  # the grid tuple's axis expressions
    meta: str | None  # the lambda's parameter, when the grid is a lambda
    shared: str | None = None  # a tuple local other code reads too: indexed at the launch, not edited


def _params(fn: ast.FunctionDef) -> set[str]:
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return set(names)


def read_grid(site: LaunchSite) -> GridRead | Refusal:
    grid = site.grid
    if isinstance(grid, ast.Name):
        fn, name = site.function, grid.id
        if fn is None:
            return Refusal(f"the grid {name} is a module-level name: other code may launch with it")
        if name in _params(fn):
            return Refusal(f"the grid {name} is passed in as a parameter of {fn.name}: it is built elsewhere")
        stores = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
        loads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        holder = local_assignment(fn, name, site.call.lineno)
        if len(stores) != 1 or holder is None or len(holder.targets) != 1 or not isinstance(holder.targets[0], ast.Name):
            return Refusal(f"the grid {name} is not one plain assignment in {fn.name} before the launch")
        grid = holder.value
        if len(loads) != 1:
            if isinstance(grid, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in grid.elts):
                return GridRead(site, list(grid.elts), None, shared=name)
            return Refusal(f"the grid {name} is used by more than this launch and is not a tuple it can index")
    meta = None
    if isinstance(grid, ast.Lambda):
        a = grid.args
        if len(a.args) != 1 or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg:
            return Refusal("the grid lambda does not take one `meta` argument")
        meta, grid = a.args[0].arg, grid.body
    if not isinstance(grid, ast.Tuple) or any(isinstance(e, ast.Starred) for e in grid.elts):
        return Refusal(f"the grid `{ast.unparse(site.grid)}` is not a tuple this transform can read")
    return GridRead(site, list(grid.elts), meta)


def _launch_value(text: str, lines: Lines, read: GridRead, expr: ast.AST) -> str | Refusal:
    """The axis expression as the launch can evaluate it: a lambda's meta["X"] read from `X=`."""
    s0, e0 = lines.span(expr)
    if read.meta is None:
        return text[s0:e0]
    kws = {k.arg: k.value for k in read.site.call.keywords if k.arg is not None}
    edits = []
    for n in ast.walk(expr):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == read.meta:
            key = n.slice.value if isinstance(n.slice, ast.Constant) else None
            if not isinstance(key, str) or key not in kws:
                return Refusal(f"the grid lambda reads {ast.unparse(n)}, which the launch does not pass "
                               "(an autotune config or a default sets it)")
            s, e = lines.span(n)
            vs, ve = lines.span(kws[key])
            edits.append(Edit(s - s0, e - s0, f"({text[vs:ve]})"))
    covered = {id(n.value) for n in ast.walk(expr) if isinstance(n, ast.Subscript)}
    if any(isinstance(n, ast.Name) and n.id == read.meta and id(n) not in covered for n in ast.walk(expr)):
        return Refusal(f"the grid lambda uses {read.meta} other than as {read.meta}[\"NAME\"]")
    return apply(text[s0:e0], edits)


def launch_edits(text: str, lines: Lines, read: GridRead, axis: int, factor: int, n_prog: str,
                 coarsen_c: str) -> list[Edit] | Refusal:
    """Divide the grid's `axis` by `factor` and pass the original program count and the factor."""
    if axis >= len(read.elts):
        return Refusal(f"a launch's grid has no axis {axis}: `{ast.unparse(read.site.grid)}`")
    if read.shared is not None:
        # other launches read this local as it is: this one indexes it and divides its own copy
        g = read.shared
        axes = [f"triton.cdiv({g}[{i}], {factor})" if i == axis else f"{g}[{i}]" for i in range(len(read.elts))]
        value = f"{g}[{axis}]"
        edits = [Edit(*lines.span(read.site.grid), f"({', '.join(axes)}{',' if len(axes) == 1 else ''})")]
    else:
        expr = read.elts[axis]
        value = _launch_value(text, lines, read, expr)
        if isinstance(value, Refusal):
            return value
        s, e = lines.span(expr)
        edits = [Edit(s, e, f"triton.cdiv({text[s:e]}, {factor})")]
    call = read.site.call
    args = list(call.args) + list(call.keywords)
    added = f"{n_prog}={value}, {coarsen_c}={factor}"
    if args:
        end = max(lines.span(a)[1] for a in args)
        edits.append(Edit(end, end, ", " + added))
    else:
        end = lines.span(call)[1] - 1  # before the closing parenthesis of `kernel[grid]()`
        edits.append(Edit(end, end, added))
    return edits
