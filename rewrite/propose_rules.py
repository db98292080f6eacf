"""Rule fixes: the analysis findings' own deterministic fixes that change speed, not results
(a rule's `fix_makes_faster`: num_warps, a block size, float64 to float32; a mask or an int64
offset is a correctness fix, never faster, left to the editor's quick fix), plus structural
rewrites that need the verifier (they change indexing, so only a run proves them):

- TL010 grouped L2 ordering: the 1-D program id of a tl.dot kernel mapped row-major onto the tile
  grid (`pid_m = pid // num_pid_n`) becomes the tutorial's GROUP_M swizzle;
- TL011 hoist a loop-invariant load: a `x = tl.load(...)` inside a loop whose address and mask
  use nothing the loop changes moves in front of the loop;
- TL006 int64 offsets (`int64_program_ids`, not timed by optimize): `pid = tl.program_id(0)`
  becomes `tl.program_id(0).to(tl.int64)`, so `pid * stride` cannot overflow int32;
- TL012 persistent grid for a one-address atomic reduction, and one pass over a row that fits in
  a block (rewrite/transform_persistent.py, rewrite/transform_row_in_block.py: they change the launch too);
- one online pass for a row's max and sum of exponentials (rewrite/transform_fuse_passes.py);
- program coarsening: R programs' work per program along an independent grid axis, R searched in
  (2, 4, 8), with the [ROWS, BLOCK] lift for one-program-per-row kernels where it applies
  (rewrite/transform_coarsen.py).
"""

from __future__ import annotations

import ast
import re

from tritonlens.analysis.python_ast import parse as parse_python

from .candidate import Candidate
from .context import ProposalContext
from .edits import (
    Edit,
    Lines,
    apply,
    dotted,
    kernel_named,
    kernels,
    launch_sites,
    names_in,
    tl_calls,
)
from .proposal_guard import failed
from .transform_coarsen import coarsenings
from .transform_fuse_passes import online_max_sum
from .transform_persistent import persistent_atomic_reduction
from .transform_row_in_block import row_in_one_block

GROUP_DEFAULT = 8


def propose(ctx: ProposalContext) -> list[Candidate]:
    out: list[Candidate] = []
    seen = {ctx.text}

    def add(cand: Candidate | None):
        if cand is not None and cand.source not in seen:
            seen.add(cand.source)
            out.append(cand)

    from tritonlens.analysis.rules import ALL_RULES

    for finding in ctx.findings():
        if finding.fix is None or not finding.fix.edits:
            continue
        rule = ALL_RULES.get(finding.code)
        if rule is None or not rule.fix_makes_faster:
            continue  # a correctness fix never proves faster: its real-size verification would spend the budget
        from tritonlens.analysis.findings import apply_edits

        try:
            source = apply_edits(ctx.text, finding.fix.edits)
            parse_python(source)
        except (SyntaxError, ValueError):
            continue
        except Exception as exc:  # noqa: BLE001 - refused with its reason; the other fixes still run
            out.append(failed("rules", f"{finding.fix.title} ({finding.code})", ctx.text, exc, kernel=finding.kernel))
            continue
        add(Candidate("rules", f"{finding.fix.title} ({finding.code})", source,
                      f"the deterministic fix of {finding.code}: {finding.message}", kernel=finding.kernel,
                      meta={"codes": [finding.code]}))
    tree = parse_python(ctx.text)
    names = [k.name for k in kernels(tree)] if ctx.kernel is None else [ctx.kernel]
    for name in names:
        # int64_program_ids is TL006's correctness fix: the editor offers it, optimize does not time it
        for make in (grouped_ordering, hoist_invariant_loads, persistent_atomic_reduction,
                     row_in_one_block, online_max_sum, coarsenings):
            try:
                made = make(ctx.text, name, ctx.codes_for(name))
            except (SyntaxError, ValueError):
                continue  # the rewrite does not fit this kernel
            except Exception as exc:  # noqa: BLE001
                out.append(failed("rules", make.__name__.replace("_", " "), ctx.text, exc, kernel=name))
                continue
            for cand in made if isinstance(made, list) else [made]:
                add(cand)
    return out


# -- TL010 ----------------------------------------------------------------------------------
def grouped_ordering(text: str, kernel: str, codes: set | None = None) -> Candidate | None:
    tree = parse_python(text)
    fn = kernel_named(tree, kernel)
    if fn is None or not tl_calls(fn, "dot"):
        return None
    params = [a.arg for a in fn.args.args]
    if any("GROUP" in p.upper() for p in params):
        return None
    body = fn.body
    pid_var = None
    for st in body:
        if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                and isinstance(st.value, ast.Call) and (dotted(st.value.func) or "").endswith("program_id")):
            pid_var = st.targets[0].id
            break
    if pid_var is None:
        return None
    div = mod = cdiv_n = None
    for st in body:
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
            continue
        v = st.value
        if isinstance(v, ast.BinOp) and isinstance(v.left, ast.Name) and v.left.id == pid_var and isinstance(v.right, ast.Name):
            if isinstance(v.op, ast.FloorDiv):
                div = (st, st.targets[0].id, v.right.id)
            elif isinstance(v.op, ast.Mod):
                mod = (st, st.targets[0].id, v.right.id)
    if not div or not mod or div[2] != mod[2]:
        return None
    npn = div[2]
    for st in body:
        if (isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name) and st.targets[0].id == npn
                and isinstance(st.value, ast.Call) and (dotted(st.value.func) or "").endswith("cdiv")
                and len(st.value.args) == 2):
            cdiv_n = st
    if cdiv_n is None:
        return None
    size_n, _block_n = ast.unparse(cdiv_n.value.args[0]), ast.unparse(cdiv_n.value.args[1])
    pid_m, pid_n = div[1], mod[1]
    src = ast.get_source_segment(text, fn) or ""
    m = re.search(rf"(\w+)\s*=\s*{re.escape(pid_m)}\s*\*\s*(\w+)", src)
    if not m:
        return None
    offs_m, block_m = m.group(1), m.group(2)
    size_m = None
    mm = re.search(rf"{re.escape(offs_m)}(?:\[[^\]]*\])?\s*<\s*(\w+)", src)
    if mm and mm.group(1) in params:
        size_m = mm.group(1)
    elif size_n.endswith("N") and size_n[:-1] + "M" in params:
        size_m = size_n[:-1] + "M"
    if size_m is None:
        return None
    lines = Lines(text)
    indent = lines.indent_of(div[0].lineno)
    group = "GROUP_M" if "GROUP_M" not in params else "GROUP_SIZE_M"
    block = "".join(indent + line + "\n" for line in (
        "# grouped ordering: GROUP programs in a column of C tiles reuse the same B tiles in L2",
        f"num_pid_m = tl.cdiv({size_m}, {block_m})",
        f"num_pid_in_group = {group} * {npn}",
        f"group_id = {pid_var} // num_pid_in_group",
        f"first_pid_m = group_id * {group}",
        f"group_size_m = min(num_pid_m - first_pid_m, {group})",
        f"{pid_m} = first_pid_m + (({pid_var} % num_pid_in_group) % group_size_m)",
        f"{pid_n} = ({pid_var} % num_pid_in_group) // group_size_m",
    ))
    first = min(div[0].lineno, mod[0].lineno)
    last = max(div[0].end_lineno, mod[0].end_lineno)
    if abs(div[0].lineno - mod[0].lineno) != 1:
        return None
    edits = [Edit(lines.line_start(first), lines.line_end(last), block)]
    last_arg = fn.args.args[-1]
    edits.append(Edit(lines.span(last_arg)[1], lines.span(last_arg)[1], f", {group}: tl.constexpr"))
    sites = launch_sites(tree, kernel)
    if not sites:
        return None
    for site in sites:
        args = list(site.call.args) + [k.value for k in site.call.keywords]
        end = max((lines.span(a)[1] for a in args), default=None)
        if end is None:
            return None
        edits.append(Edit(end, end, f", {group}={GROUP_DEFAULT}"))
    source = apply(text, edits)
    parse_python(source)
    return Candidate("rules", "grouped L2 ordering (TL010)", source,
                     f"map program ids in groups of {GROUP_DEFAULT} tile rows (the tutorial's {group} swizzle) so "
                     "neighbouring programs share A and B tiles in L2", kernel=kernel, meta={"codes": ["TL010"]})


# -- TL011 ----------------------------------------------------------------------------------
def _assigned(node) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                out |= {x.id for x in ast.walk(t) if isinstance(x, ast.Name)}
        elif isinstance(n, (ast.For, ast.comprehension)):
            out |= {x.id for x in ast.walk(n.target) if isinstance(x, ast.Name)}
    return out


def hoist_invariant_loads(text: str, kernel: str, codes: set | None = None) -> Candidate | None:
    tree = parse_python(text)
    fn = kernel_named(tree, kernel)
    if fn is None:
        return None
    lines = Lines(text)
    edits: list[Edit] = []
    moved = []
    for loop in [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))]:
        changed = _assigned(loop)
        if isinstance(loop, ast.For):
            changed |= names_in(loop.target)
        stores = tl_calls(loop, "store") + [c for c in ast.walk(loop) if isinstance(c, ast.Call)
                                            and (dotted(c.func) or "").split(".")[-1].startswith("atomic_")]
        written_bases = set()
        for c in stores:
            if c.args:
                written_bases |= names_in(c.args[0])
        hoisted = []
        for st in loop.body:
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
                continue
            loads = tl_calls(st.value, "load")
            if not loads:
                continue
            target = st.targets[0].id
            reads = names_in(st.value) - {"tl", "triton"}
            # invariant: reads nothing the loop assigns (other than what earlier hoists made invariant)
            others = changed - {target} - {h for h in hoisted}
            if reads & others or reads & written_bases:
                continue
            assigned_elsewhere = sum(1 for n in ast.walk(loop) if isinstance(n, (ast.Assign, ast.AugAssign))
                                     and any(isinstance(t, ast.Name) and t.id == target
                                             for t in (n.targets if isinstance(n, ast.Assign) else [n.target])))
            if assigned_elsewhere != 1:
                continue
            hoisted.append(target)
            indent_loop = lines.indent_of(loop.lineno)
            indent_st = lines.indent_of(st.lineno)
            seg = text[lines.line_start(st.lineno):lines.line_end(st.end_lineno)]
            reindented = "".join(indent_loop + ln[len(indent_st):] if ln.startswith(indent_st) else ln
                                 for ln in seg.splitlines(keepends=True))
            edits.append(Edit(lines.line_start(st.lineno), lines.line_end(st.end_lineno), ""))
            edits.append(Edit(lines.line_start(loop.lineno), lines.line_start(loop.lineno),
                              indent_loop + "# loop-invariant: loaded once, not every iteration\n" + reindented))
            moved.append(target)
    if not edits:
        return None
    try:
        source = apply(text, edits)
        parse_python(source)
    except (ValueError, SyntaxError):
        return None
    return Candidate("rules", f"hoist loop-invariant load{'s' if len(moved) > 1 else ''} of {', '.join(moved)} (TL011)",
                     source, "the address and mask do not change inside the loop: load once before it",
                     kernel=kernel, meta={"codes": ["TL011"]})


# -- TL006 ----------------------------------------------------------------------------------
def int64_program_ids(text: str, kernel: str, codes: set | None = None) -> Candidate | None:
    tree = parse_python(text)
    fn = kernel_named(tree, kernel)
    if fn is None:
        return None
    lines = Lines(text)
    edits = []
    for st in ast.walk(fn):
        if (isinstance(st, ast.Assign) and isinstance(st.value, ast.Call)
                and (dotted(st.value.func) or "").split(".")[-1] == "program_id"):
            pid = st.targets[0].id if isinstance(st.targets[0], ast.Name) else None
            if pid is None:
                continue
            # only where the id scales an address: pid * something
            src = ast.get_source_segment(text, fn) or ""
            if not re.search(rf"\b{re.escape(pid)}\s*\*|\*\s*{re.escape(pid)}\b", src):
                continue
            _, e = lines.span(st.value)
            edits.append(Edit(e, e, ".to(tl.int64)"))
    if not edits:
        return None
    source = apply(text, edits)
    return Candidate("rules", "int64 offsets from program ids (TL006)", source,
                     "cast the program id to int64 so `pid * stride` / `pid * BLOCK` cannot overflow int32",
                     kernel=kernel, meta={"codes": ["TL006"]})
