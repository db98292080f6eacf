"""Which pointer parameters a kernel updates in place: what an autotune the config search adds must
restore between the configs it benchmarks.

Triton's autotuner runs every config on the caller's own tensors before the real launch. A kernel
that reads a buffer and writes it back (rope applied to Q in place, an atomic accumulator) would be
applied once per config: the result is wrong although each config alone is correct, and a check
that forces one config never sees it. `restore_value` makes the autotuner copy those buffers first
and put them back after each benchmark run.
"""

from __future__ import annotations

import ast

from tritonlens.analysis.kernel_discovery import aliases_of, dotted, is_jit_function

from .edits import call_name

_WRITES = {"store", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
           "atomic_xchg", "atomic_cas"}


def in_place_params(tree: ast.Module, fn: ast.FunctionDef) -> list[str]:
    """Parameters of `fn` (in order) that it, or a jit helper of the same file it passes them to,
    both reads (tl.load) and writes (tl.store), or updates atomically."""
    al = aliases_of(tree)
    helpers = {n.name: n for n in tree.body if is_jit_function(n, al)}
    found = _touched(fn, helpers, set())
    return [a.arg for a in fn.args.args if a.arg in found]


def _touched(fn: ast.FunctionDef, helpers: dict, seen: set) -> set[str]:
    if fn.name in seen:
        return set()
    seen = seen | {fn.name}
    params = {a.arg for a in fn.args.args}
    values = _assigned(fn)

    def base(node, depth: int = 0) -> set[str]:
        """The parameters a pointer expression is based on: the left end of `X + offs * stride`,
        followed through locals (`p = X + offs`) and block pointers' `base`."""
        if depth > 20:
            return set()
        if isinstance(node, ast.Name):
            found = {node.id} & params
            for value in values.get(node.id, ()):
                found |= base(value, depth + 1)
            return found
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            return base(node.left, depth + 1)
        if isinstance(node, ast.Call) and call_name(node) in ("make_block_ptr", "advance"):
            first = node.args[:1] or [k.value for k in node.keywords if k.arg == "base"]
            return set().union(*(base(v, depth + 1) for v in first))
        return set()

    read, written, atomic = set(), set(), set()
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
        name = call_name(call)
        target = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "pointer"), None)
        if name == "load" and target is not None:
            read |= base(target)
        elif name in _WRITES and target is not None and (dotted(call.func) or "").count(".") >= 1:
            (written if name == "store" else atomic).update(base(target))
        elif name in helpers and helpers[name] is not fn:
            inner = helpers[name]
            inner_params = [a.arg for a in inner.args.args]
            touched = _touched(inner, helpers, seen)
            for i, arg in enumerate(call.args[:len(inner_params)]):
                if inner_params[i] in touched:
                    atomic |= base(arg)  # the helper reads and writes it: as good as an update
            for kw in call.keywords:
                if kw.arg in touched:
                    atomic |= base(kw.value)
    return (read & written) | atomic


def _assigned(fn: ast.FunctionDef) -> dict[str, list]:
    """name -> the values assigned to it (`p = Q + offs`); `p += K` moves a pointer, not its base."""
    out: dict[str, list] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).append(node.value)
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for t, v in zip(target.elts, node.value.elts):
                        if isinstance(t, ast.Name):
                            out.setdefault(t.id, []).append(v)
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            out.setdefault(node.target.id, []).append(node.value)
    return out

