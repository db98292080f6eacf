"""One pass when the row fits in a block, a transform that fuses a kernel's walks over a row: a
kernel that walks a row in BLOCK chunks several times (`for off in range(0, N, BLOCK)` loops one
after another: mean, variance, normalize) gets a twin in which each loop is its single iteration,
launched with BLOCK = next_power_of_2(N) whenever 0 < N <= ROW_IN_BLOCK_MAX; longer rows keep the
original kernel. The row is then re-read from L1/L2 within one program instead of from memory
chunk by chunk.

It refuses (returns None) on anything it cannot prove the shape of; the verifier judges the rest.
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
)
from .transform_persistent import (
    _dedent_block,
    _indent_block,
    _param_args,
    _statement_of,
)

ROW_IN_BLOCK_MAX = 8192  # elements a program holds in registers without spilling at 8 warps


# -- one pass when the row fits in a block ------------------------------------------------------
def _row_loop(st, runtime: set[str], consts: set[str]):
    """(size param, block param, loop var) of `for v in range(0, N, BLOCK)`, else None."""
    if not (isinstance(st, ast.For) and isinstance(st.target, ast.Name) and isinstance(st.iter, ast.Call)
            and dotted(st.iter.func) in ("range", "tl.range", "tl.static_range") and len(st.iter.args) == 3
            and not st.orelse):
        return None
    start, stop, step = st.iter.args
    if not (isinstance(start, ast.Constant) and start.value == 0 and isinstance(stop, ast.Name)
            and stop.id in runtime and isinstance(step, ast.Name) and step.id in consts):
        return None
    return stop.id, step.id, st.target.id


def row_in_one_block(text: str, kernel: str, codes: set | None = None) -> Candidate | None:
    tree = parse_python(text)
    fn = kernel_named(tree, kernel)
    if fn is None or any(call_name(d) == "autotune" or (dotted(d) or "").endswith("autotune") for d in fn.decorator_list):
        return None  # an autotuner's BLOCK choice could not honour BLOCK >= N
    consts = set(constexpr_params(fn))
    runtime = {a.arg for a in fn.args.args} - consts
    loops = [(st, _row_loop(st, runtime, consts)) for st in fn.body if isinstance(st, ast.For)]
    shapes = {shape[:2] for _, shape in loops if shape}
    if len(loops) < 2 or any(shape is None for _, shape in loops) or len(shapes) != 1:
        return None  # one pass over the row already, or loops of other shapes
    size, block = next(iter(shapes))
    top = {id(st) for st, _ in loops}
    for node in ast.walk(fn):
        if isinstance(node, (ast.For, ast.While)) and id(node) not in top and any(isinstance(n, ast.Name) and n.id == block for n in ast.walk(node.iter if isinstance(node, ast.For) else node.test)):
            return None  # a nested walk over the same row
        if isinstance(node, (ast.Break, ast.Continue, ast.Return)):
            return None
    if any(isinstance(n, ast.Name) and n.id == size and isinstance(n.ctx, ast.Store) for n in ast.walk(fn)):
        return None
    sites = launch_sites(tree, kernel)
    if not sites or any(s.function is None for s in sites):
        return None
    lines = Lines(text)
    twin = _fresh_top(tree, f"{kernel}_one_block")
    # -- the twin kernel: every row loop is its single iteration (off = 0) --
    s0 = lines.line_start(min(d.lineno for d in fn.decorator_list))
    e0 = lines.line_end(fn.end_lineno)
    k_edits = []
    for st, (_, _, var) in loops:
        ind = lines.indent_of(st.lineno)
        body_text = text[lines.line_start(st.body[0].lineno):lines.line_end(st.end_lineno)]
        width = len(lines.indent_of(st.body[0].lineno))
        k_edits.append(Edit(lines.line_start(st.lineno) - s0, lines.line_end(st.end_lineno) - s0,
                            f"{ind}{var} = 0  # the whole row is one block (BLOCK >= N): one iteration\n"
                            + _indent_block(_dedent_block(body_text, width), ind)))
    name_at = text.index(f"def {kernel}", lines.line_start(fn.lineno)) + 4 - s0
    k_edits.append(Edit(name_at, name_at + len(kernel), twin))
    twin_text = apply(text[s0:e0], k_edits)
    edits = [Edit(e0, e0, "\n\n" + twin_text)]
    # -- each launch: the twin when the row fits, the original otherwise --
    for site in sites:
        args = _param_args(fn, site.call)
        if args is None or size not in args:
            return None
        block_kw = next((k for k in site.call.keywords if k.arg == block), None)
        if block_kw is None:
            return None
        st = _statement_of(site.function, site.call)
        if not (isinstance(st, ast.Expr) and st.value is site.call):
            return None
        n_text = ast.unparse(args[size])
        ind = lines.indent_of(st.lineno)
        old = text[lines.line_start(st.lineno):lines.line_end(st.end_lineno)]
        base = lines.line_start(st.lineno)
        ks, ke = lines.span(block_kw.value)
        fs, fe = lines.span(site.call.func.value)
        fast = apply(old, [Edit(fs - base, fe - base, twin),
                           Edit(ks - base, ke - base, f"triton.next_power_of_2({n_text})")])
        new = (f"{ind}if 0 < {n_text} <= {ROW_IN_BLOCK_MAX}:  # the row fits in one block: one pass, "
               "no chunked re-reads\n" + _indent_block(fast, "    ") + f"{ind}else:\n" + _indent_block(old, "    "))
        edits.append(Edit(lines.line_start(st.lineno), lines.line_end(st.end_lineno), new))
    try:
        source = apply(text, edits)
        parse_python(source)
    except (ValueError, SyntaxError):
        return None
    return Candidate("rules", f"one pass when the row fits in a block ({len(loops)} row loops)", source,
                     f"{kernel} walks the row {len(loops)} times in {block} chunks; for rows of at most "
                     f"{ROW_IN_BLOCK_MAX} elements a twin kernel does each walk as one block of "
                     f"next_power_of_2({size}), so later walks re-read the row from cache",
                     kernel=kernel, meta={"codes": [], "structural": True})


def _fresh_top(tree: ast.Module, base: str) -> str:
    used = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    used |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return first_free(base, used)
