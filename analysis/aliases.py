"""How a file names Triton: `import triton.language as tl`, `from triton import jit`, …

`Aliases` is filled from the file's import statements, read either from a tree-sitter tree
(`collect_aliases`, the analyzer) or from an `ast` tree (kernel_discovery, the rewriter and the
profiler): both feed the same `add_import` / `add_from_import`, so both agree on what a name means.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the ast readers need no tree-sitter
    from .source import Source


@dataclass
class Aliases:
    triton: set[str] = field(default_factory=lambda: set())
    language: set[str] = field(default_factory=lambda: set())  # prefixes meaning triton.language
    jit: set[str] = field(default_factory=set)  # bare names meaning triton.jit
    autotune: set[str] = field(default_factory=set)
    heuristics: set[str] = field(default_factory=set)
    config: set[str] = field(default_factory=set)  # bare names meaning triton.Config
    tl_names: dict[str, str] = field(default_factory=dict)  # `from triton.language import load` → {"load": "load"}

    # -- filling --------------------------------------------------------------------------------

    def add_import(self, name: str, alias: str | None = None) -> None:
        """`import NAME` or `import NAME as ALIAS`."""
        if alias is None:
            if name == "triton" or name.startswith("triton."):
                self.triton.add("triton")
                if name == "triton.language":
                    self.language.add("triton.language")
        elif name == "triton":
            self.triton.add(alias)
        elif name == "triton.language":
            self.language.add(alias)

    def add_from_import(self, module: str, name: str, alias: str) -> None:
        """`from MODULE import NAME as ALIAS` (ALIAS is NAME when there is no `as`)."""
        if module == "triton":
            if name == "language":
                self.language.add(alias)
            elif name == "jit":
                self.jit.add(alias)
            elif name == "autotune":
                self.autotune.add(alias)
            elif name == "heuristics":
                self.heuristics.add(alias)
            elif name == "Config":
                self.config.add(alias)
        elif module == "triton.language":
            self.tl_names[alias] = name

    def finish(self) -> "Aliases":
        """The defaults every file gets once its imports are read."""
        self.language.add("triton.language")
        if not self.triton:
            self.triton.add("triton")
        if not self.language - {"triton.language"}:
            self.language.add("tl")  # the universal convention, even before the import is typed
        return self

    # -- reading --------------------------------------------------------------------------------

    def tl_function(self, dotted: str | None) -> str | None:
        """"tl.math.exp" → "math.exp", "tl.load" → "load"; None if not a triton.language name."""
        if not dotted:
            return None
        for prefix in sorted(self.language, key=len, reverse=True):
            if dotted.startswith(prefix + "."):
                return dotted[len(prefix) + 1:]
        head, _, rest = dotted.partition(".")
        if not rest and head in self.tl_names:
            return self.tl_names[head]
        return None

    def triton_attr(self, dotted: str | None) -> str | None:
        """"triton.jit" → "jit", "triton.Config" → "Config"."""
        if not dotted:
            return None
        head, _, rest = dotted.partition(".")
        if head in self.triton and rest:
            return rest
        if not rest:
            if head in self.jit:
                return "jit"
            if head in self.autotune:
                return "autotune"
            if head in self.heuristics:
                return "heuristics"
            if head in self.config:
                return "Config"
        return None


def collect_aliases(src: Source) -> Aliases:
    """The aliases of the imports at the top level of a tree-sitter tree."""
    al = Aliases()
    for node in src.root.named_children:
        if node.type == "import_statement":
            for item in node.named_children:
                if item.type == "dotted_name":
                    al.add_import(src.text_of(item))
                elif item.type == "aliased_import":
                    al.add_import(src.text_of(item.child_by_field_name("name")), src.text_of(item.child_by_field_name("alias")))
        elif node.type == "import_from_statement":
            module = src.text_of(node.child_by_field_name("module_name"))
            for item in node.named_children[1:]:
                if item.type == "dotted_name":
                    name = alias = src.text_of(item)
                elif item.type == "aliased_import":
                    name = src.text_of(item.child_by_field_name("name"))
                    alias = src.text_of(item.child_by_field_name("alias"))
                else:
                    continue
                al.add_from_import(module, name, alias)
    return al.finish()
