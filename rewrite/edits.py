"""Source surgery with positions from Python's own parser: text edits, kernel launch sites,
function-by-function merges. Edits are minimal (untouched lines stay byte-identical), so the
diff a user reviews shows only what a proposer meant to change."""

from __future__ import annotations

import ast
from dataclasses import dataclass

# dotted is used here and re-exported to the proposers
from tritonlens.analysis.kernel_discovery import discover, dotted
from tritonlens.analysis.python_ast import parse as parse_python


@dataclass
class Edit:
    start: int  # character offsets into the text
    end: int
    new: str


class Lines:
    """ast (line, byte column) → character offsets, for one text."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0]
        for line in text.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))
        self.lines = text.splitlines(keepends=True)

    def offset(self, lineno: int, col: int) -> int:
        if lineno - 1 >= len(self.lines):
            return len(self.text)
        line = self.lines[lineno - 1]
        chars = len(line.encode("utf-8")[:col].decode("utf-8", "ignore"))
        return self.starts[lineno - 1] + chars

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset))

    def line_start(self, lineno: int) -> int:
        return self.starts[lineno - 1]

    def line_end(self, lineno: int) -> int:
        return self.starts[lineno] if lineno < len(self.starts) else len(self.text)

    def indent_of(self, lineno: int) -> str:
        line = self.lines[lineno - 1]
        return line[: len(line) - len(line.lstrip())]


def apply(text: str, edits: list[Edit]) -> str:
    out, pos = [], 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start < pos:
            raise ValueError("overlapping edits")
        out.append(text[pos:e.start])
        out.append(e.new)
        pos = e.end
    out.append(text[pos:])
    return "".join(out)


def call_name(node) -> str:
    """The last part of a call's dotted name (`tl.sum(...)` → "sum"); "" for anything else."""
    return (dotted(node.func) or "").split(".")[-1] if isinstance(node, ast.Call) else ""


def names_in(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def first_free(base: str, used: set) -> str:
    """`base`, or base2, base3...: the first that `used` does not hold."""
    name, k = base, 2
    while name in used:
        name, k = f"{base}{k}", k + 1
    return name


def fresh_local(fn: ast.FunctionDef, base: str) -> str:
    """A local name `fn` does not use yet."""
    return first_free(base, names_in(fn) | {a.arg for a in fn.args.args})


def kernels(tree: ast.Module) -> list[ast.FunctionDef]:
    """Every module-level @triton.jit function, launchable kernels and device helpers alike."""
    return [k.node for k in discover(tree)]


def kernel_named(tree: ast.Module, name: str | None) -> ast.FunctionDef | None:
    """The JIT function `name`; without a name, the first launchable kernel (else the first one)."""
    found = discover(tree)
    if name is None:
        first = next((k for k in found if k.launchable), found[0] if found else None)
        return first.node if first is not None else None
    return next((k.node for k in found if k.name == name), None)


def constexpr_params(fn: ast.FunctionDef) -> list[str]:
    out = []
    for a in fn.args.args:
        if a.annotation is not None and "constexpr" in ast.unparse(a.annotation):
            out.append(a.arg)
    return out


def tl_calls(node, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and (dotted(n.func) or "").split(".")[-1] == name
            and (dotted(n.func) or "").count(".") >= 1]


@dataclass
class LaunchSite:
    call: ast.Call  # kernel[grid](...)
    grid: ast.AST  # the subscript's slice
    function: ast.FunctionDef | None  # the wrapper holding the launch


def launch_sites(tree: ast.Module, kernel: str) -> list[LaunchSite]:
    sites = []

    def visit(node, fn):
        if isinstance(node, ast.FunctionDef):
            fn = node
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == kernel):
            sites.append(LaunchSite(node, node.func.slice, fn))
        for child in ast.iter_child_nodes(node):
            visit(child, fn)

    visit(tree, None)
    return sites


def local_literal(fn: ast.FunctionDef | None, name: str, before_line: int) -> ast.Constant | None:
    """The int literal `name = 64` assigned last before `before_line` in `fn`, if that is all it is."""
    if fn is None:
        return None
    found = None
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and node.lineno < before_line:
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id == name:
                    found = node.value if (isinstance(node.value, ast.Constant) and isinstance(node.value.value, int)) else False
                elif isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for el, val in zip(t.elts, node.value.elts):
                        if isinstance(el, ast.Name) and el.id == name:
                            found = val if (isinstance(val, ast.Constant) and isinstance(val.value, int)) else False
    return found or None


def local_assignment(fn: ast.FunctionDef | None, name: str, before_line: int) -> ast.Assign | None:
    if fn is None:
        return None
    found = None
    for node in ast.walk(fn):
        if (isinstance(node, ast.Assign) and node.lineno < before_line
                and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)):
            found = node
    return found


def dict_entry(fn, dict_name: str, key: str, before: int):
    """The value a wrapper's local dict holds under `key` before line `before`: from its literal
    (`kw = {"AFFINE": False}`) or a store (`kw["AFFINE"] = affine`), the last one written."""
    found = None
    for n in ast.walk(fn) if fn is not None else ():
        if not isinstance(n, ast.Assign) or n.lineno >= before or (found is not None and n.lineno < found[0]):
            continue
        for t in n.targets:
            if isinstance(t, ast.Name) and t.id == dict_name and isinstance(n.value, ast.Dict):
                for k, v in zip(n.value.keys, n.value.values):
                    if isinstance(k, ast.Constant) and k.value == key:
                        found = (n.lineno, v)
            elif (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == dict_name
                  and isinstance(t.slice, ast.Constant) and t.slice.value == key):
                found = (n.lineno, n.value)
    return found[1] if found else None


# -- merging an LLM's partial reply ------------------------------------------------------
def top_level_defs(tree: ast.Module) -> dict[str, ast.AST]:
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def def_span(lines: Lines, node) -> tuple[int, int]:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return lines.line_start(first), lines.line_end(node.end_lineno)


def merge_functions(original: str, block: str) -> str:
    """Replace, by name, the original's top-level functions that `block` redefines; new functions
    are inserted before the first function that uses them (or before the first replaced one).
    Other top-level statements of the block (imports, constants) are added after the original's
    imports when the original does not have them already."""
    orig_tree = parse_python(original)
    block_tree = parse_python(block)
    lines = Lines(original)
    blines = Lines(block)
    odefs = top_level_defs(orig_tree)
    edits: list[Edit] = []
    new_defs: list[str] = []
    first_replaced = None
    for node in block_tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            s, e = def_span(blines, node)
            text = block[s:e]
            if not text.endswith("\n"):
                text += "\n"
            if node.name in odefs:
                os_, oe = def_span(lines, odefs[node.name])
                edits.append(Edit(os_, oe, text))
                first_replaced = os_ if first_replaced is None else min(first_replaced, os_)
            else:
                new_defs.append(text + "\n\n")
    orig_stmts = {ast.dump(n) for n in orig_tree.body}
    header = []
    for node in block_tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and ast.dump(node) not in orig_stmts:
            header.append(ast.get_source_segment(block, node) + "\n")
    if new_defs:
        at = first_replaced if first_replaced is not None else len(original)
        edits.append(Edit(at, at, "".join(new_defs)))
    if header:
        imports = [n for n in orig_tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        at = lines.line_end(imports[-1].end_lineno) if imports else 0
        edits.append(Edit(at, at, "".join(header)))
    return apply(original, edits)
