"""Coarsening's "lift" lowering (rewrite/transform_coarsen.py): more rows per program, as one tile.

A row-wise kernel launched with one program per row (`row = tl.program_id(0)`, a grid of (M,))
gets ROWS rows per program, so short rows stop paying a program's fixed costs (index math, a
cross-warp reduction's barrier, a half-idle warp) once each. Where the loop lowering runs the R
rows one after another, this one runs them side by side in a [ROWS, BLOCK] tile; its legality
check is much stricter, so the coarsen transform offers it only where that check passes.

The kernel text barely changes, because Triton broadcasts like NumPy: the row id becomes a column
of ROWS ids, `rows[:, None]`, so every per-row scalar becomes a [ROWS, 1] column and every [BLOCK]
vector that mixes with one a [ROWS, BLOCK] tile. What must change:
- reductions and scans along the row: axis 0 of a vector is now the last axis (`axis=-1`, and
  `keep_dims=True` on reductions so a row's result stays a [ROWS, 1] column);
- the shapes of `tl.zeros` / `tl.full` gain the ROWS axis in front ([BLOCK] -> [ROWS, BLOCK],
  [] -> [ROWS, 1]), so loop-carried accumulators keep one shape;
- ids past the last row are clamped to it: the last program recomputes the last row and stores the
  same values again (harmless for plain stores; kernels with atomics are refused);
- the wrapper launches cdiv(M, ROWS) programs, with ROWS = max(1, ROW_ELEMENTS // BLOCK).

Silent (None) on kernels it cannot lift: 2-D tiles already (subscripts, dots), control flow
(if / while / early exits), atomics, block pointers, other program axes, a program id used only as
`pid * BLOCK` (a blocked elementwise kernel: its block size is config search's job), grids it
cannot read. The verifier judges the rest.
"""

from __future__ import annotations

import ast

from tritonlens.analysis.python_ast import parse as parse_python

from .candidate import Candidate
from .edits import (
    Edit,
    Lines,
    apply,
    call_name,
    constexpr_params,
    dotted,
    first_free,
    kernel_named,
    launch_sites,
    local_assignment,
    names_in,
)

ROW_ELEMENTS = 4096  # elements a program holds, as the hand-written row-wise variants in bench/ do
_REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce"}
_SCANS = {"cumsum", "cumprod", "associative_scan"}
_REFUSED = {"dot", "dot_scaled", "make_block_ptr", "advance", "reshape", "view", "trans", "permute", "join",
            "split", "broadcast_to", "expand_dims", "num_programs", "atomic_add", "atomic_max", "atomic_min",
            "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas", "debug_barrier", "histogram",
            "gather", "interleave", "static_range"}


def _axis_arg(call: ast.Call) -> tuple[ast.AST | None, bool]:
    """(the axis expression, whether it is a keyword) of a tl.* reduction / scan or a method one."""
    kw = next((k for k in call.keywords if k.arg == "axis"), None)
    if kw is not None:
        return kw.value, True
    is_method = not (dotted(call.func) or "").startswith(("tl.", "triton.language."))
    pos = 0 if is_method else 1
    return (call.args[pos], False) if len(call.args) > pos else (None, False)


def _program_id(fn: ast.FunctionDef):
    """(index in fn.body, name) of the one `name = tl.program_id(0)`, else None."""
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and call_name(n) == "program_id"]
    if len(calls) != 1:
        return None
    call = calls[0]
    axis = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "axis"), None)
    if not (isinstance(axis, ast.Constant) and axis.value == 0):
        return None
    for i, st in enumerate(fn.body):
        if (isinstance(st, ast.Assign) and st.value is call and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name)):
            return i, st.targets[0].id
    return None


def _row_like(fn: ast.FunctionDef, pid: str, consts: set[str]) -> bool:
    """The program id indexes rows (scaled by a runtime stride, or an address of its own), not
    only blocks of one flat array (`pid * BLOCK`)."""
    parents = {child: node for node in ast.walk(fn) for child in ast.iter_child_nodes(node)}
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id == pid and isinstance(n.ctx, ast.Load)):
            continue
        up = parents.get(n)
        if isinstance(up, ast.BinOp) and isinstance(up.op, ast.Mult):
            other = up.right if up.left is n else up.left
            if isinstance(other, ast.Constant) or (isinstance(other, ast.Name) and other.id in consts):
                continue
        return True
    return False


def _liftable(fn: ast.FunctionDef) -> bool:
    for n in ast.walk(fn):
        if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Return, ast.Break, ast.Continue, ast.With,
                          ast.Try, ast.Lambda)) and n is not fn:
            return False
        if isinstance(n, ast.Subscript):
            return False  # [:, None] and friends: the kernel has 2-D tiles already
        if isinstance(n, ast.Call) and call_name(n) in _REFUSED:
            return False
        if isinstance(n, ast.Call) and call_name(n) in _REDUCTIONS | _SCANS:
            axis, _ = _axis_arg(n)
            if not (isinstance(axis, ast.Constant) and axis.value in (0, -1)):
                return False  # no axis (a reduction over everything) or one this cannot map
            if any(k.arg in ("keep_dims",) for k in n.keywords):
                return False
        if isinstance(n, ast.Call) and call_name(n) in ("zeros", "full"):
            shape = n.args[0] if n.args else next((k.value for k in n.keywords if k.arg == "shape"), None)
            if not (isinstance(shape, (ast.List, ast.Tuple)) and len(shape.elts) <= 1):
                return False
    return True


def _arange_block(fn: ast.FunctionDef, consts: set[str]) -> str | None:
    """The constexpr that sizes the row's vector: the one `tl.arange(0, BLOCK)` bound."""
    bounds = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and call_name(n) == "arange" and len(n.args) == 2:
            hi = n.args[1]
            if not (isinstance(hi, ast.Name) and hi.id in consts):
                return None
            bounds.add(hi.id)
    return bounds.pop() if len(bounds) == 1 else None


def rows_per_program(text: str, kernel: str, codes: set | None = None) -> Candidate | None:
    tree = parse_python(text)
    fn = kernel_named(tree, kernel)
    if fn is None or any("autotune" in (dotted(d.func if isinstance(d, ast.Call) else d) or "")
                         for d in fn.decorator_list):
        return None  # an autotuner's configs know nothing of ROWS
    consts = set(constexpr_params(fn))
    found = _program_id(fn)
    if found is None or not _liftable(fn):
        return None
    pid_at, pid = found
    if any(isinstance(n, ast.Name) and n.id == pid and isinstance(n.ctx, ast.Store) for n in ast.walk(fn)
           if n is not fn.body[pid_at].targets[0]) or not _row_like(fn, pid, consts):
        return None
    block = _arange_block(fn, consts)
    if block is None:
        return None
    used = names_in(tree) | {a.arg for a in fn.args.args}
    rows_c, n_rows = first_free("ROWS", used), first_free("n_rows", used)
    lines = Lines(text)
    edits = _kernel_edits(text, lines, fn, pid_at, pid, rows_c, n_rows)
    if edits is None:
        return None
    sites = launch_sites(tree, kernel)
    if not sites or len({id(s.function) for s in sites}) != len(sites):
        return None  # no launch, or two in one wrapper (their local names would collide)
    for site in sites:
        more = _launch_edits(text, lines, site, block, rows_c, n_rows, used)
        if more is None:
            return None
        edits += more
    try:
        source = apply(text, edits)
        parse_python(source)
    except (ValueError, SyntaxError):
        return None
    return Candidate("rules", "more rows per program", source,
                     f"{kernel} runs one program per row; {rows_c} = {ROW_ELEMENTS} // {block} rows per program "
                     "as one [ROWS, BLOCK] tile share a program's fixed costs and keep whole warps busy on short rows",
                     kernel=kernel, meta={"codes": [], "structural": True})


def _kernel_edits(text, lines, fn, pid_at, pid, rows_c, n_rows) -> list[Edit] | None:
    st = fn.body[pid_at]
    ind = lines.indent_of(st.lineno)
    edits = [Edit(lines.line_start(st.lineno), lines.line_end(st.end_lineno),
                  f"{ind}# {rows_c} rows per program: a row's scalars are [{rows_c}, 1] columns, its vectors "
                  f"[{rows_c}, BLOCK] tiles;\n"
                  f"{ind}# ids past the last row repeat it (the same values stored twice)\n"
                  f"{ind}{pid} = tl.minimum(tl.program_id(0) * {rows_c} + tl.arange(0, {rows_c}), {n_rows} - 1)"
                  "[:, None]\n")]
    for n in ast.walk(fn):
        if not isinstance(n, ast.Call):
            continue
        name = call_name(n)
        if name in _REDUCTIONS | _SCANS:
            axis, _ = _axis_arg(n)
            s, e = lines.span(axis)
            edits.append(Edit(s, e, "-1"))
            if name in _REDUCTIONS:
                end = lines.span(n)[1] - 1  # before the closing parenthesis
                edits.append(Edit(end, end, ", keep_dims=True"))
        elif name in ("zeros", "full"):
            shape = n.args[0] if n.args else next(k.value for k in n.keywords if k.arg == "shape")
            s, e = lines.span(shape)
            inner = ast.unparse(shape.elts[0]) if shape.elts else "1"
            edits.append(Edit(s, e, f"[{rows_c}, {inner}]"))
    last = fn.args.args[-1]
    end = lines.span(last)[1]
    edits.append(Edit(end, end, f", {n_rows}, {rows_c}: tl.constexpr"))
    return edits


def _grid_axis0(site, lines):
    """(the node of grid axis 0, the statement to insert before, or None) or None."""
    grid = site.grid
    holder = None
    if isinstance(grid, ast.Name):
        holder = local_assignment(site.function, grid.id, site.call.lineno)
        if holder is None or len(holder.targets) != 1:
            return None
        grid = holder.value
    if isinstance(grid, ast.Tuple) and len(grid.elts) == 1 and not names_in(grid) & {"meta"}:
        return grid.elts[0], holder
    return None


def _launch_edits(text, lines, site, block, rows_c, n_rows, used) -> list[Edit] | None:
    found = _grid_axis0(site, lines)
    if found is None:
        return None
    axis0, holder = found
    block_kw = next((k for k in site.call.keywords if k.arg == block), None)
    if block_kw is None or any(k.arg is None for k in site.call.keywords):
        return None
    stmt = next((st for st in ast.walk(site.function) if isinstance(st, ast.stmt) and st is not site.function
                 and any(n is site.call for n in ast.walk(st)) and not any(
                     isinstance(c, ast.stmt) and any(n is site.call for n in ast.walk(c))
                     for c in ast.iter_child_nodes(st))), None)
    if stmt is None:
        return None
    first = holder if holder is not None and holder.lineno < stmt.lineno else stmt
    rows_v = first_free("rows_per_program", used | names_in(site.function))
    ind = lines.indent_of(first.lineno)
    g_text = text[slice(*lines.span(axis0))]
    b_text = text[slice(*lines.span(block_kw.value))]
    edits = [Edit(lines.line_start(first.lineno), lines.line_start(first.lineno),
                  f"{ind}{rows_v} = max(1, {ROW_ELEMENTS} // ({b_text}))  # rows per program: "
                  f"{ROW_ELEMENTS} elements each\n")]
    s, e = lines.span(axis0)
    edits.append(Edit(s, e, f"triton.cdiv({g_text}, {rows_v})"))
    end = lines.span(site.call)[1] - 1
    edits.append(Edit(end, end, f", {n_rows}={g_text}, {rows_c}={rows_v}"))
    return edits
