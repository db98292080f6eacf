"""How each test file reaches a kernel file, and by which route, read statically over the project's
imports (profiling/project_tests.ImportGraph) and code (profiling/code_facts).

Nodes are (file, name): a top-level name of a project file, or (file, None), the module as a whole
(some name of it reaches the kernel, or its module-level code does). From the kernel's own names, a
name reaches the kernel when it is a re-export of a reaching name (ROUTE_REEXPORT), when its code
reads one (a wrapper: a class whose forward calls the kernel's function, a dict of ops holding it,
a lazy import in a function; ROUTE_WRAPPER), or when it names, by string, a module that reaches the
kernel for a dispatcher to import (ROUTE_DISPATCH). A route is as indirect as its most indirect step;
among routes of one kind the one with fewer steps wins.

A test reaches the kernel by what it imports and reads: the kernel file itself (ROUTE_DIRECT), a
reaching name (that name's route), an op name it writes as a string (`dispatch("rms_norm", x)`)
while a dispatch table of the modules it loads maps that name to a reaching module
(ROUTE_DISPATCH), or only by loading modules whose import loads the kernel (ROUTE_UMBRELLA).
"""

from __future__ import annotations

import heapq
import os
import re
from dataclasses import dataclass
from functools import lru_cache

from tritonlens.profiling.code_facts import DispatchSite, FileFacts, file_facts

ROUTE_SELF, ROUTE_DIRECT, ROUTE_REEXPORT, ROUTE_WRAPPER, ROUTE_DISPATCH, ROUTE_UMBRELLA = range(6)
ROUTE_WORDS = {ROUTE_SELF: "is the kernel file", ROUTE_DIRECT: "imports the kernel file",
               ROUTE_REEXPORT: "imports a re-export of its names", ROUTE_WRAPPER: "calls code that calls it",
               ROUTE_DISPATCH: "reaches it through a dispatch table",
               ROUTE_UMBRELLA: "only loads it through an umbrella import"}

Node = tuple[str, str | None]


@dataclass(frozen=True)
class TestRoute:
    """How one test file reaches the kernel: its route kind, the number of steps, and the chain of
    project names it goes through, test side first (`pkg/functional.py:rms_norm`)."""

    test: str
    route: int
    steps: int
    via: tuple[str, ...]


@lru_cache(maxsize=8192)
def _facts(path: str, mtime: float, module: str, package: str) -> FileFacts:
    from tritonlens.profiling.project_tests import parsed_tree

    tree = parsed_tree(path)
    return file_facts(tree, module, package) if tree is not None else FileFacts({}, {}, frozenset(), ())


class ReachGraph:
    """The name graph of a project, built once from an ImportGraph; `routes(kernel)` for each file."""

    def __init__(self, graph):
        self.g = graph
        self.root = os.path.realpath(graph.lay.root)
        self.modules = self._module_names()
        self.facts: dict[str, FileFacts] = {}
        self.bindings: dict[str, dict[str, list]] = {}
        self.names: dict[str, frozenset[str]] = {}
        for f in graph.files:
            mod = self.modules.get(f, "")
            package = mod if f.endswith("__init__.py") else mod.rpartition(".")[0]
            self.facts[f] = _facts(f, graph.mtime(f), mod, package)
            binds: dict[str, list] = {}
            for e in graph.edges.get(f, ()):
                binds.setdefault(e.bound, []).append(e)
            self.bindings[f] = binds
            self.names[f] = graph.defined_names(f) | {e.bound for e in graph.edges.get(f, ()) if e.name != "*"}
        self.dependents: dict[Node, list[tuple[Node, int, str]]] = {}
        self._closure: dict[str, frozenset[str]] = {}
        self.keyed: dict[str, tuple[tuple[str, str], ...]] = {}  # file -> (op name, module) of its dispatch tables
        self.test_cache: dict = {}
        for f in graph.sources:
            self._link(f)

    # -- building ------------------------------------------------------------------------------------------------
    def _module_names(self) -> dict[str, str]:
        """Each file's dotted module name under the first import path that holds it."""
        out: dict[str, str] = {}
        dirs = [os.path.realpath(d) for d in self.g.lay.path_dirs()]
        for f in self.g.files:
            for d in dirs:
                if f.startswith(d + os.sep):
                    rel = os.path.relpath(f, d)[:-3].replace(os.sep, ".")
                    out[f] = rel[: -len(".__init__")] if rel.endswith(".__init__") else rel
                    break
        return out

    def _add(self, source: Node, target: Node, kind: int, note: str = "") -> None:
        self.dependents.setdefault(source, []).append((target, kind, note))

    def _link(self, f: str) -> None:
        from tritonlens.profiling.kernel_reach_links import link_file
        link_file(self, f)

    # -- reading a dotted name --------------------------------------------------------------------------------
    def submodule(self, module_file: str, name: str) -> str | None:
        if not module_file.endswith("__init__.py") or name == "*":
            return None
        return self.g.module_file(os.path.dirname(module_file), name)

    def token(self, f: str, dotted: str) -> Node | None:
        """The project name a dotted read in file `f` stands for, or None when it is not the project's."""
        parts = dotted.split(".")
        head = parts[0]
        if head in self.bindings[f]:
            for e in self.bindings[f][head]:
                if e.name is None:  # `import a.b.c` binds `a`; `import a.b.c as x` binds x = a.b.c
                    top = e.module.split(".")[0]
                    start = self.g.resolve(f, e.module if e.bound != top else top, 0)
                    rest = parts[1:]
                elif e.submodule is not None:
                    start, rest = e.submodule, parts[1:]
                elif e.target is not None and e.name != "*":
                    return e.target, e.name
                else:
                    continue
                if start is None:
                    continue
                while rest:
                    sub = self.submodule(start, rest[0])
                    if sub is None:
                        return start, (None if rest[0] == "*" else rest[0])
                    start, rest = sub, rest[1:]
                return start, None
            return None
        if head in self.names.get(f, ()):
            return f, head
        return None

    def site_targets(self, f: str, site: DispatchSite) -> list[tuple[str, str | None]]:
        """(file, key) for each project module a dispatch site can name."""
        if site.package_relative:
            level = len(site.pattern) - len(site.pattern.lstrip("\\."))  # escaped dots: two characters each
            found = self.g.resolve(f, re.sub(r"^(\\\.)+", "", site.pattern).replace("\\", ""), level // 2)
            return [(found, site.key)] if found else []
        if not site.hole:
            found = self.g.resolve(f, site.pattern.replace("\\", ""), 0)
            return [(found, site.key)] if found else []
        rx = re.compile(site.pattern + r"\Z")
        out = []
        for file, mod in self.modules.items():
            m = rx.match(mod)
            if m:
                out.append((file, m.group(1) if m.groups() else site.key))
        return out

    # -- what a test loads ------------------------------------------------------------------------------------
    def loaded(self, f: str) -> frozenset[str]:
        """The project files that importing `f` and running its code loads: its imports (any depth),
        then theirs at module level, and the packages above each."""
        if f in self._closure:
            return self._closure[f]
        seen: set[str] = set()
        todo = [t for e in self.g.edges.get(f, ()) for t in (e.target, e.submodule) if t]
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            todo += [t for e in self.g.top_edges(m) for t in (e.target, e.submodule) if t]
            parent = os.path.dirname(m if not m.endswith("__init__.py") else os.path.dirname(m))
            init = os.path.join(parent, "__init__.py")
            if parent.startswith(self.root) and init in self.facts:
                todo.append(init)
        self._closure[f] = frozenset(seen)
        return self._closure[f]

    # -- per kernel ---------------------------------------------------------------------------------------------
    def reach(self, kernel: str) -> dict[Node, tuple[int, int, Node | None, str]]:
        """Every node that reaches `kernel`: (route, steps, the node it reaches through, a note)."""
        best: dict[Node, tuple[int, int, Node | None, str]] = {}
        heap: list[tuple[int, int, Node]] = []
        for n in (*sorted(self.names.get(kernel, ())), None):
            best[(kernel, n)] = (ROUTE_DIRECT, 0, None, "")
            heapq.heappush(heap, (ROUTE_DIRECT, 0, (kernel, n or "")))
        while heap:
            route, steps, (f, n) = heapq.heappop(heap)
            node = (f, n or None)
            if best[node][:2] != (route, steps):
                continue
            for target, kind, note in self.dependents.get(node, ()):
                cost = (max(route, kind), steps + (kind != 0))
                if target not in best or cost < best[target][:2]:
                    best[target] = (*cost, node, note)
                    heapq.heappush(heap, (*cost, (target[0], target[1] or "")))
        return best

    def rel(self, f: str) -> str:
        return os.path.relpath(f, self.root).replace(os.sep, "/")

    def chain(self, best, node: Node) -> tuple[str, ...]:
        out = []
        while node is not None:
            f, n = node
            after = best[node][2]
            if n is None and after is not None and after[0] == f:  # the module, then its name: say the name
                node = after
                continue
            out.append(self.rel(f) + (f":{n}" if n else ""))
            note = best[node][3]
            if note:
                out.append(note)
            node = best[node][2]
        return tuple(out)
