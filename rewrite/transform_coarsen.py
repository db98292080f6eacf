"""Program coarsening: R programs' work per program along one grid axis.

What it does. A kernel launched with one program per row, token, block or tile along axis `a`
gets R consecutive program ids per program. The kernel's body moves, unchanged but for
`tl.program_id(a)`, into a new @triton.jit helper `<kernel>_one(<params>, <pid>)`, and the kernel
becomes a loop over the R ids it now owns:

    @triton.jit
    def kernel(<params>, n_programs_0, COARSEN_0: tl.constexpr):
        for _i in tl.static_range(COARSEN_0):
            _pid = tl.program_id(0) * COARSEN_0 + _i
            if _pid < n_programs_0:
                kernel_one(<params>, _pid)

Every launch of the kernel in the file divides the grid's axis `a` by R wherever the grid is
written (rewrite/coarsen_grid.py) and passes `n_programs_0=<the original axis>, COARSEN_0=R`.
The helper lowering survives any body (early `return`, if/else, loops, helpers); the guard skips
the ids of the ragged tail, so each original program runs exactly once and the results are
identical. Fewer, fatter programs pay a program's fixed cost (scheduling, index math, the
prologue's loads of scalars) once per R ids: the win for short rows, tokens and small tiles.

When it applies: along an axis whose programs are independent (rewrite/coarsen_check.py: no
atomics, no `tl.num_programs(a)`, no barrier or volatile protocol, no inline assembly, helpers
included), on a module-level kernel that no other kernel calls as a device function, in a file that imports `triton`
and `triton.language as tl`, when every launch's grid can be read. R is a knob like any other:
`coarsenings` offers R in FACTORS for each axis whose extent is not the literal 1, at most
MAX_CANDIDATES in all, and the verifier measures each.

A second lowering, the vectorized [ROWS, BLOCK] lift of one-program-per-row kernels
(rewrite/transform_coarsen_lift.py), is offered too where its stricter check passes.

What it never touches: the kernel's other decorators (autotune, heuristics stay on the kernel;
their configs cannot set the fresh names), the body's arithmetic, other kernels, and launches
of other kernels. When it does not apply it answers a `Refusal` with the reason, never raises.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tritonlens.analysis.python_ast import parse as parse_python

from .candidate import Candidate
from .coarsen_check import Refusal, independent, program_id_calls
from .coarsen_grid import GridRead, launch_edits, read_grid
from .edits import Edit, Lines, apply, first_free, kernel_named, kernels, launch_sites
from .transform_coarsen_lift import rows_per_program

FACTORS = (2, 4, 8)
MAX_CANDIDATES = 6  # each one costs a verification at real size


def _bound_names(tree: ast.Module) -> set[str]:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.alias):
            out.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.keyword) and n.arg:
            out.add(n.arg)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier():
            out.add(n.value)  # a key of an autotune config or of meta["..."] names a parameter too
    return out


def _imports_triton(tree: ast.Module) -> bool:
    """The generated code says `triton.jit`, `triton.cdiv` and `tl.*`: both names must mean those."""
    found = set()
    for n in tree.body:
        if isinstance(n, ast.Import):
            for a in n.names:
                if a.name == "triton" and a.asname is None:
                    found.add("triton")
                if a.name == "triton.language" and a.asname == "tl":
                    found.add("tl")
        elif isinstance(n, ast.ImportFrom) and n.module == "triton" and any(
                a.name == "language" and a.asname == "tl" for a in n.names):
            found.add("tl")
    return found == {"triton", "tl"}


@dataclass
class _Plan:
    """A kernel and its launches' grids, checked for what coarsening along any axis needs."""

    tree: ast.Module
    fn: ast.FunctionDef
    reads: list[GridRead]


def _prepare(text: str, kernel: str) -> _Plan | Refusal:
    try:
        tree = parse_python(text)
    except SyntaxError as exc:
        return Refusal(f"the file does not parse: {exc}")
    fn = kernel_named(tree, kernel)
    if fn is None:
        return Refusal(f"no @triton.jit kernel named {kernel}")
    if fn.col_offset != 0 or fn not in tree.body:
        return Refusal(f"{kernel} is not a module-level function")
    if not _imports_triton(tree):
        return Refusal("the file does not `import triton` and `import triton.language as tl`")
    a = fn.args
    if a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg or not a.args:
        return Refusal(f"{kernel}'s parameters are not plain positional ones")
    callers = [f.name for f in kernels(tree) if f is not fn and any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == kernel for n in ast.walk(f))]
    if callers:
        return Refusal(f"{kernel} is also called as a device function by {', '.join(callers)}: "
                       "its new parameters would break those calls")
    if fn.body[0].lineno == fn.lineno:
        return Refusal(f"{kernel}'s body starts on its `def` line")
    sites = launch_sites(tree, kernel)
    if not sites:
        return Refusal(f"no launch of {kernel} in this file: the grid it would divide is elsewhere")
    reads = []
    for site in sites:
        read = read_grid(site)
        if isinstance(read, Refusal):
            return read
        reads.append(read)
    return _Plan(tree, fn, reads)


def _extent_one(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and expr.value == 1


def plan_axes(text: str, kernel: str) -> tuple[list[int], dict[int, Refusal]]:
    """(the axes `kernel` can be coarsened along, why each other axis cannot)."""
    plan = _prepare(text, kernel)
    if isinstance(plan, Refusal):
        return [], {a: plan for a in range(3)}
    axes, why = [], {}
    for a in range(3):
        refusal = independent(plan.tree, plan.fn, a)
        if refusal is None and any(a >= len(r.elts) or _extent_one(r.elts[a]) for r in plan.reads):
            refusal = Refusal(f"a launch's grid has extent 1 (or none) on axis {a}")
        if refusal is None:
            axes.append(a)
        else:
            why[a] = refusal
    return axes, why


def coarsen(text: str, kernel: str, axis: int = 0, factor: int = 4) -> Candidate | Refusal:
    """`kernel` with `factor` programs' work per program along `axis`, or why not."""
    if axis not in (0, 1, 2) or factor < 2:
        return Refusal(f"axis {axis} / factor {factor}: an axis is 0, 1 or 2 and a factor at least 2")
    plan = _prepare(text, kernel)
    if isinstance(plan, Refusal):
        return plan
    fn, tree = plan.fn, plan.tree
    refusal = independent(tree, fn, axis)
    if refusal is not None:
        return refusal
    lines = Lines(text)
    used = _bound_names(tree)
    helper = first_free(f"{kernel}_one", used)
    pid = first_free(f"pid_{axis}", used)
    n_prog = first_free(f"n_programs_{axis}", used)
    coarsen_c = first_free(f"COARSEN_{axis}", used)
    loop_i = first_free("_i", used)
    loop_pid = first_free("_pid", used)

    edits: list[Edit] = []
    for read in plan.reads:
        more = launch_edits(text, lines, read, axis, factor, n_prog, coarsen_c)
        if isinstance(more, Refusal):
            return more
        edits += more
    edits.append(_kernel_edit(text, lines, fn, axis, helper, pid, n_prog, coarsen_c, loop_i, loop_pid))
    try:
        source = apply(text, edits)
        parse_python(source)
    except (ValueError, SyntaxError) as exc:
        return Refusal(f"the rewritten file does not hold together: {exc}")
    return Candidate(
        "rules", f"coarsen axis {axis} by {factor} ({factor} programs' work per program)", source,
        f"{kernel}'s programs along grid axis {axis} are independent (no atomics, no grid-stride loop), so each "
        f"program now runs {factor} consecutive program ids in a loop: {factor}x fewer programs pay a program's fixed "
        f"cost once each, and the tail guard `{loop_pid} < {n_prog}` skips ids past the original grid, so every "
        "original program runs exactly once and the results are identical",
        kernel=kernel,
        meta={"codes": [], "structural": True, "transform": "coarsen", "lowering": "loop", "axis": axis,
              "factor": factor})


def _kernel_edit(text, lines, fn, axis, helper, pid, n_prog, coarsen_c, loop_i, loop_pid) -> Edit:
    """The kernel's definition replaced by the helper holding its body, then the looping kernel."""
    first = min([fn.lineno] + [d.lineno for d in fn.decorator_list])
    start, body_start = lines.line_start(first), lines.line_start(fn.body[0].lineno)
    end = lines.line_end(fn.end_lineno)
    body = text[body_start:end]
    ids = [Edit(s - body_start, e - body_start, pid)
           for st in fn.body for s, e in (lines.span(c) for c in program_id_calls(st, axis))]
    params = [text[slice(*lines.span(a))] for a in fn.args.args]
    helper_def = (f"@triton.jit\ndef {helper}({', '.join(params)}, {pid}):\n"
                  f"{apply(body, ids)}".rstrip("\n") + "\n\n\n")
    last = lines.span(fn.args.defaults[-1] if fn.args.defaults else fn.args.args[-1])[1]
    # after parameters with defaults the new ones need defaults too: None makes a launch that
    # forgets them fail to compile instead of skipping every id
    added = (f", {n_prog}=None, {coarsen_c}: tl.constexpr = 1" if fn.args.defaults
             else f", {n_prog}, {coarsen_c}: tl.constexpr")
    header = text[start:last] + added + text[last:body_start]
    ind = lines.indent_of(fn.body[0].lineno) or "    "
    step = ind
    names = ", ".join(a.arg for a in fn.args.args)
    loop = (f"{ind}# {coarsen_c} program ids per program: a program's fixed cost is paid once for all of them;\n"
            f"{ind}# ids past the original grid ({n_prog}) are skipped, so each original program runs once\n"
            f"{ind}for {loop_i} in tl.static_range({coarsen_c}):\n"
            f"{ind}{step}{loop_pid} = tl.program_id({axis}) * {coarsen_c} + {loop_i}\n"
            f"{ind}{step}if {loop_pid} < {n_prog}:\n"
            f"{ind}{step}{step}{helper}({names}, {loop_pid})\n")
    return Edit(start, end, helper_def + header + loop)


def coarsenings(text: str, kernel: str, codes: set | None = None) -> list[Candidate]:
    """The coarsenings worth verifying: the lift where it applies, then R in FACTORS per axis."""
    out: list[Candidate] = []
    lift = rows_per_program(text, kernel, codes)
    if lift is not None:
        lift.meta.update(transform="coarsen", lowering="lift", axis=0)
        out.append(lift)
    axes, _ = plan_axes(text, kernel)
    factors = FACTORS if len(axes) <= MAX_CANDIDATES // len(FACTORS) else FACTORS[:2]
    for axis in axes:
        for factor in factors:
            cand = coarsen(text, kernel, axis, factor)
            if isinstance(cand, Candidate) and len(out) < MAX_CANDIDATES + (lift is not None):
                out.append(cand)
    return out
