"""What a project file's code reads and names, per top-level name, read from its tree: the dotted
names each definition uses (`pkg.ops.rms_norm(x)` reads `pkg.ops.rms_norm`), the
strings it holds, and the modules it names by string for a dispatcher to import. Nothing here
imports the project.

A dispatch site is a module named by a string: a constant that reads as a dotted module name
(`"pkg.backends._triton.rms_norm"` in a table, a tuple handed to a registry, an
`importlib.import_module` argument) or an f-string given to `import_module` / `__import__`
(`f"pkg.ops.{name}"`, `f"{__name__}.{mod}"`), whose holes stand for one name each. Its key is the
op name written beside it: the first plain string of the call that holds it
(`declare("rms_norm", ("pkg.x", ...))`), the dict key it is the value of (`{"rms_norm": "pkg.x"}`),
or, for an f-string, the name its hole matches.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

MAX_CHAIN = 6  # attribute chains longer than this are read only up to it
_MODULE_NAME = re.compile(r"^\.*[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
_SEGMENT = r"[A-Za-z_]\w*"


@dataclass(frozen=True)
class DispatchSite:
    """A module named by a string in `owner`'s code (None: module-level code). `pattern` is a
    regular expression over dotted module names (a constant matches only itself); `key` the op name
    beside it, None when none is written; `hole` is true for an f-string, whose match gives the key."""

    pattern: str
    key: str | None
    owner: str | None
    hole: bool
    package_relative: bool  # `import_module(".x", __package__)`: relative to the file's package


@dataclass(frozen=True)
class FileFacts:
    """refs: top-level name (None: statements outside any definition) -> dotted names its code reads
    (`getattr(m, "x")` reads `m.x`; `getattr(m, name)` reads `m.*`, any name of `m`).
    strings: top-level name -> the string constants in its code; all_strings: the file's."""

    refs: dict[str | None, frozenset[str]]
    strings: dict[str | None, frozenset[str]]
    all_strings: frozenset[str]
    sites: tuple[DispatchSite, ...]


def _chain(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _owners(body, out: list[tuple[str | None, ast.AST]]) -> None:
    """(top-level name, the code that defines it), looking into module-level if/try blocks;
    statements that bind no name go to None."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((node.name, node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            value = node.value if node.value is not None else node
            out += [(name, value) for name in names] or [(None, node)]
        elif isinstance(node, ast.If):
            out.append((None, node.test))
            _owners(node.body + node.orelse, out)
        elif isinstance(node, ast.Try):
            _owners(node.body + node.orelse + node.finalbody, out)
            for handler in node.handlers:
                _owners(handler.body, out)
        elif not isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append((None, node))


def _is_import_call(call: ast.Call) -> bool:
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name in ("import_module", "__import__")


def _fstring_pattern(node: ast.JoinedStr, module: str, package: str) -> str | None:
    out = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            out.append(re.escape(part.value))
        elif isinstance(part, ast.FormattedValue):
            name = part.value.id if isinstance(part.value, ast.Name) else None
            if name == "__name__":
                out.append(re.escape(module))
            elif name == "__package__":
                out.append(re.escape(package))
            else:
                out.append(f"({_SEGMENT})")
        else:
            return None
    return "".join(out) if out else None


class _Reader:
    """One walk over a top-level name's code: its reads, its strings and its dispatch sites."""

    def __init__(self, owner: str | None, module: str, package: str):
        self.owner, self.module, self.package = owner, module, package
        self.reads: set[str] = set()
        self.strings: set[str] = set()
        self.sites: list[DispatchSite] = []

    def visit(self, node: ast.AST, key: str | None = None) -> None:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                self.strings.add(node.value)
                if _MODULE_NAME.match(node.value):
                    self.sites.append(DispatchSite(re.escape(node.value), key, self.owner, False, False))
            return
        if isinstance(node, (ast.Attribute, ast.Name)):
            dotted = _chain(node)
            if dotted:  # the whole chain; its prefixes are the way to it, not uses of their own
                self.reads.add(".".join(dotted.split(".")[:MAX_CHAIN]))
                return
        elif isinstance(node, ast.Call):
            key = self._call(node, key)
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                own = k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else key
                if k is not None:
                    self.visit(k, key)
                self.visit(v, own)
            return
        for child in ast.iter_child_nodes(node):
            self.visit(child, key)

    def _call(self, node: ast.Call, key: str | None) -> str | None:
        f = node.func
        if isinstance(f, ast.Name) and f.id == "getattr" and len(node.args) >= 2:
            base = _chain(node.args[0])
            if base:
                name = node.args[1]
                attr = name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "*"
                self.reads.add(f"{base}.{attr}")
        if _is_import_call(node) and node.args:
            first = node.args[0]
            if isinstance(first, ast.JoinedStr):
                pattern = _fstring_pattern(first, self.module, self.package)
                if pattern:
                    self.sites.append(DispatchSite(pattern, key, self.owner, True, False))
            elif (isinstance(first, ast.Constant) and isinstance(first.value, str)
                  and first.value.startswith(".") and len(node.args) > 1):
                self.sites.append(DispatchSite(re.escape(first.value), key, self.owner, False, True))
        plain = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                 and not _MODULE_NAME.match(a.value)]
        return plain[0] if plain else key


def file_facts(tree: ast.Module, module: str, package: str) -> FileFacts:
    """The facts of one file whose dotted module name is `module` in package `package`."""
    owners: list[tuple[str | None, ast.AST]] = []
    _owners(tree.body, owners)
    refs: dict[str | None, set[str]] = {}
    strings: dict[str | None, set[str]] = {}
    sites: list[DispatchSite] = []
    for owner, code in owners:
        reader = _Reader(owner, module, package)
        reader.visit(code)
        refs.setdefault(owner, set()).update(reader.reads)
        strings.setdefault(owner, set()).update(reader.strings)
        sites += reader.sites
    every = frozenset().union(*strings.values()) if strings else frozenset()
    return FileFacts({k: frozenset(v) for k, v in refs.items()}, {k: frozenset(v) for k, v in strings.items()},
                     every, tuple(dict.fromkeys(sites)))
