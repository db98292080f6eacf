"""A kernel file's project, read from its text: where its root is, what makes its package
importable, and which of its test files reach the kernel. Nothing here imports the project.

    lay = layout("proj/src/pkg/ops/rms.py")   # root proj/, import paths ("src", ".")
    find_tests("proj/src/pkg/ops/rms.py")     # ["tests/test_rms.py"]

Imports are resolved to files the way Python would find them with the project's import paths and
the test's own folder on sys.path (pytest's default "prepend" import mode), so relative imports and
flat script folders resolve too. Which tests reach a kernel file, and how (its imports, re-exports,
code that calls it, dispatch tables), is profiling/kernel_reach; which of them capture runs (the op's
own tests, none from another backend's folder) is profiling/own_tests. What this cannot see: modules
named at run time from values no file holds (plugins, entry points, names read from config).
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
    imports = [imp for node in _statements(tree.body) for imp in _imports_of(node)]
    return tuple(imports), frozenset(_top_level_names(tree.body)), tree


def _imports_of(node) -> list[_Import]:
    if isinstance(node, ast.Import):
        return [_Import(a.name, 0, None, a.asname or a.name.split(".")[0]) for a in node.names]
    if isinstance(node, ast.ImportFrom):
        return [_Import(node.module or "", node.level, a.name, a.asname or a.name) for a in node.names]
    return []


def _module_level(body):
    """The statements a module runs when loaded: its body and module-level if/try/with blocks."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            yield from _module_level(node.body + node.orelse if not isinstance(node, ast.With) else node.body)
            if isinstance(node, ast.Try):
                yield from _module_level(node.finalbody)
                for handler in node.handlers:
                    yield from _module_level(handler.body)


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


def parsed_tree(path: str) -> ast.Module | None:
    """The file's tree, parsed once per modification (None when it cannot be read or parsed)."""
    return _info(path)[2]


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
    module: str = ""  # as written


class ImportGraph:
    """The imports of every project file, each resolved once to the project file it names the
    way Python would find it: import paths first, then the importer's own folder."""

    def __init__(self, lay: ProjectLayout, files: list[Path] | None = None):
        self.lay = lay
        self.files = [os.path.realpath(f) for f in (files if files is not None else python_files(lay.root))]
        self._dirs = [os.path.realpath(d) for d in lay.path_dirs()]
        self._found: dict[tuple[str, str], str | None] = {}
        self.edges = {f: [self._edge(f, imp) for imp in _info(f)[0]] for f in self.files}
        self.sources = [f for f in self.files if not is_test_file(Path(f))]
        self._top: dict[str, list[_Edge]] = {}
        self._reach = None
        self._foreign: frozenset[str] | None = None

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
        return _Edge(target, imp.name, imp.bound, sub, imp.module)

    # -- what the reach graph reads ---------------------------------------------------------------------
    def module_file(self, base: str, dotted: str) -> str | None:
        return self._module_file(base, dotted)

    def mtime(self, f: str) -> float:
        try:
            return os.stat(f).st_mtime
        except OSError:
            return 0.0

    def defined_names(self, f: str) -> frozenset[str]:
        return _info(f)[1]

    def top_edges(self, f: str) -> list[_Edge]:
        """The imports a module runs when it is loaded: those outside its functions and classes."""
        if f not in self._top:
            tree = _info(f)[2]
            found = []
            if tree is not None:
                found = [self._edge(f, imp) for node in _module_level(tree.body) for imp in _imports_of(node)]
            self._top[f] = found
        return self._top[f]

    def text(self, f: str) -> str:
        try:
            with open(f, encoding="utf-8") as fh:
                return fh.read()
        except (OSError, UnicodeDecodeError):
            return ""

    def imports_triton(self, f: str) -> bool:
        return any(i.level == 0 and (i.module == "triton" or i.module.startswith("triton.")) for i in _info(f)[0])

    # -- tests ------------------------------------------------------------------------------------------------
    @property
    def reach_graph(self):
        if self._reach is None:
            from tritonlens.profiling.kernel_reach import ReachGraph
            self._reach = ReachGraph(self)
        return self._reach

    @property
    def foreign(self) -> frozenset[str]:
        """Folder names of kernels for other backends (profiling/own_tests.foreign_folders)."""
        if self._foreign is None:
            from tritonlens.profiling.own_tests import foreign_folders
            self._foreign = foreign_folders(self.sources, [f for f in self.files if is_test_file(Path(f))],
                                            os.path.realpath(self.lay.root), self.imports_triton, self.text)
        return self._foreign

    def routes_for(self, kernel_file: str | os.PathLike) -> list:
        """How each test file reaches `kernel_file` (kernel_reach.TestRoute), all of them, unranked."""
        from tritonlens.profiling.kernel_reach_links import test_route

        kernel = os.path.realpath(kernel_file)
        reach = self.reach_graph
        best = reach.reach(kernel)
        routes = (test_route(reach, best, kernel, f) for f in self.files if is_test_file(Path(f)))
        return [r for r in routes if r is not None]

    def picks_for(self, kernel_file: str | os.PathLike) -> list:
        """Every test file that reaches `kernel_file` as an own_tests.TestPick: the picked first (the
        op's own tests, most direct first), then those passed over, each with its reason."""
        from tritonlens.profiling.own_tests import holds_triton_kernel, select

        kernel = os.path.realpath(kernel_file)
        rel = Path(os.path.relpath(kernel, os.path.realpath(self.lay.root))).as_posix()
        modules = frozenset(Path(f).stem.lower().lstrip("_") for f in self.sources)
        return select(self.routes_for(kernel), rel, holds_triton_kernel(self.text(kernel)), self.foreign, modules)

    def tests_for(self, kernel_file: str | os.PathLike) -> list[str]:
        """The picked test files for `kernel_file`, relative to the project root, sorted."""
        return sorted(p.path for p in self.picks_for(kernel_file) if p.picked)


def find_tests(kernel_file: str | os.PathLike, lay: ProjectLayout | None = None,
               graph: ImportGraph | None = None) -> list[str]:
    """The project's test files (test_*.py, *_test.py) that reach `kernel_file`, as paths
    relative to the project root with forward slashes, sorted. Pass one `graph` for many files."""
    lay = lay or (graph.lay if graph is not None else layout(kernel_file))
    return (graph or ImportGraph(lay)).tests_for(kernel_file)
