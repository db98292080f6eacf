"""The jit helpers a kernel calls, as kernel models: those of its own file, and those of the project
files it imports them from (`from .utils import load_ptr`, `from .utils import *`), found by path
the way the project's package resolves (project_files.py) and analysed as text, never imported."""

from __future__ import annotations

from tritonlens.analysis.engine import Analyzer
from tritonlens.profiling.project_files import ProjectFile, ProjectFiles

_DEPTH = 2  # star imports followed through this many files


class Helpers:
    """Finds a jit helper by the name a kernel of `module` (the file of `main`) calls it by."""

    def __init__(self, module, main: ProjectFile):
        self.module, self.main = module, main
        self._files = ProjectFiles()
        self._models: dict[str, object] = {}  # path → analysed module (None: not analysable)

    def get(self, name: str):
        """The helper's kernel model, or None (not a jit function, or not found)."""
        own = self.module.kernel(name)
        if own is not None:
            return own
        return self._find(name, self.main, 0)

    def _find(self, name: str, f: ProjectFile, depth: int):
        if f is not self.main and name in f.functions:
            return self._model(f).kernel(name) if self._model(f) is not None else None
        if name in f.imports:
            module, there = f.imports[name]
            target = self._files.imported(module, f)
            return self._find(there, target, depth + 1) if target is not None and depth < _DEPTH else None
        if depth >= _DEPTH:
            return None
        for module in _star_imports(f):
            target = self._files.imported(module, f)
            found = self._find(name, target, depth + 1) if target is not None else None
            if found is not None:
                return found
        return None

    def _model(self, f: ProjectFile):
        if f.path not in self._models:
            try:
                self._models[f.path] = Analyzer().analyze(f.src.text).module
            except Exception:  # noqa: BLE001 - a file the analysis cannot read lends no helper
                self._models[f.path] = None
        return self._models[f.path]


def _star_imports(f: ProjectFile) -> list[str]:
    """The modules `f` imports everything from (`from .utils import *`)."""
    out = []
    for st in f.src.root.named_children:
        if st.type == "import_from_statement" and any(c.type == "wildcard_import" for c in st.children):
            mod = st.child_by_field_name("module_name")
            if mod is not None:
                out.append(f.src.text_of(mod))
    return out
