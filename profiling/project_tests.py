"""A kernel file's project, read from its text: where its root is, what makes its package
importable, and which of its test files reach the kernel. Nothing here imports the project.

    lay = layout("proj/src/pkg/ops/rms.py")   # root proj/, import paths ("src", ".")
    find_tests("proj/src/pkg/ops/rms.py")     # ["tests/test_rms.py"]

A test reaches a kernel file when it imports that module, a name the module defines, or a name
re-exported from it by another module of the project (`from .ops.rms import rms_norm` in a
package `__init__`, any number of times over, `import *` included). Imports are resolved to files
the way Python would find them with the project's import paths and the test's own folder on
sys.path (pytest's default "prepend" import mode), so relative imports and flat script folders
resolve too. What this cannot see: imports made by name at run time (importlib, plugins).
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tritonlens.profiling.launch_records import project_root

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the setuptools folders are not read, "src" and "." still are
    tomllib = None

SKIP_DIRS = {"__pycache__", "node_modules", "build", "dist", "site-packages", "venv", "env", "third_party"}
MAX_FILES = 4000


@dataclass(frozen=True)
class ProjectLayout:
    """root: the project's folder; import_paths: folders relative to it that go on sys.path, most
    specific first ("src" for a src layout, the setuptools `where` / package-dir folders, ".")."""

    root: Path
    import_paths: tuple[str, ...]

    def path_dirs(self) -> list[Path]:
        return [(self.root / p).resolve() for p in self.import_paths]


def layout(path: str | os.PathLike) -> ProjectLayout:
    root = project_root(path)
    paths: list[str] = []
    for folder in _setuptools_folders(root / "pyproject.toml"):
        if (root / folder).is_dir() and folder not in paths:
            paths.append(folder)
    if (root / "src").is_dir() and "src" not in paths and any(
            (p / "__init__.py").exists() or p.suffix == ".py" for p in (root / "src").iterdir()):
        paths.append("src")
    paths.append(".")
    return ProjectLayout(root, tuple(dict.fromkeys(paths)))


def _setuptools_folders(pyproject: Path) -> list[str]:
    """[tool.setuptools.packages.find] where = [...] and package-dir {"" = "..."}."""
    if tomllib is None:
        return []
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    tool = data.get("tool", {}).get("setuptools", {})
    out = []
    find = tool.get("packages", {})
    if isinstance(find, dict):
        where = find.get("find", {}).get("where", []) if isinstance(find.get("find"), dict) else []
        out += [w for w in where if isinstance(w, str)]
    package_dir = tool.get("package-dir", {})
    if isinstance(package_dir, dict) and isinstance(package_dir.get(""), str):
        out.append(package_dir[""])
    return [os.path.normpath(p) for p in out if p and not os.path.isabs(p)]


def python_files(root: Path) -> list[Path]:
    """The project's .py files, skipping hidden folders, virtual environments and build output."""
    out: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS
                         and not (Path(folder, d) / "pyvenv.cfg").exists())
        out += [Path(folder, f) for f in sorted(files) if f.endswith(".py")]
        if len(out) >= MAX_FILES:
            break
    return out[:MAX_FILES]


def is_test_file(path: Path) -> bool:
    return path.name.startswith("test_") or path.name.endswith("_test.py")


# -- imports, resolved to files --------------------------------------------------------------
@dataclass(frozen=True)
class _Import:
    module: str  # as written (without the leading dots)
    level: int  # relative import depth
    name: str | None  # `from module import name`; None for `import module`
    bound: str  # the name bound in the importing module


@lru_cache(maxsize=8192)
def _parse(path: Path, mtime: float) -> tuple[tuple[_Import, ...], frozenset[str], frozenset[str]]:
    """(imports, names the module defines at top level, attribute names it uses)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return (), frozenset(), frozenset()
    imports: list[_Import] = []
    attrs: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports += [_Import(a.name, 0, None, a.asname or a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            imports += [_Import(node.module or "", node.level, a.name, a.asname or a.name) for a in node.names]
        elif isinstance(node, ast.Attribute):
            attrs.add(node.attr)
    return tuple(imports), frozenset(_top_level_names(tree.body)), frozenset(attrs)


def _top_level_names(body) -> set[str]:
    """Names bound at module level, looking into module-level if/else and try blocks."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.If):
            names |= _top_level_names(node.body) | _top_level_names(node.orelse)
        elif isinstance(node, ast.Try):
            names |= _top_level_names(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                names |= _top_level_names(handler.body)
    return names


def _info(path: Path):
    try:
        return _parse(path, path.stat().st_mtime)
    except OSError:
        return (), frozenset(), frozenset()


def _module_file(base: Path, dotted: str) -> Path | None:
    target = base.joinpath(*dotted.split(".")) if dotted else base
    for candidate in (target.with_name(target.name + ".py"), target / "__init__.py"):
        if dotted and candidate.is_file():
            return candidate.resolve()
    if not dotted and (base / "__init__.py").is_file():
        return (base / "__init__.py").resolve()
    return None


def resolve(lay: ProjectLayout, importer: Path, module: str, level: int) -> Path | None:
    """The project file `module` names when imported from `importer`, or None (not the project's)."""
    if level:
        base = importer.parent
        for _ in range(level - 1):
            base = base.parent
        return _module_file(base, module)
    for base in [*lay.path_dirs(), importer.parent.resolve()]:
        found = _module_file(base, module)
        if found is not None:
            return found
    return None


def reaching_names(lay: ProjectLayout, kernel_file: Path, files: list[Path]) -> set[tuple[Path, str]]:
    """(file, name) pairs through which the kernel file's names can be imported: its own
    top-level names, and every re-export of them (or of the module itself) by a project module."""
    kernel_file = kernel_file.resolve()
    reach = {(kernel_file, n) for n in _info(kernel_file)[1]}
    sources = [f for f in files if not is_test_file(f)]
    for _ in range(8):  # re-export chains are short; bounded against cycles
        grown = False
        for f in sources:
            fr = f.resolve()
            for imp in _info(f)[0]:
                if imp.name is None:
                    continue
                base = resolve(lay, f, imp.module, imp.level)
                new: set[tuple[Path, str]] = set()
                if imp.name == "*" and base is not None:
                    new = {(fr, n) for (src, n) in reach if src == base and not n.startswith("_")}
                elif (base, imp.name) in reach:
                    new = {(fr, imp.bound)}
                elif resolve(lay, f, f"{imp.module}.{imp.name}".strip("."), imp.level) == kernel_file:
                    new = {(fr, imp.bound)}  # `from pkg.ops import rmsnorm`: the module itself
                if not new <= reach:
                    reach |= new
                    grown = True
        if not grown:
            break
    return reach


def reaches(lay: ProjectLayout, test: Path, kernel_file: Path, reach: set[tuple[Path, str]]) -> bool:
    imports, _, attrs = _info(test)
    for imp in imports:
        base = resolve(lay, test, imp.module, imp.level)
        if imp.name is None:
            if base == kernel_file or any(src == base and n in attrs for src, n in reach):
                return True
            continue
        if base == kernel_file or (base, imp.name) in reach:
            return True
        if resolve(lay, test, f"{imp.module}.{imp.name}".strip("."), imp.level) == kernel_file:
            return True
    return False


def find_tests(kernel_file: str | os.PathLike, lay: ProjectLayout | None = None) -> list[str]:
    """The project's test files (test_*.py, *_test.py) that reach `kernel_file`, as paths
    relative to the project root with forward slashes, sorted."""
    kernel = Path(kernel_file).resolve()
    lay = lay or layout(kernel)
    files = python_files(lay.root)
    reach = reaching_names(lay, kernel, files)
    found = [f for f in files if is_test_file(f) and f.resolve() != kernel and reaches(lay, f, kernel, reach)]
    return sorted(f.resolve().relative_to(lay.root.resolve()).as_posix() for f in found)
