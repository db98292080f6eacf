"""One kernel of a file as a module Triton's front end can compile without the user's module.

Importing the user's file would run whatever it runs at import (torch set-up, project imports,
other files' side effects); the front end needs far less: the Triton imports, the kernel, the
`@triton.jit` helpers it calls and the module constants they read. `build_standalone` cuts those
pieces out of the analyzed text and leaves everything else blank, so each piece stays on its
original line and every line number the compiler reports is the user's line.

What is left out on purpose: decorators (the worker wraps the functions with `triton.jit`
itself), launches, plain Python functions, non-Triton imports and any constant whose value is
not a literal expression. A kernel reading one of those fails with a NameError in the worker,
which is an inconclusive answer, never a confirmation.

Pure: the analysis' tree-sitter layout and the standard `ast` module only; no Triton here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .layout import LayoutMemo, read_layout, regions
from .model import module_level_statements
from .python_ast import parse as parse_python
from .source import Source

_IMPORTS = ("import_statement", "import_from_statement")


@dataclass(frozen=True)
class Standalone:
    """The standalone module of one kernel: `text` has the user's file's line count, blank where
    nothing was kept; `statements` are the 1-based (first, last) lines of each kept statement,
    executed one at a time so that one failing import leaves only its own names undefined;
    `functions` are the jit functions to wrap (the kernel first)."""

    kernel: str
    text: str
    statements: tuple[tuple[int, int], ...]
    functions: tuple[str, ...]
    left_out: tuple[str, ...]  # module constants the pieces read whose value is not a literal expression
    # Names the file defines at module level that this module does not: a NameError for one of
    # them is the standalone module's gap, not the kernel's.
    absent: frozenset[str] = frozenset()


def _is_triton_import(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Import):
        return all(a.name == "triton" or a.name.startswith("triton.") for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom):
        return not stmt.level and bool(stmt.module) and (stmt.module == "triton" or stmt.module.startswith("triton."))
    return False


def _literal(node: ast.AST, names: set[str]) -> bool:
    """Whether evaluating `node` at module level runs nothing but arithmetic on literals, other
    module constants and Triton attributes (`tl.float16`, `tl.constexpr(64)`)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Attribute):
        return _literal(node.value, names)
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand, names)
    if isinstance(node, ast.BinOp):
        return _literal(node.left, names) and _literal(node.right, names)
    if isinstance(node, ast.BoolOp):
        return all(_literal(v, names) for v in node.values)
    if isinstance(node, ast.Compare):
        return _literal(node.left, names) and all(_literal(c, names) for c in node.comparators)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_literal(e, names) for e in node.elts)
    if isinstance(node, ast.Call):
        # Only `<triton name>.constexpr(...)`: the spelling of a constexpr global.
        f = node.func
        return (isinstance(f, ast.Attribute) and f.attr == "constexpr" and _literal(f.value, names)
                and not node.keywords and all(_literal(a, names) for a in node.args))
    return False


def _constant_is_literal(text: str, names: set[str]) -> bool:
    try:
        tree = parse_python(text)
    except SyntaxError:
        return False
    if len(tree.body) != 1:
        return False
    stmt = tree.body[0]
    if isinstance(stmt, ast.Assign):
        return all(isinstance(t, ast.Name) for t in stmt.targets) and _literal(stmt.value, names)
    if isinstance(stmt, ast.AnnAssign):
        return (isinstance(stmt.target, ast.Name) and stmt.value is not None and _literal(stmt.value, names)
                and _literal(stmt.annotation, names | {"int", "float", "bool", "str"}))
    return False


def _import_names(text: str, triton_only: bool = True) -> set[str]:
    """The names an import statement binds (only a Triton import's, unless `triton_only` is False)."""
    try:
        tree = parse_python(text)
    except SyntaxError:
        return set()
    out = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) and (_is_triton_import(stmt) or not triton_only):
            for a in stmt.names:
                out.add(a.asname or (a.name.split(".")[0] if isinstance(stmt, ast.Import) else a.name))
    return out


class _Lines:
    """The output text, filled piece by piece at the pieces' own lines."""

    def __init__(self, src: Source):
        self.src = src
        self.count = src.data.count(b"\n") + 1
        self.lines = [""] * self.count
        self.spans: list[tuple[int, int]] = []

    def put(self, node, first_row: int | None = None) -> None:
        """Copy `node`'s lines (from `first_row`, default its first), without the indentation of
        its first line: a definition inside a module-level `if` becomes a top-level one."""
        first = node.start_point[0] if first_row is None else first_row
        last = node.end_point[0]
        indent = len(self.src.line_text(first)) - len(self.src.line_text(first).lstrip())
        for row in range(first, last + 1):
            line = self.src.line_text(row)
            strip = min(indent, len(line) - len(line.lstrip()))
            self.lines[row] = line[strip:]
        self.spans.append((first + 1, last + 1))

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def build_standalones(src: Source, names: set[str] | None = None) -> dict[str, Standalone]:
    """The standalone module of each jit function of `src` named in `names` (all when None)."""
    lay = read_layout(src, LayoutMemo())
    imports, bound = [], set()
    in_file = set(lay.kernels) | set(lay.functions) | set(lay.constants)
    for node in module_level_statements(src):
        if node.type in _IMPORTS:
            got = _import_names(src.text_of(node).strip())
            in_file |= _import_names(src.text_of(node).strip(), triton_only=False)
            if got:
                imports.append(node)
                bound |= got
        elif node.type == "class_definition" and node.child_by_field_name("name") is not None:
            in_file.add(src.text_of(node.child_by_field_name("name")))
    out = {}
    for name in lay.kernels:
        if names is not None and name not in names:
            continue
        kernel_regions, _plain = regions(lay, name)
        lines = _Lines(src)
        for node in imports:
            lines.put(node)
        functions, constants = [name], []
        for tag, node in kernel_regions:
            if tag == b"k" or tag == b"j":
                fn = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
                if tag == b"j":
                    name_node = fn.child_by_field_name("name")
                    functions.append(src.text_of(name_node))
                lines.put(fn)  # its decorators stay behind: the worker applies `triton.jit` itself
            elif tag == b"c":
                constants.append(node)
        # A name assigned twice keeps both statements or neither: half of them would give it a
        # value the file never has at launch time.
        known = bound | set(lay.constants)
        by_name: dict[str, list] = {}
        for node in constants:
            left = node.named_children[0].child_by_field_name("left") if node.named_children else None
            by_name.setdefault(src.text_of(left) if left is not None else "", []).append(node)
        left_out, kept = [], set()
        for constant, nodes in by_name.items():
            if constant and all(_constant_is_literal(src.text_of(n), known) for n in nodes):
                for n in nodes:
                    lines.put(n)
                kept.add(constant)
            else:
                left_out.append(constant)
        spans = tuple(sorted(lines.spans))
        out[name] = Standalone(name, lines.text(), spans, tuple(dict.fromkeys(functions)),
                               tuple(sorted(set(left_out))), frozenset(in_file - bound - kept - set(functions)))
    return out
