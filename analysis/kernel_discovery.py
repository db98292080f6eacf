"""Which functions of a Python file are Triton JIT functions, and which of those are kernels.

One discovery for the callers that read a file with `ast` (the rewriter, the profiler), with the
meaning the analyzer's tree-sitter model gives (`model.is_kernel_definition`): a module-level
function (top level, or inside a module-level `if`/`else`/`try`) with a decorator that is
`triton.jit` under the file's imports — `@triton.jit`, `@triton.jit(...)`, `@jit` after
`from triton import jit`, `@tr.jit` after `import triton as tr` — wherever it sits in a stack of
`@triton.autotune(...)`, `@triton.heuristics(...)` or project wrappers such as `@libentry()`, or
rebound after its def by a module-level `name = triton.jit(name)` (and more wrappers the same way).
`@cute.jit`, `@gluon.jit`, `@torch.jit.script` and the like are not Triton kernels.

Each JIT function gets a kind:
- a device helper when nothing launches it (`name[grid](...)`) and it returns a value, or is
  the combine function of a `tl.reduce`/`tl.associative_scan`, or is called from other JIT
  functions;
- a launchable kernel otherwise (launched in this file, or by code elsewhere).
The judgement is per file: a helper only other files' kernels call, and that returns nothing, reads
as a kernel. `kernel_roles` answers the same question for an analysed module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import Enum

from .aliases import Aliases
from .python_ast import parse as parse_python

# tl functions whose function arguments are combine functions, not kernels.
_COMBINING = {"reduce", "associative_scan"}


class KernelKind(str, Enum):
    LAUNCHABLE = "launchable"
    DEVICE_HELPER = "device-helper"


@dataclass(frozen=True)
class JitFunction:
    name: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    kind: KernelKind
    reason: str  # why this kind: "launched at line 31", "returns a value", …

    @property
    def line(self) -> int:
        """1-based line of the `def` (decorators sit above it)."""
        return self.node.lineno

    @property
    def launchable(self) -> bool:
        return self.kind is KernelKind.LAUNCHABLE


def dotted(node: ast.AST | None) -> str | None:
    """`a.b.c` for a chain of attributes on a name; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def aliases_of(tree: ast.Module) -> Aliases:
    """The file's Triton aliases from its top-level imports (as `aliases.collect_aliases` reads them)."""
    al = Aliases()
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                al.add_import(a.name, a.asname)
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            for a in stmt.names:
                al.add_from_import(stmt.module, a.name, a.asname or a.name)
    return al.finish()


def is_jit_function(fn: ast.AST, al: Aliases, wrappers: dict | None = None) -> bool:
    """Whether `fn` is a function with a `triton.jit` decorator under the aliases `al`, or, given the
    module's `rebound_wrappers`, one that a later `fn = triton.jit(fn)` makes a JIT function."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    later = [w for line, w in (wrappers or {}).get(fn.name, ()) if line > (fn.end_lineno or fn.lineno)]
    for dec in fn.decorator_list + later:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if al.triton_attr(dotted(target)) == "jit":
            return True
    return False


def rebound_wrappers(tree: ast.Module) -> dict[str, list[tuple[int, ast.expr]]]:
    """{name: [(line, wrapper)]} for each module-level `name = wrapper(name)`, which Python applies as
    a decorator would (`k = triton.jit(k)`, `k = triton.heuristics({...})(k)`); model.rebindings()
    reads the same from a tree-sitter tree."""
    out: dict[str, list[tuple[int, ast.expr]]] = {}
    for stmt in module_level_statements(tree):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, ast.Call) and not stmt.value.keywords and len(stmt.value.args) == 1 \
                and isinstance(stmt.value.args[0], ast.Name) and stmt.value.args[0].id == stmt.targets[0].id:
            out.setdefault(stmt.targets[0].id, []).append((stmt.lineno, stmt.value.func))
    return out


def module_level_functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Functions defined at the top level or inside module-level `if`/`else`/`try` blocks."""
    return [s for s in module_level_statements(tree) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]


def module_level_statements(tree: ast.Module):
    """The top-level statements, and those inside module-level `if`/`else`/`try` blocks."""

    def visit(body: list[ast.stmt]):
        for stmt in body:
            if isinstance(stmt, ast.If):
                yield from visit(stmt.body)
                yield from visit(stmt.orelse)
            elif isinstance(stmt, ast.Try):
                yield from visit(stmt.body)
                for handler in stmt.handlers:
                    yield from visit(handler.body)
                yield from visit(stmt.orelse)
                yield from visit(stmt.finalbody)
            else:
                yield stmt

    yield from visit(tree.body)


def _own_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef):
    """The nodes of `fn`'s body, not those of functions, lambdas or classes nested in it."""
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _returns_value(fn: ast.AST) -> bool:
    return any(isinstance(n, ast.Return) and n.value is not None
               and not (isinstance(n.value, ast.Constant) and n.value.value is None) for n in _own_nodes(fn))


@dataclass
class Uses:
    """What the file does with its JIT functions' names; read from an ast tree here and from a
    tree-sitter tree by `model.jit_functions`, then judged by the one `kind_of`."""

    launched: dict[str, int]  # name → line of its first `name[grid](...)`
    combine: dict[str, int]  # name → line of the tl.reduce / tl.associative_scan it is passed to
    called_by: dict[str, str]  # name → a JIT function that calls it


def is_combining_call(callee: str | None, method: str | None, al: Aliases) -> bool:
    """Whether a call's function arguments are combine functions (`tl.reduce(x, 0, fn)`, `x.reduce(0, fn)`)."""
    return al.tl_function(callee) in _COMBINING or method in _COMBINING


def kind_of(name: str, returns_value: bool, uses: Uses) -> tuple[KernelKind, str]:
    """The kind of the JIT function `name`, and why."""
    if name in uses.launched:
        return KernelKind.LAUNCHABLE, f"launched at line {uses.launched[name]}"
    if name in uses.combine:
        return KernelKind.DEVICE_HELPER, f"combine function of the reduction at line {uses.combine[name]}"
    if returns_value:
        return KernelKind.DEVICE_HELPER, "returns a value"
    caller = uses.called_by.get(name)
    if caller is not None and caller != name:
        return KernelKind.DEVICE_HELPER, f"called from the JIT function {caller}"
    return KernelKind.LAUNCHABLE, "not launched here, but nothing marks it as a helper"


def _uses(tree: ast.Module, jit: list[ast.FunctionDef | ast.AsyncFunctionDef], al: Aliases) -> Uses:
    uses = Uses({}, {}, {})
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and isinstance(node.func.value, ast.Name):
            line = uses.launched.get(node.func.value.id)
            if line is None or node.lineno < line:
                uses.launched[node.func.value.id] = node.lineno
    for fn in jit:
        for node in _own_nodes(fn):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Name):
                uses.called_by.setdefault(node.func.id, fn.name)
            method = node.func.attr if isinstance(node.func, ast.Attribute) else None
            if is_combining_call(dotted(node.func), method, al):
                for arg in [*node.args, *(k.value for k in node.keywords if k.arg is not None)]:
                    if isinstance(arg, ast.Name):
                        line = uses.combine.get(arg.id)
                        if line is None or node.lineno < line:
                            uses.combine[arg.id] = node.lineno
    return uses


def discover(tree: ast.Module) -> list[JitFunction]:
    """Every module-level JIT function of `tree`, in source order, with its kind."""
    al = aliases_of(tree)
    wrappers = rebound_wrappers(tree)
    jit = [fn for fn in module_level_functions(tree) if is_jit_function(fn, al, wrappers)]
    uses = _uses(tree, jit, al)
    return [JitFunction(fn.name, fn, *kind_of(fn.name, _returns_value(fn), uses)) for fn in jit]


def discover_source(source: str) -> list[JitFunction]:
    """`discover` on source text (raises SyntaxError as `ast.parse` does)."""
    return discover(parse_python(source))
