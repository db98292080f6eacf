"""The project's Python files as the host evaluator reads them: each file's top-level functions,
constants and `from X import name` bindings, and the file an import names (found by path from the
importing file's folder and its parents, the way a project's own package resolves; never imported)."""

from __future__ import annotations

from pathlib import Path

from tritonlens.analysis.source import Source

MAX_PARENTS = 12  # folders above the importing file searched for an absolute import's package


class ProjectFile:
    """One parsed file of the project: its functions, constants and `from X import name` bindings."""

    def __init__(self, src: Source, path: str | None):
        self.src, self.path = src, path
        self.functions: dict = {}
        self.constants: dict = {}
        self.imports: dict[str, tuple[str, str]] = {}  # local name → (module as written, name there)
        for st in src.root.named_children:
            node = st.child_by_field_name("definition") if st.type == "decorated_definition" else st
            if node is not None and node.type == "function_definition":
                self.functions[src.text_of(node.child_by_field_name("name"))] = node
            elif st.type == "expression_statement" and st.named_children and st.named_children[0].type == "assignment":
                a = st.named_children[0]
                left = a.child_by_field_name("left")
                if left is not None and left.type == "identifier" and a.child_by_field_name("right") is not None:
                    self.constants[src.text_of(left)] = a.child_by_field_name("right")
            elif st.type == "import_from_statement":
                mod = st.child_by_field_name("module_name")
                for item in st.children_by_field_name("name"):
                    if item.type == "aliased_import":
                        name, alias = item.child_by_field_name("name"), item.child_by_field_name("alias")
                        self.imports[src.text_of(alias)] = (src.text_of(mod), src.text_of(name))
                    else:
                        self.imports[src.text_of(item)] = (src.text_of(mod), src.text_of(item))


class ProjectFiles:
    """The project files read so far, parsed once each."""

    def __init__(self):
        self._parsed: dict[str, ProjectFile | None] = {}
        self._found: dict[tuple[str, str], ProjectFile | None] = {}

    def imported(self, module: str, f: ProjectFile) -> ProjectFile | None:
        """The project file `module` (as written in `f`'s import) names, parsed; None when not found."""
        if f.path is None:
            return None
        key = (module, f.path)
        if key not in self._found:
            self._found[key] = self._find(module, f)
        return self._found[key]

    def _find(self, module: str, f: ProjectFile) -> ProjectFile | None:
        here = Path(f.path).parent
        dots = len(module) - len(module.lstrip("."))
        parts = [p for p in module.lstrip(".").split(".") if p]
        if dots:
            base = here
            for _ in range(dots - 1):
                base = base.parent
            candidates = [base.joinpath(*parts)] if parts else []
        else:
            candidates = [anc.joinpath(*parts) for anc in (here, *here.parents)][:MAX_PARENTS] if parts else []
        for c in candidates:
            for p in (c.with_suffix(".py"), c / "__init__.py"):
                key = str(p)
                if key in self._parsed:
                    if self._parsed[key] is not None:
                        return self._parsed[key]
                    continue
                try:
                    text = p.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    self._parsed[key] = None
                    continue
                self._parsed[key] = ProjectFile(Source(text), key)
                return self._parsed[key]
        return None
