"""Kernels a function builds: a `@triton.jit` def nested in a top-level function (a factory such
as `_kernels()` that imports Triton lazily and returns a namespace of kernels, or one that
closes over its arguments). Such a kernel exists only once its factory runs. The static model
reads them from `lifted_text` (each factory's jit defs and imports moved to the top level at
their own lines); the compile worker calls a factory that needs no argument to get them
(worker/tolerant_module.py). A kernel neither gives facts is named with `reason`.
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
    """Why a factory's kernel has no compile facts, in its author's terms (no configuration)."""
    return (f"built inside {k.factory}() when it runs, and no launch of it gives its values "
            "(pin them above its def)")


def lifted_text(text: str) -> str:
    """`text` with each factory's jit defs and its body's imports dedented to the top level at
    their own lines and the rest of the factory blanked: a module the static model reads those
    kernels from, whose line numbers are the file's."""
    try:
        tree = parse_python(text)
    except SyntaxError:
        return text
    lines = text.splitlines()
    for top in tree.body:
        if not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        nested = [n for n in ast.walk(top) if n is not top and isinstance(n, ast.FunctionDef) and _is_jit(n)]
        if not nested:
            continue
        first = min([top.lineno, *(d.lineno for d in top.decorator_list)])
        original = lines[first - 1:top.end_lineno]
        lines[first - 1:top.end_lineno] = [""] * len(original)
        keep = nested + [n for n in top.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        for n in keep:
            start = min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))])
            while start - 1 > first and original[start - 1 - first].strip().startswith("#"):
                start -= 1  # the comments right above it: a pin is read from there
            for i in range(start, n.end_lineno + 1):
                line = original[i - first]
                lines[i - 1] = line[n.col_offset:] if line[:n.col_offset].strip() == "" else line.lstrip()
    return "\n".join(lines) + "\n"


def _is_jit(fn: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in fn.decorator_list)


def _returns_value(fn: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(fn))


def factory_configs(text: str, have: set[str], kernel: str | None, errors: list, path) -> tuple[dict, dict]:
    """The static model's (configs, info) for the launchable factory kernels not in `have` (and
    only `kernel` when given), read from `lifted_text`."""
    from tritonlens.profiling.config_sources import static_fallback

    wanted = {f.name for f in factory_kernels(text)
              if not f.helper and f.name not in have and (kernel is None or f.name == kernel)}
    if not wanted:
        return {}, {}
    configs, info = static_fallback(lifted_text(text), None, set(have), errors, None, path)
    return {n: c for n, c in configs.items() if n in wanted}, {n: i for n, i in info.items() if n in wanted}
