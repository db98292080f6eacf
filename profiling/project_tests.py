"""A kernel file's project, read from its text: where its root is, what makes its package
importable, and which of its test files reach the kernel. Nothing here imports the project.

    lay = layout("proj/src/pkg/ops/rms.py")   # root proj/, import paths ("src", ".")
    find_tests("proj/src/pkg/ops/rms.py")     # ["tests/test_rms.py"]

A test reaches a kernel file when it is that file, or imports that module, a name the module
defines, or a name re-exported from it by another module of the project (`from .ops.rms import rms_norm` in a
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

from tritonlens.analysis.python_ast import parse as parse_python
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


def _statements(body):
    """Every statement, at any depth (function bodies, if/try/with/match blocks), never descending
    into expressions: imports are statements, and the expressions are most of a tree."""
    for node in body:
        yield node
        yield from _statements(c for c in ast.iter_child_nodes(node)
                               if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case)))


@lru_cache(maxsize=8192)
def _parse(path: str, mtime: float) -> tuple[tuple[_Import, ...], frozenset[str], ast.Module | None]:
    """(imports, names the module defines at top level, the tree)."""
    try:
        with open(path, encoding="utf-8") as fh:
            tree = parse_python(fh.read(), path)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return (), frozenset(), None
    imports: list[_Import] = []
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            imports += [_Import(a.name, 0, None, a.asname or a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            imports += [_Import(node.module or "", node.level, a.name, a.asname or a.name) for a in node.names]
    return tuple(imports), frozenset(_top_level_names(tree.body)), tree


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


def _info(path: str):
    try:
        return _parse(path, os.stat(path).st_mtime)
    except OSError:
        return (), frozenset(), None


@dataclass(frozen=True)
class _Edge:
    """One import of one file: the project file it names (`from X import n`: X; `import X`: X), the
    name taken and the name bound, and the file of `X.n` when that is itself a module."""

    target: str | None
    name: str | None
    bound: str
    submodule: str | None


class ImportGraph:
    """The imports of every project file, each resolved once to the project file it names the
    way Python would find it: import paths first, then the importer's own folder."""

    def __init__(self, lay: ProjectLayout, files: list[Path] | None = None):
        self.lay = lay
        self.files = [os.path.realpath(f) for f in (files if files is not None else python_files(lay.root))]
        self._dirs = [os.path.realpath(d) for d in lay.path_dirs()]
        self._found: dict[tuple[str, str], str | None] = {}
        self.edges = {f: [self._edge(f, imp) for imp in _info(f)[0]] for f in self.files}
        self._sources = [f for f in self.files if not is_test_file(Path(f))]

    def _module_file(self, base: str, dotted: str) -> str | None:
        key = (base, dotted)
        if key not in self._found:
            target = os.path.join(base, *dotted.split(".")) if dotted else base
            found = None
            for candidate in ((target + ".py", os.path.join(target, "__init__.py")) if dotted
                              else (os.path.join(base, "__init__.py"),)):
                if os.path.isfile(candidate):
                    found = os.path.realpath(candidate)
                    break
            self._found[key] = found
        return self._found[key]

    def resolve(self, importer: str, module: str, level: int) -> str | None:
        """The project file `module` names when imported from `importer`, or None."""
        if level:
            base = os.path.dirname(importer)
            for _ in range(level - 1):
                base = os.path.dirname(base)
            return self._module_file(base, module)
        for base in (*self._dirs, os.path.dirname(importer)):
            found = self._module_file(base, module)
            if found is not None:
                return found
        return None

    def _edge(self, importer: str, imp: _Import) -> _Edge:
        target = self.resolve(importer, imp.module, imp.level) if imp.module or imp.level else None
        sub = None
        if imp.name is not None and imp.name != "*":
            sub = self.resolve(importer, f"{imp.module}.{imp.name}".strip("."), imp.level)
        return _Edge(target, imp.name, imp.bound, sub)

    def reaching(self, kernel: str) -> set[tuple[str, str]]:
        """(file, name) pairs through which the kernel file's names can be imported: its own
        top-level names, and every re-export of them (or of the module itself) by a project module."""
        reach = {(kernel, n) for n in _info(kernel)[1]}
        for _ in range(8):  # re-export chains are short; bounded against cycles
            size = len(reach)
            for f in self._sources:
                for e in self.edges.get(f, ()):
                    if e.name is None:
                        continue
                    if e.name == "*" and e.target is not None:
                        reach |= {(f, n) for (src, n) in list(reach) if src == e.target and not n.startswith("_")}
                    elif (e.target, e.name) in reach or e.submodule == kernel:
                        reach.add((f, e.bound))  # a re-export, or `from pkg.ops import rmsnorm`
            if len(reach) == size:
                break
        return reach

    def reaches(self, test: str, kernel: str, reach: set[tuple[str, str]]) -> bool:
        attrs = None
        for e in self.edges.get(test, ()):
            if e.target == kernel or e.submodule == kernel or (e.name is not None and (e.target, e.name) in reach):
                return True
            if e.name is None and any(src == e.target for src, _ in reach):
                if attrs is None:  # `import pkg` then `pkg.rms_norm(...)`
                    tree = _info(test)[2]
                    attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} if tree else set()
                if any(src == e.target and n in attrs for src, n in reach):
                    return True
        return False

    def tests_for(self, kernel_file: str | os.PathLike) -> list[str]:
        kernel = os.path.realpath(kernel_file)
        reach = self.reaching(kernel)
        root = os.path.realpath(self.lay.root)
        # a test file that defines its own kernels (a self-contained kernel + test file) reaches itself
        found = [f for f in self.files if is_test_file(Path(f)) and (f == kernel or self.reaches(f, kernel, reach))]
        return sorted(Path(os.path.relpath(f, root)).as_posix() for f in found)


def find_tests(kernel_file: str | os.PathLike, lay: ProjectLayout | None = None,
               graph: ImportGraph | None = None) -> list[str]:
    """The project's test files (test_*.py, *_test.py) that reach `kernel_file`, as paths
    relative to the project root with forward slashes, sorted. Pass one `graph` for many files."""
    lay = lay or (graph.lay if graph is not None else layout(kernel_file))
    return (graph or ImportGraph(lay)).tests_for(kernel_file)
