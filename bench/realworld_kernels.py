"""Which kernel files and kernels the compile-coverage bench (`realworld_coverage.py`) counts.

A kernel file is one `check` reads (other vendors' backend folders skipped) that defines a Triton
JIT function. Each JIT function is launchable or a device helper (`kernel_roles` where the checkout
has it, else kernel discovery's kinds), and a launchable kernel is self-contained when a wrapper in
its own file launches it and neither the kernel (with its decorators and the file's JIT functions it
calls) nor that wrapper uses a name imported from the project; the rest are library kernels. A
kernel a function builds (a jit def nested in a top-level function: profiling/factory_kernels.py) is
counted too, launchable unless it returns a value, never self-contained. Files whose only kernels are
built by functions are not kernel files, so that the drawn samples stay the ones already measured.
"""

from __future__ import annotations

import ast
import collections
import random
from pathlib import Path

from tritonlens.analysis.file_walk import Walk, iter_python_files
from tritonlens.analysis.kernel_discovery import discover
from tritonlens.profiling.factory_kernels import factory_kernels


def kernel_files(folder: Path) -> list[Path]:
    """The files `check` would read in `folder` that define a Triton JIT function."""
    texts = {p: p.read_text(encoding="utf-8", errors="replace") for p in iter_python_files([str(folder)], Walk())}
    return [p for p, text in texts.items() if "jit" in text and discover(_parse(text) or ast.Module([], []))]


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def sample(files: list[Path], root: Path, n: int, seed: int) -> list[Path]:
    """n of `files`, allotted to sub-folders (two levels under `root`) by their share, drawn with `seed`."""
    if n >= len(files):
        return list(files)
    strata: dict[tuple, list[Path]] = collections.defaultdict(list)
    for f in files:
        strata[f.relative_to(root).parts[:-1][:2]].append(f)
    shares = {k: n * len(v) / len(files) for k, v in strata.items()}
    take = {k: int(s) for k, s in shares.items()}
    for k in sorted(shares, key=lambda k: (int(shares[k]) - shares[k], k))[: n - sum(take.values())]:
        take[k] += 1  # largest remainders first
    rng = random.Random(seed)
    return sorted(f for k in sorted(strata) for f in rng.sample(sorted(strata[k]), take[k]))


def project_packages(folder: Path) -> set[str]:
    """The project's top-level packages: the shallowest folders with an `__init__.py` (not the
    namespace packages deeper down, whose names could be anyone's)."""
    inits = sorted(folder.rglob("__init__.py"), key=lambda p: len(p.parts))
    return {p.parent.name for p in inits if inits and len(p.parts) == len(inits[0].parts)}


def _helpers(text: str, jits) -> set[str]:
    """Names of the file's device helpers: the kernel-roles analysis where this checkout has one,
    else kernel discovery's kinds (returns a value, a combine function, called from a JIT function)."""
    try:
        from tritonlens.analysis.kernel_roles import device_helpers
    except ImportError:
        return {j.name for j in jits if not j.launchable}
    from tritonlens.analysis.engine import Analyzer

    module = Analyzer().analyze(text).module
    return device_helpers(module) if module is not None else set()


def classify(text: str, packages: set[str]) -> list[dict]:
    """Every JIT function of the file: name, def line, launchable, self-contained."""
    tree = _parse(text)
    if tree is None:
        return []
    jits = discover(tree)
    helpers = _helpers(text, jits)
    fns = {j.name: j.node for j in jits}
    project_names = set()  # names the file binds by importing from its own project
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in packages):
            project_names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            project_names.update((a.asname or a.name).split(".")[0] for a in node.names
                                 if a.name.split(".")[0] in packages)
    wrappers = collections.defaultdict(list)  # kernel name → the functions that launch it (`name[grid](...)`)
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name not in fns:
            for n in ast.walk(fn):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) and isinstance(n.func.value, ast.Name):
                    wrappers[n.func.value.id].append(fn)
    out = []
    for j in jits:
        needed, todo, seen = set(), [j.node, *wrappers[j.name]], set()
        while todo:  # the kernel, its decorators, its wrappers, and the file's JIT functions these call
            fn = todo.pop()
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            for n in ast.walk(fn):
                if isinstance(n, ast.Name):
                    needed.add(n.id)
                    if n.id in fns:
                        todo.append(fns[n.id])
        out.append({"name": j.name, "line": j.line, "launchable": j.name not in helpers,
                    "self_contained": bool(wrappers[j.name]) and not (needed & project_names)})
    out += [{"name": f.name, "line": f.line, "launchable": not f.helper, "self_contained": False}
            for f in factory_kernels(text) if f.name not in fns]
    return out
