"""One online pass for a row's max and sum of exponentials (logsumexp, softmax denominators, cross
entropy), where the kernel walks the row twice:

    m = tl.full([BLOCK], float("-inf"), tl.float32)       m = tl.full(...)
    for off in range(0, N, BLOCK):                         s = tl.zeros(...)
        ...x = tl.load(...)...                             for off in range(0, N, BLOCK):
        m = tl.maximum(m, x)                                   ...x = tl.load(...)...
    row_max = tl.max(m, axis=0)                  ->            m_new = tl.maximum(m, x)
    s = tl.zeros([BLOCK], tl.float32)                          shift = where(m_new == -inf, 0, m_new)
    for off in range(0, N, BLOCK):                             s = s * exp(m - shift) + exp(x - shift)
        ...the same statements...                              m = m_new
        s += tl.exp(x - row_max)                           row_max = tl.max(m, axis=0)
                                                           s = s * tl.exp(m - row_max)

Each lane keeps its sum relative to its own running max and rescales it when the max grows; after
the loop every lane is brought to the row's max, so `s` holds exactly what the second walk summed
(up to rounding). A row too long to stay in cache between the walks is read from memory once
instead of twice. Any later walk (a gradient, a normalised output) is left as it is.

Silent (None) unless the two loops have the same header, the second repeats the first's
statements before its last, and nothing between them but the row max and the sum's start.
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
    fresh_local,
    kernel_named,
    names_in,
)


def _name(node) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _assign_to(st) -> tuple[str | None, ast.AST | None]:
    if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
        return st.targets[0].id, st.value
    return None, None


def _max_update(st) -> tuple[str, str] | None:
    """(m, x) of `m = tl.maximum(m, x)` or `m = tl.maximum(x, m)`."""
    target, value = _assign_to(st)
    if target is None or call_name(value) != "maximum" or len(value.args) != 2 or value.keywords:
        return None
    a, b = (_name(v) for v in value.args)
    if a == target and b and b != target:
        return target, b
    if b == target and a and a != target:
        return target, a
    return None


def _is_minus_inf(node) -> bool:
    text = ast.unparse(node).replace(" ", "")
    return text in ('float("-inf")', "float('-inf')", '-float("inf")', "-float('inf')", "-math.inf", "-inf")


def _sum_update(st, s: str, x: str, row_max: str) -> bool:
    """`s += tl.exp(x - row_max)` or `s = s + tl.exp(x - row_max)`."""
    if isinstance(st, ast.AugAssign) and _name(st.target) == s and isinstance(st.op, ast.Add):
        term = st.value
    else:
        target, value = _assign_to(st)
        if target != s or not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
            return False
        if _name(value.left) == s:
            term = value.right
        elif _name(value.right) == s:
            term = value.left
        else:
            return False
    if call_name(term) != "exp" or len(term.args) != 1 or term.keywords:
        return False
    diff = term.args[0]
    return (isinstance(diff, ast.BinOp) and isinstance(diff.op, ast.Sub) and _name(diff.left) == x
            and _name(diff.right) == row_max)


def online_max_sum(text: str, kernel: str, codes: set | None = None) -> Candidate | None:
    tree = parse_python(text)
    fn = kernel_named(tree, kernel)
    if fn is None:
        return None
    body = fn.body
    for i, loop1 in enumerate(body):
        found = _match(fn, body, i) if isinstance(loop1, ast.For) and not loop1.orelse else None
        if found is not None:
            return _rewrite(text, fn, kernel, *found)
    return None


def _match(fn, body, i):
    loop1 = body[i]
    update = _max_update(loop1.body[-1])
    if update is None:
        return None
    m, x = update
    init_m = next((st for st in reversed(body[:i]) if _assign_to(st)[0] == m), None)
    if init_m is None or call_name(init_m.value) != "full" or len(init_m.value.args) < 2 \
            or not _is_minus_inf(init_m.value.args[1]):
        return None
    if not any(_assign_to(st)[0] == x for st in loop1.body[:-1]):
        return None  # x must be the loop's own load, not a value from outside
    header = ast.dump(loop1.target) + ast.dump(loop1.iter)
    j = next((k for k in range(i + 1, len(body)) if isinstance(body[k], ast.For)), None)
    if j is None:
        return None
    loop2 = body[j]
    if loop2.orelse or ast.dump(loop2.target) + ast.dump(loop2.iter) != header:
        return None
    between = body[i + 1:j]
    row_max = init_s = None
    for st in between:
        target, value = _assign_to(st)
        if target and call_name(value) == "max" and value.args and _name(value.args[0]) == m and row_max is None:
            row_max = (st, target)
        elif target and call_name(value) in ("zeros", "full") and init_s is None:
            init_s = (st, target)
        else:
            return None  # anything else between the walks might depend on the order of the two
    if row_max is None or init_s is None:
        return None
    s = init_s[1]
    if len(loop2.body) != len(loop1.body) or any(ast.dump(a) != ast.dump(b) for a, b in zip(loop1.body[:-1],
                                                                                          loop2.body[:-1])):
        return None
    if not _sum_update(loop2.body[-1], s, x, row_max[1]):
        return None
    defined_before = {a.arg for a in fn.args.args} | {"tl", "triton", "float", "math"}
    for st in body[:i]:
        for t in (st.targets if isinstance(st, ast.Assign) else []):
            defined_before |= names_in(t)
    if not names_in(init_s[0].value) <= defined_before:
        return None  # the sum's start uses something computed after the first walk
    if s in names_in(loop1) or any(s in names_in(st) for st in body[:i]):
        return None
    return loop1, loop2, init_s[0], row_max[0], m, x, s, row_max[1]


def _rewrite(text, fn, kernel, loop1, loop2, init_s, row_max_st, m, x, s, row_max) -> Candidate | None:
    lines = Lines(text)
    m_new, shift = fresh_local(fn, f"{m}_new"), fresh_local(fn, "shift")
    last = loop1.body[-1]
    ind = lines.indent_of(last.lineno)
    outer = lines.indent_of(loop1.lineno)
    init_text = text[lines.line_start(init_s.lineno):lines.line_end(init_s.end_lineno)]
    edits = [
        Edit(lines.line_start(loop1.lineno), lines.line_start(loop1.lineno),
             f"{outer}# one pass: a running max per lane, and a sum rescaled whenever that max grows\n"
             + _reindent(init_text, lines.indent_of(init_s.lineno), outer)),
        Edit(lines.line_start(last.lineno), lines.line_end(last.end_lineno),
             f"{ind}{m_new} = tl.maximum({m}, {x})\n"
             f"{ind}{shift} = tl.where({m_new} == float(\"-inf\"), 0.0, {m_new})  # a lane that saw only padding keeps 0\n"
             f"{ind}{s} = {s} * tl.exp({m} - {shift}) + tl.exp({x} - {shift})\n"
             f"{ind}{m} = {m_new}\n"),
        Edit(lines.line_start(init_s.lineno), lines.line_end(init_s.end_lineno), ""),
        Edit(lines.line_end(row_max_st.end_lineno), lines.line_end(row_max_st.end_lineno),
             f"{lines.indent_of(row_max_st.lineno)}{s} = {s} * tl.exp({m} - {row_max})  "
             "# each lane's sum, from its own max to the row's\n"),
        Edit(lines.line_start(loop2.lineno), lines.line_end(loop2.end_lineno), ""),
    ]
    try:
        source = apply(text, edits)
        parse_python(source)
    except (ValueError, SyntaxError):
        return None
    return Candidate("rules", "one online pass for the max and the sum of exponentials", source,
                     f"{kernel} walks each row once for its max and again for the sum of exp(x - max); a running "
                     "max per lane with the sum rescaled when it grows needs one walk, so the row is read once",
                     kernel=kernel, meta={"codes": [], "structural": True})


def _reindent(block: str, old: str, new: str) -> str:
    return "".join(new + ln[len(old):] if ln.startswith(old) else ln for ln in block.splitlines(keepends=True))
