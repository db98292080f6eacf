"""Static estimates of what a kernel moves and computes, per program and per launch.

For each `tl.load` / `tl.store` / atomic: elements = product of the tile dimensions of its pointer
(shapes inferred from `tl.arange`, `[:, None]` broadcasts, `tl.zeros`/`tl.full` shapes), times the
element size, times the trip counts of the enclosing loops. `tl.dot` counts 2·M·N·K FLOPs per call.
A pipelined `tl.dot` (inside a loop) keeps `num_stages` copies of its operand tiles in shared
memory. Programs per launch come from the launch's grid when it can be evaluated.

Masks are ignored (a tail program is counted full) and caches are not modelled: each access moves
its bytes from DRAM. Every assumption made is listed in `Estimate.notes`.

Pure: no torch, no triton. Used by the hover card, TL009/TL013/TL015 and the profiler.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass, field
from typing import Any

from . import gpus
from .findings import Range
from .model import Config, Kernel, Launch, Module, TlCall, _wrapper_scope
from .source import dotted_name, walk
from .values import UNKNOWN, Scope, Value, cdiv, evaluate

DEFAULT_ELEM_BYTES = 4

DTYPE_BYTES = {
    "float16": 2, "bfloat16": 2, "fp16": 2, "bf16": 2, "half": 2, "int16": 2, "uint16": 2,
    "float32": 4, "fp32": 4, "tf32": 4, "int32": 4, "uint32": 4, "float": 4,
    "float64": 8, "fp64": 8, "int64": 8, "uint64": 8, "double": 8,
    "int8": 1, "uint8": 1, "int1": 1, "float8e4nv": 1, "float8e5": 1, "float8e4b15": 1,
    "float8_e4m3fn": 1, "float8_e5m2": 1, "fp8e4nv": 1, "fp8e5": 1,
}

MEMORY_OPS = ("load", "store") + ("atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
                                  "atomic_xor", "atomic_xchg", "atomic_cas")


@dataclass
class Access:
    """What one `tl.load` / `tl.store` / atomic / `tl.dot` does per program in one configuration."""

    kind: str  # "load", "store", "atomic_add", …, "dot"
    range: Range
    line: int  # 1-based
    base: str | None  # the pointer parameter it reads or writes (None for dot)
    shape: tuple | None  # tile shape, ints; None when unknown
    elements: int | None  # per call
    elem_bytes: int | None
    trips: int | None  # product of enclosing loop trip counts (1 outside loops); None if unknown
    bytes: int | None  # per program, trips included when known (per iteration otherwise)
    flops: int | None = None  # for dot: 2·M·N·K per program (trips included when known)
    per_iteration: bool = False  # some enclosing loop's trip count is unknown
    note: str = ""


@dataclass
class Estimate:
    config: str  # the configuration's label
    bytes_loaded: int | None  # per program; None if some load could not be sized
    bytes_stored: int | None
    flops: int  # tl.dot FLOPs per program
    shared_bytes: int | None  # pipelined tl.dot operand buffers; 0 without tl.dot
    programs: int | None  # grid size when resolvable
    per_launch_bytes: int | None
    per_launch_flops: int | None
    intensity: float | None  # FLOP per byte moved (loaded + stored)
    bound_hint: str | None  # "memory" / "compute" against the target's ridge point, None if unknown
    notes: list[str] = field(default_factory=list)
    per_iteration: bool = False  # figures are per iteration of a loop whose trip count is unknown
    accesses: list[Access] = field(default_factory=list)
    largest_tile: int | None = None  # elements of the largest tile (TL009)
    num_warps: int | None = None
    num_stages: int | None = None
    gpu: str = gpus.DEFAULT_GPU
    ridge: float = 0.0

    @property
    def bytes_total(self) -> int | None:
        if self.bytes_loaded is None or self.bytes_stored is None:
            return None
        return self.bytes_loaded + self.bytes_stored

    def access_at(self, line: int, column: int) -> Access | None:
        """The access whose call covers a 0-based position (for hovers on tl.load/store/dot)."""
        best = None
        for a in self.accesses:
            r = a.range
            inside = (r.start.line, r.start.column) <= (line, column) <= (r.end.line, r.end.column)
            if inside and (best is None or (r.start.line, r.start.column) >= (best.range.start.line, best.range.start.column)):
                best = a  # the innermost call wins
        return best


# ---------------------------------------------------------------------------------------------
# shapes: computed once per kernel, with dimensions as expressions evaluated per configuration


class _Dim:
    """One tile dimension: `end - start` of an arange, or an expression from a shape tuple."""

    __slots__ = ("end", "node", "start")

    def __init__(self, start=None, end=None, node=None):
        self.start, self.end, self.node = start, end, node

    def key(self):
        return (self.start.start_byte if self.start is not None else -1,
                self.end.start_byte if self.end is not None else -1,
                self.node.start_byte if self.node is not None else -1)


_SCALAR_BUILTINS = {"min", "max", "abs", "int", "float", "bool"}

ONE = 1  # a broadcast dimension (`x[:, None]`)


def _unwrap(node):
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


class KernelShapes:
    """Symbolic tile shapes of a kernel's expressions (reaching definitions, broadcasting)."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.src = kernel.src
        self.al = None
        self._memo: dict[tuple, Any] = {}
        self._active: set = set()
        self._calls = {(c.node.start_byte, c.node.end_byte): c for c in kernel.calls}
        self.params = {p.name for p in kernel.params}
        self.tiles: dict = {}  # configuration key → Tile (largest_tile)

    def call_of(self, node) -> TlCall | None:
        return self._calls.get((node.start_byte, node.end_byte))

    def reaching(self, name: str, at: int):
        """The assignment of `name` that reaches byte `at`: the last one before it (loops' back
        edges ignored: Triton requires loop-carried values to keep their shape)."""
        best = None
        for a in self.kernel.assignments.get(name, []):
            n = a.node
            if n is None:
                continue
            inside = n.start_byte <= at < n.end_byte
            if a.value is None and n.type == "for_statement":
                if inside:
                    return a
                continue
            if inside or n.start_byte >= at or a.augmented:
                continue
            if best is None or n.start_byte > best.node.start_byte:
                best = a
        return best

    def shape(self, node) -> tuple | None:
        """Tuple of `_Dim`/ONE (rank = len), () for scalars, None when unknown."""
        node = _unwrap(node)
        if node is None:
            return None
        key = (node.start_byte, node.end_byte, node.type)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            return None
        self._active.add(key)
        try:
            out = self._shape(node)
        except RecursionError:
            out = None
        finally:
            self._active.discard(key)
        self._memo[key] = out
        return out

    def _shape(self, node):
        t = node.type
        if t in ("integer", "float", "true", "false", "none", "string"):
            return ()
        if t == "identifier":
            name = self.src.text_of(node)
            a = self.reaching(name, node.start_byte)
            if a is None:
                return () if name in self.params or name not in self.kernel.assignments else None
            if a.value is None:
                return () if a.node.type == "for_statement" else None
            return self.shape(a.value)
        if t == "attribute":
            return ()  # x.dtype, tl.float32, …
        if t in ("binary_operator", "boolean_operator", "comparison_operator"):
            kids = [c for c in node.named_children]
            return _broadcast(*(self.shape(k) for k in kids))
        if t in ("unary_operator", "not_operator"):
            kids = node.named_children
            return self.shape(kids[-1]) if kids else None
        if t == "conditional_expression":
            kids = node.named_children
            return _broadcast(self.shape(kids[0]), self.shape(kids[2])) if len(kids) == 3 else None
        if t == "subscript":
            return self._subscript(node)
        if t == "call":
            return self._call(node)
        return None

    def _subscript(self, node):
        value = node.child_by_field_name("value")
        base = self.shape(value)
        if base is None:
            return None
        idx = [c for c in node.named_children if c != value and c.type != "comment"]
        if len(idx) == 1 and idx[0].type == "tuple":
            idx = idx[0].named_children
        out, i = [], 0
        for ix in idx:
            if ix.type == "none" or (ix.type == "identifier" and self.src.text_of(ix) == "None"):
                out.append(ONE)
            elif ix.type == "slice":
                if i >= len(base):
                    return None
                out.append(base[i])
                i += 1
            elif ix.type == "ellipsis":
                rest = len(base) - i - sum(1 for x in idx if x.type == "slice" and x != ix)
                out.extend(base[i:i + max(rest, 0)])
                i += max(rest, 0)
            else:
                return None  # integer indexing of a tile: rare, not modelled
        out.extend(base[i:])
        return tuple(out)

    def _call(self, node):
        c = self.call_of(node)
        if c is None:
            # Python builtins on constexprs and scalars (`min(num_pid_m - first_pid_m, GROUP_SIZE_M)`)
            fn = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if fn is not None and fn.type == "identifier" and self.src.text_of(fn) in _SCALAR_BUILTINS and args is not None:
                return _broadcast(*(self.shape(a) for a in args.named_children if a.type != "comment"))
            return None
        name = c.name
        if name == "arange":
            start, end = c.arg(0, "start"), c.arg(1, "end")
            if end is None:
                return None
            return (_Dim(start=start, end=end),)
        if name in ("zeros", "full", "empty"):
            return self._shape_arg(c.arg(0, "shape"))
        if name in ("reshape", "broadcast_to", "view"):
            arg = c.arg(1, "shape")
            if arg is None:
                return None
            if len(c.args) > 2:  # tl.reshape(x, A, B)
                return tuple(_Dim(node=a) for a in c.args[1:])
            return self._shape_arg(arg)
        if name in (".reshape", ".broadcast_to", ".view"):
            if len(c.args) > 1:
                return tuple(_Dim(node=a) for a in c.args)
            return self._shape_arg(c.arg(0, "shape"))
        if name in ("load",):
            return self.shape(c.arg(0, "pointer"))
        if name in ("dot",):
            a, b = self.shape(c.arg(0, "input")), self.shape(c.arg(1, "other"))
            if a is None or b is None or len(a) < 2 or len(b) < 2:
                return None
            return tuple(a[:-1]) + (b[-1],)
        if name in ("sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce", ".sum", ".max", ".min"):
            src_node = _method_object(c) if name.startswith(".") else c.arg(0, "input")
            base = self.shape(src_node)
            axis_node = c.kwargs.get("axis")
            if axis_node is None and not name.startswith(".") and len(c.args) > 1:
                axis_node = c.args[1]
            if axis_node is None and name.startswith(".") and c.args:
                axis_node = c.args[0]
            if base is None:
                return None
            if axis_node is None or axis_node.type == "none":
                return ()
            ax = evaluate(axis_node, self.src, Scope(lambda n: None))
            if len(ax) != 1 or not isinstance(ax[0], int) or not -len(base) <= ax[0] < len(base):
                return None
            keep = c.kwargs.get("keep_dims")
            if keep is not None and self.src.text_of(keep) == "True":
                return tuple(ONE if i == ax[0] % len(base) else d for i, d in enumerate(base))
            return tuple(d for i, d in enumerate(base) if i != ax[0] % len(base))
        if name in ("trans", ".trans", "permute", ".permute"):
            base = self.shape(_method_object(c) if name.startswith(".") else c.arg(0, "input"))
            if base is None:
                return None
            if name.endswith("trans") and len(base) == 2:
                return (base[1], base[0])
            return base if len(base) < 2 else None
        if name == ".to":
            return self.shape(_method_object(c))
        if name in ("program_id", "num_programs", "cdiv", "atomic_add", "atomic_max", "atomic_min",
                    "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas"):
            return () if name in ("program_id", "num_programs", "cdiv") else self.shape(c.arg(0, "pointer"))
        if name in ("where",):
            return _broadcast(*(self.shape(a) for a in c.args[:3]))
        if name in ("cumsum", "cumprod", "associative_scan", "multiple_of", "max_contiguous", "max_constancy"):
            return self.shape(c.args[0]) if c.args else None
        if name.startswith(".") or name in ("store", "static_print", "device_print", "static_assert", "debug_barrier"):
            return None
        # element-wise math (tl.exp, tl.maximum, tl.math.*, tl.sqrt, tl.abs, tl.fma, …)
        if c.args:
            return _broadcast(*(self.shape(a) for a in c.args))
        return None

    def _shape_arg(self, node):
        node = _unwrap(node)
        if node is None:
            return None
        if node.type in ("list", "tuple"):
            return tuple(_Dim(node=e) for e in node.named_children if e.type != "comment")
        return (_Dim(node=node),) if node.type in ("identifier", "integer", "binary_operator") else None


def _method_object(c: TlCall):
    fn = c.node.child_by_field_name("function")
    return fn.child_by_field_name("object") if fn is not None else None


def _broadcast(*shapes):
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dim = ONE
        for s in shapes:
            j = i - (rank - len(s))
            if j < 0:
                continue
            d = s[j]
            if d is not ONE and dim is ONE:
                dim = d
        out.append(dim)
    return tuple(out)


def shapes_of(kernel: Kernel) -> KernelShapes:
    """The kernel's shape table, built once and kept on the kernel (models are cached per kernel)."""
    cached = kernel.__dict__.get("_tritonlens_shapes")
    if cached is None:
        cached = KernelShapes(kernel)
        kernel.__dict__["_tritonlens_shapes"] = cached
    return cached


# ---------------------------------------------------------------------------------------------
# per configuration


class _Eval:
    """Evaluates kernel expressions in one configuration (the same scope rules use)."""

    def __init__(self, kernel: Kernel, module: Module | None, config: Config | None):
        from .findings import Severity
        from .rules.base import (  # late: rules import this module
            KernelContext,
            RuleInfo,
        )

        mod = module if module is not None else types.SimpleNamespace(constants={}, src=kernel.src)
        self.ctx = KernelContext(mod, kernel, RuleInfo("TL000", "estimate", Severity.INFO, "estimate"))
        self.config = config
        self.scope = self.ctx.scope(config)
        self.src = kernel.src
        self._ints: dict = {}  # node → int_of: tile dimensions repeat across calls and rules

    def int_of(self, node) -> int | None:
        if node is None:
            return None
        ints = self._ints
        if node in ints:
            return ints[node]
        vals = evaluate(node, self.src, self.scope)
        out = vals[0] if len(vals) == 1 and isinstance(vals[0], int) and not isinstance(vals[0], bool) else None
        ints[node] = out
        return out

    def dim(self, d) -> int | None:
        if d is ONE:
            return 1
        if d.node is not None:
            return self.int_of(d.node)
        end = self.int_of(d.end)
        start = 0 if d.start is None else self.int_of(d.start)
        if end is None or start is None:
            return None
        return end - start

    def shape(self, sym) -> tuple | None:
        if sym is None:
            return None
        out = tuple(self.dim(d) for d in sym)
        return None if any(x is None or x < 0 for x in out) else out


def _eval_for(kernel: Kernel, module: Module | None, config: Config | None) -> _Eval:
    """One evaluator per kernel, module and configuration, shared by the estimates and the rules
    (TL009, TL013, TL015 ask for the same dimensions in the same configuration)."""
    held = kernel.__dict__.get("_tl_evals")
    if held is None or held[0] is not module:
        # Only the latest module's: a cached kernel outlives many analyses and must not keep
        # every earlier module (and its tree) alive.
        held = kernel.__dict__["_tl_evals"] = (module, {})
    evals = held[1]
    hit = evals.get(id(config))
    if hit is not None and hit[0] is config:
        return hit[1]
    ev = _Eval(kernel, module, config)
    evals[id(config)] = (config, ev)
    return ev


def dim_value(kernel: Kernel, module: Module | None, config: Config | None, dim) -> int | None:
    return _eval_for(kernel, module, config).dim(dim)


def tile_shape(kernel: Kernel, module: Module | None, config: Config | None, node) -> tuple | None:
    """The concrete tile shape of expression `node` in `config` (None if unknown)."""
    return _eval_for(kernel, module, config).shape(shapes_of(kernel).shape(node))


@dataclass
class Tile:
    elements: int  # of the largest tile seen
    call: TlCall  # the call that makes it (arange, zeros/full, load/store, dot)
    complete: bool  # every tile of the kernel was sized (else `elements` is a lower bound)
    from_dot: bool  # the largest tile is a tl.dot result (an accumulator)


def largest_tile(kernel: Kernel, module: Module | None, config: Config | None) -> Tile | None:
    """The kernel's largest tile in `config`: what its num_warps × 32 threads share."""
    shapes = shapes_of(kernel)
    key = _config_key(config)
    if key in shapes.tiles:
        return shapes.tiles[key]
    shapes.tiles[key] = best = _largest_tile(kernel, module, config, shapes)
    return best


def _config_key(config: Config | None):
    """Configurations that differ only in where they come from share their tiles."""
    if config is None:
        return None
    return (tuple(sorted((n, repr(v.value)) for n, v in config.values.items())),
            tuple(sorted((n, repr(v.value)) for n, v in config.scalars.items())))


def _largest_tile(kernel, module, config, shapes) -> Tile | None:
    ev = _eval_for(kernel, module, config)
    best: Tile | None = None
    complete = True
    for c in kernel.calls:
        if c.name in ("arange", "zeros", "full"):
            shp = ev.shape(shapes.shape(c.node))
        elif c.name in MEMORY_OPS:
            shp = ev.shape(shapes.shape(c.arg(0, "pointer")))
        elif c.name == "dot":
            shp = ev.shape(shapes.shape(c.node))
        else:
            continue
        if shp is None:
            complete = False
            continue
        n = math.prod(shp) if shp else 1
        if best is None or n > best.elements:
            best = Tile(n, c, True, c.name == "dot")
    if best is not None:
        best.complete = complete
    return best


def _dtype_bytes(text: str | None) -> int | None:
    if not text:
        return None
    return DTYPE_BYTES.get(text.strip().strip("'\"").rsplit(".", 1)[-1])


def _tl_dtype(node, kernel: Kernel, module: Module | None) -> str | None:
    """"float16" for `tl.float16` (any alias of triton.language), None otherwise."""
    if node is None:
        return None
    name = dotted_name(node, kernel.src)
    if name is None:
        return None
    if module is not None and getattr(module, "aliases", None) is not None:
        fn = module.aliases.tl_function(name)
        if fn is not None:
            return fn
        return None
    head, _, rest = name.partition(".")
    return rest if head in ("tl", "triton.language") or name.startswith("triton.language.") else None


class _Dtypes:
    """Element sizes: what the caller says per pointer, what the code says, else an assumption."""

    def __init__(self, kernel: Kernel, module: Module | None, elem_bytes: dict | None, shapes: KernelShapes):
        self.kernel, self.module, self.shapes = kernel, module, shapes
        self.given = dict(elem_bytes or {})
        self.half_hint: tuple[str, int] | None = None
        for c in kernel.calls:
            dt = None
            if c.name == ".to":
                dt = _tl_dtype(c.arg(0, "dtype"), kernel, module)
            elif c.name in ("zeros", "full"):
                dt = _tl_dtype(c.kwargs.get("dtype") or (c.args[-1] if len(c.args) >= 2 else None), kernel, module)
            if dt in ("float16", "bfloat16"):
                self.half_hint = (dt, c.range.start.line + 1)
                break

    def default(self) -> tuple[int, str]:
        if self.half_hint is not None:
            dt, line = self.half_hint
            return 2, f"assumed 2-byte elements for pointers of unknown dtype (the kernel uses tl.{dt} at line {line})"
        return DEFAULT_ELEM_BYTES, "assumed 4-byte (fp32) elements for pointers of unknown dtype"

    def of_value(self, node, depth=0) -> int | None:
        """Element size a stored value has when the code says so (`.to(tl.float16)`, tl.zeros dtype)."""
        node = _unwrap(node)
        if node is None or depth > 8:
            return None
        if node.type == "identifier":
            a = self.shapes.reaching(self.kernel.src.text_of(node), node.start_byte)
            return self.of_value(a.value, depth + 1) if a is not None and a.value is not None else None
        if node.type == "call":
            c = self.shapes.call_of(node)
            if c is None:
                return None
            if c.name == ".to":
                return _dtype_bytes(_tl_dtype(c.arg(0, "dtype"), self.kernel, self.module))
            if c.name in ("zeros", "full"):
                return _dtype_bytes(_tl_dtype(c.kwargs.get("dtype") or (c.args[-1] if len(c.args) >= 2 else None),
                                              self.kernel, self.module))
            if c.name == "load":
                base = base_pointer(self.kernel, self.shapes, c.arg(0, "pointer"))
                return self.given.get(base) if base else None
        return None


def base_pointer(kernel: Kernel, shapes: KernelShapes, node, depth: int = 0) -> str | None:
    """The pointer parameter an address expression is based on (`x_ptr + offs` → "x_ptr")."""
    node = _unwrap(node)
    if node is None or depth > 16:
        return None
    t = node.type
    if t == "identifier":
        name = kernel.src.text_of(node)
        a = shapes.reaching(name, node.start_byte)
        if a is None:
            return name if name in shapes.params else None
        if a.value is None:
            return None
        return base_pointer(kernel, shapes, a.value, depth + 1)
    if t == "binary_operator":
        op = kernel.src.text_of(node.child_by_field_name("operator"))
        if op not in ("+", "-"):
            return None
        for side in ("left", "right"):
            b = base_pointer(kernel, shapes, node.child_by_field_name(side), depth + 1)
            if b is not None:
                return b
        return None
    if t == "subscript":
        return base_pointer(kernel, shapes, node.child_by_field_name("value"), depth + 1)
    if t == "call":
        c = shapes.call_of(node)
        if c is not None and c.name in ("multiple_of", "max_contiguous", "max_constancy", "make_block_ptr",
                                        "advance", "make_tensor_descriptor"):
            return base_pointer(kernel, shapes, c.args[0] if c.args else c.kwargs.get("base"), depth + 1)
    return None


def loop_trips(ev: _Eval, loop) -> int | None:
    if loop.kind not in ("range", "tl.range", "tl.static_range") or not loop.args:
        return None
    args = [ev.int_of(a) for a in loop.args[:3]]
    if any(a is None for a in args):
        return None
    if len(args) == 1:
        start, stop, step = 0, args[0], 1
    elif len(args) == 2:
        (start, stop), step = args, 1
    else:
        start, stop, step = args
    if step == 0:
        return None
    return max(0, cdiv(stop - start, step))


def _trips(ev: _Eval, call: TlCall, notes: list[str], noted: set) -> int | None:
    total = 1
    for loop in call.loops:
        t = loop_trips(ev, loop)
        if t is None:
            line = loop.range.start.line + 1
            if line not in noted:
                noted.add(line)
                what = "a while loop" if loop.kind == "while" else f"the loop at line {line}"
                bound = ev.ctx.src.text_of(loop.args[1] if len(loop.args) > 1 else loop.args[0]) if loop.args else ""
                notes.append(f"figures are per iteration of {what}" + (f" (trip count depends on `{bound}`, unknown statically)"
                                                                      if bound else " (trip count unknown statically)"))
            return None
        total *= t
    return total


def estimate(kernel: Kernel, config: Config | None, module: Module | None = None,
             elem_bytes: dict[str, int] | None = None, *, scalars: dict[str, int] | None = None,
             gpu: str | None = None) -> Estimate:
    """Estimates for one configuration of `kernel`.

    `elem_bytes` maps pointer parameter names to element sizes (the profiler knows the dtypes);
    `scalars` maps runtime parameters to values (`{"K": 4096, "n_elements": 1 << 24}`) so loop trip
    counts and the grid can be resolved; `gpu` picks the ridge point (default H100).
    """
    target = gpus.get(gpu)
    if scalars:
        merged = dict(config.scalars) if config is not None else {}
        merged.update({k: Value(v, "given") for k, v in scalars.items()})
        config = Config(config.label if config else "given values", dict(config.values) if config else {},
                        config.launch if config else None, merged)
    shapes = shapes_of(kernel)
    ev = _eval_for(kernel, module, config)
    dtypes = _Dtypes(kernel, module, elem_bytes, shapes)
    notes: list[str] = []
    noted_loops: set = set()
    default_size, default_note = dtypes.default()
    used_default = False
    accesses: list[Access] = []
    loaded: int | None = 0
    stored: int | None = 0
    flops = 0
    flops_known = True
    per_iteration = False
    largest = 0
    largest_known = True

    def tile(node):
        nonlocal largest, largest_known
        shp = ev.shape(shapes.shape(node))
        if shp is None:
            largest_known = False
        elif shp:
            largest = max(largest, math.prod(shp))
        return shp

    for c in kernel.calls:
        if c.name in ("zeros", "full", "arange"):
            tile(c.node)
        if c.name not in MEMORY_OPS and c.name != "dot":
            continue
        line = c.range.start.line + 1
        trips = _trips(ev, c, notes, noted_loops)
        if trips is None and c.loops:
            per_iteration = True
        mult = trips if trips is not None else 1
        if c.name == "dot":
            a, b = c.arg(0, "input"), c.arg(1, "other")
            sa, sb = tile(a), tile(b)
            out = None
            if sa is not None and sb is not None and len(sa) >= 2 and len(sb) >= 2:
                m, k, n = math.prod(sa[:-1]), sa[-1], sb[-1]
                out = 2 * m * n * k * mult
                largest = max(largest, m * n)
                flops += out
            else:
                flops_known = False
                notes.append(f"tl.dot at line {line}: operand tile shapes unknown in this configuration")
            accesses.append(Access("dot", c.range, line, None, None if sa is None or sb is None else (sa, sb), None,
                                   None, trips, None, out, trips is None and bool(c.loops)))
            continue
        ptr = c.arg(0, "pointer")
        base = base_pointer(kernel, shapes, ptr)
        if c.name in ("load", "store") and ptr is not None and ptr.type != "call" and _is_block_ptr(kernel, shapes, ptr):
            notes.append(f"{c.name} at line {line} uses a block pointer: not sized")
            shp = None
        else:
            shp = tile(ptr)
        size, size_note = None, ""
        if base is not None and base in dtypes.given:
            size = int(dtypes.given[base])
        elif c.name == "store":
            size = dtypes.of_value(c.arg(1, "value"))
            if size is not None:
                size_note = "element size from the stored value's dtype"
        if size is None:
            size, used_default = default_size, True
            size_note = "assumed element size"
        elems = math.prod(shp) if shp is not None else None
        nbytes = elems * size * mult if elems is not None else None
        accesses.append(Access(c.name, c.range, line, base, shp, elems, size, trips, nbytes, None,
                               trips is None and bool(c.loops), size_note))
        if c.name == "load":
            loaded = None if loaded is None or nbytes is None else loaded + nbytes
        elif c.name == "store":
            stored = None if stored is None or nbytes is None else stored + nbytes
        else:  # an atomic reads and writes its elements
            loaded = None if loaded is None or nbytes is None else loaded + nbytes
            stored = None if stored is None or nbytes is None else stored + nbytes
        if nbytes is None:
            notes.append(f"tl.{c.name} at line {line}: tile shape unknown in this configuration")
    if used_default:
        notes.append(default_note)

    shared = _shared(kernel, shapes, ev, dtypes, config, notes)
    programs = grid_programs(kernel, module, config, scalars)
    total = None if loaded is None or stored is None else loaded + stored
    intensity = None
    bound = None
    if total is not None and flops_known:
        if total > 0:
            intensity = flops / total
            bound = "compute" if intensity >= target.ridge else "memory"
        elif flops > 0:
            bound = "compute"
    per_launch_bytes = programs * total if programs is not None and total is not None and not per_iteration else None
    per_launch_flops = programs * flops if programs is not None and flops_known and not per_iteration else None
    if programs is not None and per_iteration:
        notes.append("per-launch figures need the loop trip counts: pass the runtime sizes as `scalars`")
    if any(c.name == "load" and "mask" in c.kwargs for c in kernel.calls) or any(
            c.name == "store" and "mask" in c.kwargs for c in kernel.calls):
        notes.append("masked accesses counted as full tiles")
    nw = config.get("num_warps") if config is not None else UNKNOWN
    ns = config.get("num_stages") if config is not None else UNKNOWN
    return Estimate(
        config=config.label if config is not None else "defaults",
        bytes_loaded=loaded, bytes_stored=stored, flops=flops if flops_known else 0,
        shared_bytes=shared, programs=programs, per_launch_bytes=per_launch_bytes,
        per_launch_flops=per_launch_flops, intensity=intensity, bound_hint=bound, notes=notes,
        per_iteration=per_iteration, accesses=accesses,
        largest_tile=largest if largest_known and largest > 0 else None,
        num_warps=nw if isinstance(nw, int) else None, num_stages=ns if isinstance(ns, int) else None,
        gpu=target.name, ridge=target.ridge,
    )


def _is_block_ptr(kernel, shapes, ptr) -> bool:
    ptr = _unwrap(ptr)
    if ptr is None or ptr.type != "identifier":
        return False
    a = shapes.reaching(kernel.src.text_of(ptr), ptr.start_byte)
    v = _unwrap(a.value) if a is not None else None
    if v is None or v.type != "call":
        return False
    c = shapes.call_of(v)
    return c is not None and c.name in ("make_block_ptr", "advance")


def shared_estimate(kernel: Kernel, module: Module | None, config: Config | None,
                    elem_bytes: dict[str, int] | None = None) -> tuple[int | None, bool]:
    """(shared bytes of the pipelined tl.dot operands, whether an element size was assumed)."""
    shapes = shapes_of(kernel)
    dtypes = _Dtypes(kernel, module, elem_bytes, shapes)
    ev = _eval_for(kernel, module, config)
    assumed = dtypes.half_hint is None and any(
        dtypes.of_value(c.arg(i, name)) is None for c in kernel.calls_named("dot") for i, name in ((0, "input"), (1, "other")))
    return _shared(kernel, shapes, ev, dtypes, config, []), assumed


def _shared(kernel, shapes, ev, dtypes, config, notes) -> int | None:
    """num_stages × (BM×BK + BK×BN) × element bytes for each pipelined tl.dot (inside a loop)."""
    dots = kernel.calls_named("dot")
    if not dots:
        return 0
    stages = config.get("num_stages") if config is not None else UNKNOWN
    total = 0
    for c in dots:
        sa, sb = ev.shape(shapes.shape(c.arg(0, "input"))), ev.shape(shapes.shape(c.arg(1, "other")))
        if sa is None or sb is None or len(sa) < 2 or len(sb) < 2:
            return None
        n_stages = 1
        if any(l.kind in ("range", "tl.range") for l in c.loops):
            loop = next(l for l in reversed(c.loops) if l.kind in ("range", "tl.range"))
            own = _loop_stages(ev, loop)
            n_stages = own if own is not None else (stages if isinstance(stages, int) else None)
            if n_stages is None:
                return None
            n_stages = max(n_stages, 1)
        ea = dtypes.of_value(c.arg(0, "input")) or dtypes.default()[0]
        eb = dtypes.of_value(c.arg(1, "other")) or dtypes.default()[0]
        total += n_stages * (math.prod(sa) * ea + math.prod(sb) * eb)
    return total


def _loop_stages(ev, loop) -> int | None:
    """`tl.range(..., num_stages=S)` overrides the kernel's num_stages for that loop."""
    right = loop.node.child_by_field_name("right")
    args = right.child_by_field_name("arguments") if right is not None and right.type == "call" else None
    for a in (args.named_children if args else []):
        if a.type == "keyword_argument" and ev.src.text_of(a.child_by_field_name("name")) == "num_stages":
            return ev.int_of(a.child_by_field_name("value"))
    return None


# ---------------------------------------------------------------------------------------------
# the grid


def grid_programs(kernel: Kernel, module: Module | None, config: Config | None,
                  scalars: dict[str, int] | None = None) -> int | None:
    """Programs launched by `config`'s launch site, when its grid evaluates to numbers."""
    if module is None or config is None or config.launch is None or config.launch.grid is None:
        return None
    launch = config.launch
    src = module.src
    wscope = _wrapper_scope(module, launch)
    bound: dict[str, int] = {}
    # Runtime values given by the caller reach the wrapper through the names passed at the launch.
    given = {k: v.value for k, v in config.scalars.items() if v.known and isinstance(v.value, int)}
    given.update(scalars or {})
    for i, a in enumerate(launch.args):
        if i < len(kernel.params) and a.type == "identifier" and kernel.params[i].name in given:
            bound[src.text_of(a)] = given[kernel.params[i].name]
    for name, a in launch.kwargs.items():
        if a is not None and a.type == "identifier" and name in given:
            bound[src.text_of(a)] = given[name]
    meta = {k: v.value for k, v in config.values.items() if v.known}

    def lookup(name):
        if name in bound:
            return [Value(bound[name])]
        return wscope.lookup(name)

    scope = Scope(lookup=lookup)
    wscope_seen = wscope.seen
    scope.seen = wscope_seen
    grid = _resolve_grid_node(src, launch, launch.grid)
    if grid is None:
        return None
    meta_name = None
    if grid.type == "lambda":
        params = grid.child_by_field_name("parameters")
        if params is not None and params.named_children:
            meta_name = src.text_of(params.named_children[0])
        grid = _unwrap(grid.child_by_field_name("body"))
    if grid is None:
        return None
    items = grid.named_children if grid.type in ("tuple", "list") else [grid]
    total = 1
    for item in items:
        v = _eval_grid(item, src, scope, meta_name, meta)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return None
        total *= v
    return total


def _resolve_grid_node(src, launch: Launch, grid):
    grid = _unwrap(grid)
    if grid is None or grid.type != "identifier" or launch.wrapper is None:
        return grid
    name = src.text_of(grid)
    body = launch.wrapper.child_by_field_name("body")
    found = None
    for n in walk(body, stop_at=("function_definition", "class_definition")) if body is not None else []:
        if n.type == "assignment" and n.start_byte < launch.node.start_byte:
            left = n.child_by_field_name("left")
            if left is not None and left.type == "identifier" and src.text_of(left) == name:
                found = n.child_by_field_name("right")
    return _unwrap(found)


def _eval_grid(node, src, scope, meta_name, meta):
    node = _unwrap(node)
    if node is None:
        return UNKNOWN
    t = node.type
    if t == "subscript" and meta_name is not None:
        value = node.child_by_field_name("value")
        if value is not None and src.text_of(value) == meta_name:
            key = [c for c in node.named_children if c != value]
            if len(key) == 1:
                k = evaluate(key[0], src, Scope(lambda n: None))
                if len(k) == 1 and isinstance(k[0], str) and k[0] in meta:
                    return meta[k[0]]
        return UNKNOWN
    if t == "binary_operator":
        op = src.text_of(node.child_by_field_name("operator"))
        left = _eval_grid(node.child_by_field_name("left"), src, scope, meta_name, meta)
        right = _eval_grid(node.child_by_field_name("right"), src, scope, meta_name, meta)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        try:
            return {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                    "//": lambda a, b: a // b, "%": lambda a, b: a % b}[op](left, right)
        except (KeyError, ZeroDivisionError, TypeError):
            return UNKNOWN
    if t == "call":
        name = (dotted_name(node.child_by_field_name("function"), src) or "").rsplit(".", 1)[-1]
        args_node = node.child_by_field_name("arguments")
        args = [a for a in (args_node.named_children if args_node else []) if a.type != "comment"]
        if name in ("cdiv", "min", "max", "next_power_of_2", "int") and args and all(a.type != "keyword_argument" for a in args):
            vals = [_eval_grid(a, src, scope, meta_name, meta) for a in args]
            if any(v is UNKNOWN for v in vals):
                return UNKNOWN
            try:
                return {"cdiv": cdiv, "min": min, "max": max, "int": int,
                        "next_power_of_2": lambda x: 1 if x <= 1 else 1 << (x - 1).bit_length()}[name](*vals)
            except (TypeError, ValueError, ZeroDivisionError, OverflowError):
                return UNKNOWN
        vals = evaluate(node, src, scope)
        return vals[0] if len(vals) == 1 else UNKNOWN
    vals = evaluate(node, src, scope)
    return vals[0] if len(vals) == 1 else UNKNOWN


def estimates_for(kernel: Kernel, module: Module | None = None, elem_bytes: dict[str, int] | None = None, *,
                  scalars: dict[str, int] | None = None, gpu: str | None = None) -> list[Estimate]:
    """One `Estimate` per configuration of the kernel (launch sites × autotune configs), in order."""
    configs = kernel.configs or [None]
    return [estimate(kernel, c, module, elem_bytes, scalars=scalars, gpu=gpu) for c in configs]
