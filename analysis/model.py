"""The kernel model: what a file's `@triton.jit` functions do, and how they are launched.

Built from a tree-sitter tree, so half-typed code still yields a model: whatever parsed is used,
ERROR nodes are skipped. The pieces live in their own modules: `aliases` (how the file names
Triton), `kernel_types` (the model's dataclasses), `kernel_body` (reading one kernel's body) and
`launches` (launch sites and the configurations they resolve to); this module finds the kernels
and assembles them, and keeps every name importable from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .aliases import Aliases, collect_aliases
from .kernel_body import build_kernel, decorator_kind, split_arguments
from .kernel_discovery import KernelKind, Uses, is_combining_call, kind_of
from .kernel_types import (
    ATOMICS,
    MAX_CONFIGS,
    REDUCTIONS,
    Assignment,
    AutotuneConfig,
    Config,
    Kernel,
    Launch,
    Loop,
    Module,
    Param,
    TlCall,
)
from .launches import find_launches, resolve_configs, wrapper_scope
from .source import Source, captures, dotted_name

# Older spellings that other modules import.
_collect_aliases = collect_aliases
_wrapper_scope = wrapper_scope

__all__ = [
    "ATOMICS", "MAX_CONFIGS", "REDUCTIONS", "Aliases", "Assignment", "AutotuneConfig", "Config",
    "JitDefinition", "Kernel", "Launch", "Loop", "Module", "Param", "TlCall", "build_kernels", "build_module",
    "collect_aliases", "find_launches", "is_kernel_definition", "jit_functions", "module_level_statements",
    "Rebinding", "rebindings", "rebound_after", "resolve_configs", "split_arguments", "top_level_definitions", "wrapper_scope",
]

# Module-level compound statements whose blocks still define module-level names: kernels defined
# per Triton version or per platform (`if HAS_TMA: @triton.jit def k…  else: …`) are kernels too.
_BRANCHES = ("if_statement", "try_statement")
_CLAUSES = ("elif_clause", "else_clause", "except_clause", "finally_clause")


def module_level_statements(src: Source):
    """The file's top-level statements, and those inside module-level `if`/`else`/`try` blocks."""

    def statements(block):
        for node in block.named_children:
            if node.type not in _BRANCHES:
                yield node
                continue
            for part in node.named_children:
                if part.type == "block":
                    yield from statements(part)
                elif part.type in _CLAUSES:
                    for inner in part.named_children:
                        if inner.type == "block":
                            yield from statements(inner)

    yield from statements(src.root)


class Rebinding:
    """A module-level `name = wrapper(name)` read as one more decorator of `name`'s def, as Python
    applies it: `k = triton.jit(k)`, `k = triton.heuristics({...})(k)`, `k = tuned()(k)`. Its only
    named child is the wrapper, where a decorator node holds its expression."""

    type = "decorator"

    def __init__(self, statement, wrapper):
        self.named_children = [wrapper]
        self.start_byte, self.end_byte = statement.start_byte, statement.end_byte
        self.start_point, self.end_point = statement.start_point, statement.end_point


def rebindings(src: Source) -> dict[str, list[Rebinding]]:
    """{function name: its module-level rebindings by a wrapper, in file order}; one list per tree,
    so the nodes stay the same objects for every reader."""
    memo = src.memo_for("rebindings")
    found = memo.get(None)
    if found is None:
        found = memo[None] = {}
        for node in module_level_statements(src):
            a = node.named_children[0] if node.type == "expression_statement" and node.named_children else None
            left = a.child_by_field_name("left") if a is not None and a.type == "assignment" else None
            right = a.child_by_field_name("right") if left is not None else None
            if left is None or left.type != "identifier" or right is None or right.type != "call":
                continue
            args = right.child_by_field_name("arguments")
            items = [c for c in args.named_children if c.type != "comment"] if args is not None else []
            fn = right.child_by_field_name("function")
            if len(items) == 1 and items[0].type == "identifier" and fn is not None and \
                    src.text_of(items[0]) == src.text_of(left):
                found.setdefault(src.text_of(left), []).append(Rebinding(node, fn))
    return found


def top_level_definitions(src: Source):
    """Yield (outer_node, function_definition, decorator nodes) for each module-level function; a
    rebinding after the def (`k = triton.jit(k)`) counts as one of its decorators."""
    wrapped = rebindings(src)
    for node in module_level_statements(src):
        if node.type == "decorated_definition":
            fn = node.child_by_field_name("definition")
            if fn is not None and fn.type == "function_definition":
                yield node, fn, [c for c in node.named_children if c.type == "decorator"] + \
                    rebound_after(wrapped, fn, src)
        elif node.type == "function_definition":
            yield node, node, rebound_after(wrapped, node, src)


def rebound_after(wrapped: dict, fn, src: Source) -> list:
    """The rebindings of `fn`'s name (from rebindings()) that come after its def."""
    name = fn.child_by_field_name("name")
    return [r for r in wrapped.get(src.text_of(name), ()) if r.start_byte > fn.end_byte] if name is not None and wrapped else []


def is_kernel_definition(decorators, src: Source, al: Aliases) -> bool:
    """Whether one of the decorators is `triton.jit` under the file's aliases (kernel_discovery
    asks the same of an `ast` tree)."""
    return any(decorator_kind(d, src, al)[0] == "jit" for d in decorators)


@dataclass(frozen=True)
class JitDefinition:
    """A JIT function as the tree-sitter discovery sees it; `kernel_discovery.JitFunction` is
    the same for an ast tree, and both are judged by `kernel_discovery.kind_of`."""

    name: str
    line: int  # 1-based line of the `def`
    kind: KernelKind
    reason: str

    @property
    def launchable(self) -> bool:
        return self.kind is KernelKind.LAUNCHABLE


_NESTED = "[(function_definition) (class_definition) (lambda)] @d"


def jit_functions(src: Source, al: Aliases | None = None) -> list[JitDefinition]:
    """Every module-level JIT function of `src`, in source order, with its kind (launchable
    kernel or device helper) and the reason for it."""
    al = al or collect_aliases(src)
    defs = []
    for _outer, fn, decorators in top_level_definitions(src):
        name_node = fn.child_by_field_name("name")
        if name_node is not None and is_kernel_definition(decorators, src, al):
            defs.append((src.text_of(name_node), fn))
    uses = Uses({}, {}, {})
    for launch in find_launches(src, {name for name, _ in defs}):
        if launch.kernel not in uses.launched or launch.line < uses.launched[launch.kernel]:
            uses.launched[launch.kernel] = launch.line
    returns: list[bool] = []  # per definition: a name may be defined twice
    for name, fn in defs:
        body = fn.child_by_field_name("body")
        if body is None:
            returns.append(False)
            continue
        nested = [(d.start_byte, d.end_byte) for d in captures(body, _NESTED, "d")]

        def own(n, nested=nested) -> bool:
            return not any(a <= n.start_byte < b for a, b in nested)

        returns.append(any(own(r) and any(c.type != "none" for c in r.named_children)
                           for r in captures(body, "(return_statement) @r", "r")))
        for call in captures(body, "(call) @c", "c"):
            f = call.child_by_field_name("function")
            if f is None or not own(call):
                continue
            if f.type == "identifier":
                uses.called_by.setdefault(src.text_of(f), name)
            method = src.text_of(f.child_by_field_name("attribute")) if f.type == "attribute" else None
            if not is_combining_call(dotted_name(f, src), method, al):
                continue
            args = call.child_by_field_name("arguments")
            for a in (args.named_children if args is not None else []):
                value = a.child_by_field_name("value") if a.type == "keyword_argument" else a
                if value is not None and value.type == "identifier":
                    arg, line = src.text_of(value), call.start_point[0] + 1
                    if arg not in uses.combine or line < uses.combine[arg]:
                        uses.combine[arg] = line
    return [JitDefinition(name, fn.start_point[0] + 1, *kind_of(name, r, uses)) for (name, fn), r in zip(defs, returns)]


def build_module(src: Source, only: set[str] | None = None, launch_roots: dict[str, list] | None = None) -> Module:
    """The model of every kernel in `src` (or only those named in `only`).

    `launch_roots` maps a kernel name to the nodes that may hold its launches (found by the
    engine from the text); without it the whole file is searched.
    """
    al = collect_aliases(src)
    functions: dict[str, Any] = {}
    constants: dict[str, list[Any]] = {}
    kernel_defs = []
    for outer, fn, decorators in top_level_definitions(src):
        name_node = fn.child_by_field_name("name")
        if name_node is None:
            continue
        name = src.text_of(name_node)
        if is_kernel_definition(decorators, src, al):
            kernel_defs.append((outer, fn, decorators, name))
        else:
            functions[name] = fn
    for node in src.root.named_children:
        if node.type == "expression_statement" and node.named_children and node.named_children[0].type == "assignment":
            a = node.named_children[0]
            left = a.child_by_field_name("left")
            if left is not None and left.type == "identifier" and a.child_by_field_name("right") is not None:
                constants.setdefault(src.text_of(left), []).append(a.child_by_field_name("right"))
    module = Module(src=src, aliases=al, kernels=[], functions=functions, constants=constants)
    names = {d[3] for d in kernel_defs}
    launches = find_launches(src, names) if launch_roots is None else []
    for outer, fn, decorators, name in kernel_defs:
        if only is not None and name not in only:
            continue
        k = build_kernel(src, al, outer, fn, decorators, name)
        if launch_roots is None:
            k.launches = [l for l in launches if l.kernel == name]
        else:
            k.launches = [l for root in launch_roots.get(name, []) for l in find_launches(src, {name}, root)]
        k.configs = resolve_configs(module, k)
        module.kernels.append(k)
    return module


def build_kernels(module: Module, kernel_defs: list, launch_roots: dict[str, list]) -> list[Kernel]:
    """Models of `kernel_defs` ((outer, fn, decorators, name) as the engine found them), their
    launches searched only under `launch_roots[name]`; `module` gives constants and aliases."""
    out = []
    src, al = module.src, module.aliases
    for outer, fn, decorators, name in kernel_defs:
        k = build_kernel(src, al, outer, fn, decorators, name)
        k.launches = [l for root in launch_roots.get(name, []) for l in find_launches(src, {name}, root)]
        k.configs = resolve_configs(module, k)
        out.append(k)
    return out
