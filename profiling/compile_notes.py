"""One actionable line for a kernel that could not compile because a name it needs did not import.

The compile job runs the file's top level statement by statement (worker/tolerant_module.py): an
import this interpreter cannot make leaves its names undefined, and a kernel reading one of them
fails with "NameError: X is not defined". That is the machine's gap, not the kernel's, and the
user can close it: the line says which import failed and what to set. A file may catch the
failed import itself and bind the name to None (`except ImportError: libdevice = None`, another
vendor's library); the kernel then fails on "'NoneType' object has no attribute", and the line
names that import.
"""

from __future__ import annotations

import ast
import re
import sys

from tritonlens.analysis.python_ast import parse as parse_python
from tritonlens.profiling.worker.compile_report import CompileReport

_NAME_ERROR = re.compile(r"(?:NameError\(')?(\w+)'? is not defined")
_FAILURE = re.compile(r"^line (\d+): (\w+): (.*)$")
_NONE_ATTR = re.compile(r"'NoneType' object has no attribute '(\w+)'")


def _bound_by(text: str, line: int) -> set[str]:
    """The names the top-level statement starting at `line` binds."""
    try:
        tree = parse_python(text)
    except SyntaxError:
        return set()
    for stmt in tree.body:
        if stmt.lineno != line:
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return {a.asname or a.name.split(".")[0] for a in stmt.names}
        return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return set()


def explain_missing_names(result: CompileReport, text: str, python: str | None) -> None:
    """Add the actionable line to each kernel's note whose compile failed on a name a failed
    top-level statement should have bound."""
    failures = []
    for f in result.module_failures:
        m = _FAILURE.match(str(f))
        if m:
            failures.append((int(m.group(1)), m.group(2), m.group(3), _bound_by(text, int(m.group(1)))))
    if not failures:
        return
    interpreter = python or sys.executable
    for k in result.kernels:
        messages = [c.error.message for c in k.configs if c.error is not None]
        if k.error is not None:
            messages.append(k.error.message)
        missing = {m.group(1) for msg in messages for m in _NAME_ERROR.finditer(msg)}
        hit = next(((line, etype, why, names & missing) for line, etype, why, names in failures if names & missing),
                   None)
        if hit is None:
            continue
        line, etype, why, names = hit
        hint = (f"{', '.join(sorted(names))} did not import here (line {line}: {etype}: {why[:60]}); set "
                f"tritonlens.python (--python) to an interpreter that imports the project (now {interpreter})")
        k.note = hint if not k.note else f"{hint}. {k.note}"


def explain_none_imports(result: CompileReport, text: str) -> None:
    """Note, for each kernel whose compile failed on an attribute of None, the import the file
    replaced by None when it failed here (a `try: from X import name` / `except: name = None`)."""
    try:
        tree = parse_python(text)
    except SyntaxError:
        return
    fallbacks = _none_fallbacks(tree)
    if not fallbacks:
        return
    lines = text.splitlines()
    for k in result.kernels:
        for c in k.configs:
            m = _NONE_ATTR.search(c.error.message) if c.error is not None else None
            line = c.error.line if m else None
            if not line or not 0 < line <= len(lines):
                continue
            said = set(re.findall(r"(\w+)\s*\.\s*" + m.group(1) + r"\b", lines[line - 1]))
            hit = next((f for name, f in fallbacks.items() if name in said), None)
            if hit is not None:
                name, at, module = hit
                hint = f"{name} is None here: its import from {module} (line {at}) is not available in this Triton"
                k.note = hint if not k.note else f"{hint}. {k.note}"
                break


def _none_fallbacks(tree: ast.Module) -> dict[str, tuple[str, int, str]]:
    """{name: (name, import line, module)} for top-level `try: from M import name` whose handler binds name = None."""
    out = {}
    # inside a module-level `if` too (`if has_triton_tle(3, 6, 0): try: import triton.experimental.tle
    # .language as tle ...`), and `import M as name` as well as `from M import name`
    tries = [st for top in tree.body for st in ast.walk(top) if isinstance(st, ast.Try)
             and isinstance(top, (ast.Try, ast.If))]
    for stmt in tries:
        imported = {(a.asname or a.name): (st.lineno, st.module or "") for st in stmt.body
                    if isinstance(st, ast.ImportFrom) for a in st.names}
        imported.update({a.asname: (st.lineno, a.name) for st in stmt.body
                         if isinstance(st, ast.Import) for a in st.names if a.asname})
        for handler in stmt.handlers:
            for st in handler.body:
                if (isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant) and st.value.value is None):
                    for t in st.targets:
                        if isinstance(t, ast.Name) and t.id in imported:
                            at, module = imported[t.id]
                            out[t.id] = (t.id, at, module)
    return out
