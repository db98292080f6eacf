"""Element sizes of the values a kernel moves: what the caller says per pointer, what the shape
engine knows of the value's dtype, what the code says (`.to(tl.float16)`, a tl.zeros dtype), else
an assumption that the estimate lists in its notes."""

from __future__ import annotations

from ..model import Kernel, Module
from ..shapes import RunResult, element_bytes
from ..source import dotted_name
from .figures import DEFAULT_ELEM_BYTES
from .pointers import base_pointer, call_at, reaching, unwrap

_HALF = ("float16", "bfloat16")


def tl_dtype(node, kernel: Kernel, module: Module | None) -> str | None:
    """"float16" for `tl.float16` (any alias of triton.language), None otherwise."""
    if node is None:
        return None
    name = dotted_name(node, kernel.src)
    if name is None:
        return None
    if module is not None and getattr(module, "aliases", None) is not None:
        return module.aliases.tl_function(name)
    head, _, rest = name.partition(".")
    return rest if head in ("tl", "triton.language") or name.startswith("triton.language.") else None


def dtype_node(call):
    """The dtype argument of `x.to(dtype)`, `tl.zeros(shape, dtype)`, `tl.full(shape, value, dtype)`."""
    if call.name == ".to":
        return call.arg(0, "dtype")
    return call.kwargs.get("dtype") or (call.args[-1] if len(call.args) >= 2 else None)


class ElementSizes:
    """Element sizes for one kernel: `given` maps pointer parameters to sizes (the profiler knows
    the dtypes); `half_hint` is the first half-precision type the code names, with its line."""

    def __init__(self, kernel: Kernel, module: Module | None, given: dict | None = None):
        self.kernel, self.module = kernel, module
        self.given = dict(given or {})
        self.half_hint: tuple[str, int] | None = None
        for c in kernel.calls:
            if c.name in (".to", "zeros", "full"):
                dt = tl_dtype(dtype_node(c), kernel, module)
                if dt in _HALF:
                    self.half_hint = (dt, c.range.start.line + 1)
                    break

    def default(self) -> tuple[int, str]:
        if self.half_hint is not None:
            dt, line = self.half_hint
            return 2, f"assumed 2-byte elements for pointers of unknown dtype (the kernel uses tl.{dt} at line {line})"
        return DEFAULT_ELEM_BYTES, "assumed 4-byte (fp32) elements for pointers of unknown dtype"

    def of_value(self, node, run: RunResult | None = None, depth: int = 0) -> int | None:
        """Element size of a value when it is known: the engine's dtype of it in `run`, else what
        the code it comes from says (a conversion, a tl.zeros dtype, a load of a given pointer)."""
        node = unwrap(node)
        if node is None or depth > 8:
            return None
        if run is not None and depth == 0:
            a = run.at(node)
            size = element_bytes(a.dtype) if a is not None and a.kind == "tensor" else None
            if size is not None:
                return size
        if node.type == "identifier":
            a = reaching(self.kernel, self.kernel.src.text_of(node), node.start_byte)
            return self.of_value(a.value, None, depth + 1) if a is not None and a.value is not None else None
        if node.type == "call":
            c = call_at(self.kernel, node)
            if c is None:
                return None
            if c.name in (".to", "zeros", "full"):
                return element_bytes(tl_dtype(dtype_node(c), self.kernel, self.module))
            if c.name == "load":
                base = base_pointer(self.kernel, c.arg(0, "pointer"))
                return self.given.get(base) if base else None
        return None

    def of_load(self, node, run: RunResult | None = None, depth: int = 0) -> int | None:
        """Element size of the data a `tl.load` brings in for the value `node` (through
        conversions: `tl.load(p).to(tl.bfloat16)` gives the load's size): what a pipelined copy
        stages in shared memory. None when the value is not a load or the load's type is unknown."""
        node = unwrap(node)
        if node is None or depth > 8:
            return None
        if node.type == "identifier":
            a = reaching(self.kernel, self.kernel.src.text_of(node), node.start_byte)
            return self.of_load(a.value, run, depth + 1) if a is not None and a.value is not None else None
        if node.type != "call":
            return None
        c = call_at(self.kernel, node)
        if c is None:
            return None
        if c.name == ".to":
            obj = node.child_by_field_name("function")
            obj = obj.child_by_field_name("object") if obj is not None and obj.type == "attribute" else None
            return self.of_load(obj, run, depth + 1)
        if c.name != "load":
            return None
        a = run.at(node) if run is not None else None
        size = element_bytes(a.dtype) if a is not None and a.kind == "tensor" else None
        if size is not None:
            return size
        base = base_pointer(self.kernel, c.arg(0, "pointer"))
        return self.given.get(base) if base else None
