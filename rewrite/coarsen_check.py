"""Program independence, the legality check of coarsening (rewrite/transform_coarsen.py).

The programs of a kernel along grid axis `a` are independent when running the work of program
ids p, p+1, ... p+R-1 one after another inside one program gives the same memory as running them
as R programs in any order. That holds when nothing lets one program see another:

- no atomics of any kind (a counter, a lock, a cross-program reduction: every `tl.atomic_*`),
- no `tl.num_programs(a)` (a grid-stride or persistent loop sizes its stride by the grid that the
  rewrite shrinks), and no `tl.program_id` / `tl.num_programs` whose axis is not a literal,
- no `tl.debug_barrier` and no volatile load (the pieces of a spin-wait protocol between programs),
- no inline assembly (it can read the hardware's own ids or do any of the above),
- no helper that reads `tl.program_id(a)` itself: the helper would see the coarse id, not the one
  the rewrite hands the moved body.

Helpers the kernel calls (other @triton.jit functions of the file, transitively) are scanned like
the kernel. How the program id is used otherwise (offsets, masks, branches, early exits) does not
matter: the rewrite replaces it by the very id the original program had.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .edits import call_name, kernels


@dataclass(frozen=True)
class Refusal:
    """Why a coarsening was not proposed: the transform's answer when it does not apply."""

    reason: str


def _axis_of(call: ast.Call):
    """The literal axis of a tl.program_id / tl.num_programs call, or None when it is not one."""
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "axis"), None)
    if isinstance(arg, ast.Constant) and isinstance(arg.value, int) and not isinstance(arg.value, bool):
        return arg.value
    return None


def reachable(tree: ast.Module, fn: ast.FunctionDef) -> list[ast.FunctionDef]:
    """`fn` and the file's @triton.jit functions it calls, directly or through other helpers."""
    by_name = {k.name: k for k in kernels(tree)}
    out, todo = [fn], [fn]
    while todo:
        cur = todo.pop()
        for n in ast.walk(cur):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
                helper = by_name.get(n.func.id)
                if helper is not None and all(helper is not seen for seen in out):
                    out.append(helper)
                    todo.append(helper)
    return out


def program_id_calls(fn: ast.FunctionDef, axis: int) -> list[ast.Call]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call) and call_name(n) == "program_id"
            and _axis_of(n) == axis]


def independent(tree: ast.Module, fn: ast.FunctionDef, axis: int) -> Refusal | None:
    """None when the programs of `fn` along `axis` are independent, else why they may not be."""
    for f in reachable(tree, fn):
        where = "" if f is fn else f" (in the helper {f.name})"
        for n in ast.walk(f):
            if not isinstance(n, ast.Call):
                continue
            name = call_name(n)
            if name.startswith("atomic_"):
                return Refusal(f"atomics: tl.{name}{where} lets programs communicate (a counter, a lock or a "
                               "cross-program reduction), so merging programs can change the result")
            if name in ("program_id", "num_programs") and _axis_of(n) is None:
                return Refusal(f"tl.{name} with an axis that is not a literal{where}")
            if name == "num_programs" and _axis_of(n) == axis:
                return Refusal(f"tl.num_programs({axis}){where}: a grid-stride or persistent loop strides by "
                               "the grid the rewrite would shrink")
            if name == "debug_barrier":
                return Refusal(f"tl.debug_barrier{where}: a protocol between programs")
            if name.startswith("inline_asm"):
                return Refusal(f"inline assembly{where}: it may read hardware ids or synchronise programs")
            if name == "load" and any(k.arg == "volatile" and not (isinstance(k.value, ast.Constant)
                                                                   and k.value.value is False)
                                      for k in n.keywords):
                return Refusal(f"a volatile load{where}: programs wait on each other's writes")
            if f is not fn and name == "program_id" and _axis_of(n) == axis:
                return Refusal(f"the helper {f.name} reads tl.program_id({axis}) itself")
    if not program_id_calls(fn, axis):
        return Refusal(f"the kernel never reads tl.program_id({axis}): its programs along axis {axis} "
                       "would all do the same work")
    return None
