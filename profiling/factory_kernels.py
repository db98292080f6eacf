"""Kernels a function builds: a `@triton.jit` def nested in a top-level function (a factory such
as `_kernels()` that imports Triton lazily and returns a namespace of kernels, or one that
closes over its arguments). Such a kernel exists only once the project calls its factory; the
compile reads kernels from a module's top level, so it names these with the reason they have no
facts instead of leaving them out unseen.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tritonlens.analysis.python_ast import parse as parse_python


@dataclass(frozen=True)
class FactoryKernel:
    name: str
    line: int  # 1-based line of its `def`
    factory: str  # the top-level function that builds it
    helper: bool  # returns a value: a device helper, compiled only inside its callers


def factory_kernels(text: str) -> list[FactoryKernel]:
    """The jit functions defined inside the file's top-level functions, in file order."""
    try:
        tree = parse_python(text)
    except SyntaxError:
        return []
    out = []
    for top in tree.body:
        if not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(top):
            if node is top or not isinstance(node, ast.FunctionDef) or not _is_jit(node):
                continue
            out.append(FactoryKernel(node.name, node.lineno, top.name, _returns_value(node)))
    return out


def reason(k: FactoryKernel) -> str:
    """Why a factory's kernel has no compile facts, in its author's terms."""
    return (f"built inside {k.factory}() when it runs: only kernels defined at a module's top level "
            "are compiled")


def _is_jit(fn: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in fn.decorator_list)


def _returns_value(fn: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(fn))
