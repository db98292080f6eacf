"""The JIT helpers a kernel calls that load, store or compute with `tl.dot`.

The estimates count the calls in the kernel's own body: a helper's are made with its caller's
blocks, which the helper's own model does not know. A kernel whose loads or dots sit in a helper
would otherwise read as moving nothing and computing nothing; these names let the estimate say
that its figures are unknown instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import Kernel, Module
from ..source import walk
from .figures import MEMORY_OPS


@dataclass
class Uncounted:
    """Helpers (transitively) called by a kernel, by what they do that the estimate cannot count."""

    loads: list[str] = field(default_factory=list)
    stores: list[str] = field(default_factory=list)
    dots: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        out = []
        for what, names in (("tl.dot FLOPs", self.dots), ("loads", self.loads), ("stores", self.stores)):
            if names:
                out.append(f"{what} in the helper{'s' if len(names) > 1 else ''} {', '.join(names)} not counted: "
                           f"unknown")
        return out


def _called_names(kernel: Kernel) -> set[str]:
    src = kernel.src
    names: set[str] = set()
    if src is None:
        return names
    for node in walk(kernel.node):
        if node.type == "call":
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "identifier":
                names.add(src.text_of(fn))
    return names


def uncounted(kernel: Kernel, module: Module) -> Uncounted:
    found = Uncounted()
    seen = {kernel.name}
    todo = [kernel]
    while todo:
        k = todo.pop()
        for name in sorted(_called_names(k) - seen):
            helper = module.kernel(name)
            if helper is None:
                continue
            seen.add(name)
            todo.append(helper)
            kinds = {c.name for c in helper.calls}
            if kinds & {"load", *MEMORY_OPS[2:]}:
                found.loads.append(name)
            if kinds & {"store", *MEMORY_OPS[2:]}:
                found.stores.append(name)
            if "dot" in kinds:
                found.dots.append(name)
    return found
