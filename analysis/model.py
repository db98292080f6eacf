"""The kernel model: what a file's `@triton.jit` functions do, and how they are launched.

Built from a tree-sitter tree, so half-typed code still yields a model: whatever parsed is used,
ERROR nodes are skipped.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from .findings import Range
from .source import Source, captures, dotted_name, walk
from .values import UNKNOWN, Scope, Value, evaluate, fmt

MAX_CONFIGS = 32  # combinations of launch values × autotune configs considered per kernel

# tl functions whose call we record (the canonical short name after the `tl.` alias).
REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum", "cumsum", "cumprod", "associative_scan"}
ATOMICS = {"atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas"}


@dataclass
class Aliases:
    """How this file names Triton: `import triton.language as tl`, `from triton import jit`, …"""

    triton: set[str] = field(default_factory=lambda: set())
    language: set[str] = field(default_factory=lambda: set())  # prefixes meaning triton.language
    jit: set[str] = field(default_factory=set)  # bare names meaning triton.jit
    autotune: set[str] = field(default_factory=set)
    heuristics: set[str] = field(default_factory=set)
    config: set[str] = field(default_factory=set)  # bare names meaning triton.Config
    tl_names: dict[str, str] = field(default_factory=dict)  # `from triton.language import load` → {"load": "load"}

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


def _collect_aliases(src: Source) -> Aliases:
    al = Aliases()
    for node in src.root.named_children:
        if node.type == "import_statement":
            for item in node.named_children:
                if item.type == "dotted_name":
                    name = src.text_of(item)
                    if name == "triton":
                        al.triton.add("triton")
                    elif name.startswith("triton."):
                        al.triton.add("triton")
                        if name == "triton.language":
                            al.language.add("triton.language")
                elif item.type == "aliased_import":
                    name = src.text_of(item.child_by_field_name("name"))
                    alias = src.text_of(item.child_by_field_name("alias"))
                    if name == "triton":
                        al.triton.add(alias)
                    elif name == "triton.language":
                        al.language.add(alias)
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
                if module == "triton":
                    if name == "language":
                        al.language.add(alias)
                    elif name == "jit":
                        al.jit.add(alias)
                    elif name == "autotune":
                        al.autotune.add(alias)
                    elif name == "heuristics":
                        al.heuristics.add(alias)
                    elif name == "Config":
                        al.config.add(alias)
                elif module == "triton.language":
                    al.tl_names[alias] = name
    al.language.add("triton.language")
    if not al.triton:
        al.triton.add("triton")
    if not al.language - {"triton.language"}:
        al.language.add("tl")  # the universal convention, even before the import is typed
    return al


@dataclass
class Param:
    name: str
    index: int
    is_constexpr: bool
    annotation: str | None
    default: Any  # evaluated default, UNKNOWN when absent or not constant
    has_default: bool
    range: Range


@dataclass
class Loop:
    kind: str  # "range", "tl.range", "tl.static_range", "while", "for"
    var: str | None
    node: Any
    range: Range
    args: list  # argument nodes of range(...)
    parent: "Loop | None" = None


@dataclass
class TlCall:
    name: str  # canonical: "load", "store", "dot", "arange", "math.exp", …
    node: Any
    args: list
    kwargs: dict
    loops: tuple  # enclosing loops, outermost first
    range: Range

    def arg(self, index: int, keyword: str | None = None):
        if keyword and keyword in self.kwargs:
            return self.kwargs[keyword]
        return self.args[index] if index < len(self.args) else None


@dataclass
class Assignment:
    name: str
    value: Any  # node of the right-hand side (None for augmented/loop targets)
    node: Any  # the assignment statement node
    loops: tuple
    augmented: str | None = None  # "+=" etc.


@dataclass
class AutotuneConfig:
    index: int
    values: dict[str, Value]
    range: Range


@dataclass
class Launch:
    kernel: str
    node: Any  # the call node kernel[grid](...)
    range: Range
    grid: Any
    args: list
    kwargs: dict
    wrapper: Any  # enclosing function_definition node, or None at module level

    @property
    def line(self) -> int:
        return self.range.start.line + 1


@dataclass
class Config:
    """One resolved configuration of a kernel: a launch site, an autotune config, or both."""

    label: str  # "the launch at line 31", "autotune config #2 (line 5)", "defaults"
    values: dict[str, Value]  # constexpr params + num_warps / num_stages
    launch: Launch | None = None
    scalars: dict[str, Value] = field(default_factory=dict)  # runtime (non-constexpr) args we could resolve

    def get(self, name: str) -> Any:
        v = self.values.get(name)
        return v.value if v is not None else UNKNOWN

    def describe(self, name: str) -> str:
        v = self.values.get(name)
        if v is None:
            return f"{name}=?"
        return f"{name}={fmt(v.value)} from {v.origin or self.label}"


@dataclass
class Kernel:
    name: str
    node: Any  # function_definition
    outer: Any  # decorated_definition (or the function itself)
    range: Range
    name_range: Range
    params: list[Param]
    decorators: list[str]
    calls: list[TlCall] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    assignments: dict[str, list[Assignment]] = field(default_factory=dict)
    autotune_configs: list[AutotuneConfig] = field(default_factory=list)
    autotune_key: list[str] = field(default_factory=list)
    heuristics: dict[str, str] = field(default_factory=dict)
    launches: list[Launch] = field(default_factory=list)
    configs: list[Config] = field(default_factory=list)
    text: str = ""
    src: Source | None = None  # the text this model was built from (a cached model keeps its own)

    @property
    def autotuned(self) -> bool:
        return bool(self.autotune_configs) or any(d == "autotune" for d in self.decorators)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def signature(self) -> str:
        parts = []
        for p in self.params:
            s = p.name + (f": {p.annotation}" if p.annotation else "")
            if p.has_default:
                s += f"={fmt(p.default)}"
            parts.append(s)
        return f"{self.name}({', '.join(parts)})"

    def calls_named(self, *names: str) -> list[TlCall]:
        return [c for c in self.calls if c.name in names]

    def call_at(self, line: int, column: int) -> TlCall | None:
        best = None
        for c in self.calls:
            r = c.range
            if (r.start.line, r.start.column) <= (line, column) <= (r.end.line, r.end.column):
                if best is None or (r.start.line, r.start.column) >= (best.range.start.line, best.range.start.column):
                    best = c
        return best


@dataclass
class Module:
    src: Source
    aliases: Aliases
    kernels: list[Kernel]
    functions: dict[str, Any]  # top-level plain function name → node
    constants: dict[str, list[Any]]  # module-level simple assignments name → value nodes
    memo: dict = field(default_factory=dict)  # per-analysis facts rules share (computed once a file)

    def kernel(self, name: str) -> Kernel | None:
        return next((k for k in self.kernels if k.name == name), None)

    def kernel_at(self, line: int, column: int | None = None) -> Kernel | None:
        for k in self.kernels:
            if k.range.start.line <= line <= k.range.end.line:
                return k
        return None


# ---------------------------------------------------------------------------------------------
# building


def top_level_definitions(src: Source):
    """Yield (outer_node, function_definition, decorator nodes) for each top-level function."""
    for node in src.root.named_children:
        if node.type == "decorated_definition":
            fn = node.child_by_field_name("definition")
            if fn is not None and fn.type == "function_definition":
                yield node, fn, [c for c in node.named_children if c.type == "decorator"]
        elif node.type == "function_definition":
            yield node, node, []


def _decorator_kind(dec, src: Source, al: Aliases) -> tuple[str | None, Any]:
    expr = dec.named_children[0] if dec.named_children else None
    call = None
    if expr is not None and expr.type == "call":
        call = expr
        expr = expr.child_by_field_name("function")
    return al.triton_attr(dotted_name(expr, src)) if expr is not None else None, call


def is_kernel_definition(decorators, src: Source, al: Aliases) -> bool:
    return any(_decorator_kind(d, src, al)[0] == "jit" for d in decorators)


def build_module(src: Source, only: set[str] | None = None, launch_roots: dict[str, list] | None = None) -> Module:
    """The model of every kernel in `src` (or only those named in `only`).

    `launch_roots` maps a kernel name to the nodes that may hold its launches (found by the
    engine from the text); without it the whole file is searched.
    """
    al = _collect_aliases(src)
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
        k = _build_kernel(src, al, outer, fn, decorators, name)
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
        k = _build_kernel(src, al, outer, fn, decorators, name)
        k.launches = [l for root in launch_roots.get(name, []) for l in find_launches(src, {name}, root)]
        k.configs = resolve_configs(module, k)
        out.append(k)
    return out


def _build_kernel(src: Source, al: Aliases, outer, fn, decorators, name: str) -> Kernel:
    params = _params(fn, src)
    decos = []
    k = Kernel(
        name=name, node=fn, outer=outer, range=src.range(outer), name_range=src.range(fn.child_by_field_name("name")),
        params=params, decorators=decos, text=src.text_of(outer), src=src,
    )
    for d in decorators:
        kind, call = _decorator_kind(d, src, al)
        decos.append(kind or src.text_of(d))
        if kind == "autotune" and call is not None:
            _read_autotune(k, call, src, al)
        elif kind == "heuristics" and call is not None:
            args = call.child_by_field_name("arguments")
            for a in (args.named_children if args else []):
                target = a.child_by_field_name("value") if a.type == "keyword_argument" else a
                if target is not None and target.type == "dictionary":
                    for pair in target.named_children:
                        if pair.type == "pair":
                            key = evaluate(pair.child_by_field_name("key"), src, Scope(lambda n: None))
                            if key and isinstance(key[0], str):
                                k.heuristics[key[0]] = src.text_of(pair.child_by_field_name("value"))
    body = fn.child_by_field_name("body")
    if body is not None:
        _walk_body(k, body, src, al, ())
        nested = captures(body, "[(function_definition) (class_definition)] @d", "d")
        _collect_calls(k, body, src, al, [(d.start_byte, d.end_byte) for d in nested])
        k.loops.sort(key=lambda l: l.node.start_byte)
    return k


def _params(fn, src: Source) -> list[Param]:
    out = []
    params = fn.child_by_field_name("parameters")
    if params is None:
        return out
    index = 0
    for p in params.named_children:
        name_node, ann, default = None, None, None
        if p.type == "identifier":
            name_node = p
        elif p.type == "typed_parameter":
            name_node = next((c for c in p.named_children if c.type == "identifier"), None)
            ann = p.child_by_field_name("type")
        elif p.type == "default_parameter":
            name_node, default = p.child_by_field_name("name"), p.child_by_field_name("value")
        elif p.type == "typed_default_parameter":
            name_node, ann, default = p.child_by_field_name("name"), p.child_by_field_name("type"), p.child_by_field_name("value")
        else:
            continue  # *args, **kwargs, separators: not kernel parameters Triton accepts
        if name_node is None:
            continue
        ann_text = src.text_of(ann).strip() if ann is not None else None
        constexpr = bool(ann_text) and ann_text.strip("'\"").split(".")[-1] == "constexpr"
        default_val = evaluate(default, src, Scope(lambda n: None))[0] if default is not None else UNKNOWN
        out.append(Param(src.text_of(name_node), index, constexpr, ann_text, default_val, default is not None, src.range(p)))
        index += 1
    return out


def _read_autotune(k: Kernel, call, src: Source, al: Aliases) -> None:
    args = call.child_by_field_name("arguments")
    if args is None:
        return
    configs_node, key_node = None, None
    positional = [a for a in args.named_children if a.type != "keyword_argument" and a.type != "comment"]
    for a in args.named_children:
        if a.type == "keyword_argument":
            n = src.text_of(a.child_by_field_name("name"))
            if n == "configs":
                configs_node = a.child_by_field_name("value")
            elif n == "key":
                key_node = a.child_by_field_name("value")
    if configs_node is None and positional:
        configs_node = positional[0]
    if key_node is None and len(positional) > 1:
        key_node = positional[1]
    if key_node is not None and key_node.type in ("list", "tuple"):
        for item in key_node.named_children:
            v = evaluate(item, src, Scope(lambda n: None))[0]
            if isinstance(v, str):
                k.autotune_key.append(v)
    if configs_node is None:
        return
    if configs_node.type in ("list", "tuple"):
        items = [c for c in configs_node.named_children if c.type != "comment"]
    else:
        items = []  # a list built elsewhere (a comprehension, a variable): values stay unknown
        k.autotune_configs.append(AutotuneConfig(0, {}, src.range(configs_node)))
        return
    for i, item in enumerate(items):
        if item.type != "call":
            continue
        fname = al.triton_attr(dotted_name(item.child_by_field_name("function"), src))
        if fname != "Config":
            continue
        vals: dict[str, Value] = {}
        origin = f"autotune config #{i + 1} (line {item.start_point[0] + 1})"
        cargs = item.child_by_field_name("arguments")
        for a in (cargs.named_children if cargs else []):
            if a.type == "dictionary":
                for pair in a.named_children:
                    if pair.type != "pair":
                        continue
                    key = evaluate(pair.child_by_field_name("key"), src, Scope(lambda n: None))[0]
                    valnode = pair.child_by_field_name("value")
                    if isinstance(key, str):
                        v = evaluate(valnode, src, Scope(lambda n: None))
                        vals[key] = Value(v[0] if len(v) == 1 else UNKNOWN, origin, src.range(valnode))
            elif a.type == "keyword_argument":
                name = src.text_of(a.child_by_field_name("name"))
                if name in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
                    valnode = a.child_by_field_name("value")
                    v = evaluate(valnode, src, Scope(lambda n: None))
                    vals[name] = Value(v[0] if len(v) == 1 else UNKNOWN, origin, src.range(valnode))
        k.autotune_configs.append(AutotuneConfig(i, vals, src.range(item)))


_LOOP_RANGES = {"range": "range", "static_range": "tl.static_range"}


def _walk_body(k: Kernel, node, src: Source, al: Aliases, loops: tuple) -> None:
    """Record loops and assignments statement by statement; tl calls are collected afterwards
    by one query (`_collect_calls`), which places them in these loops by position."""
    for child in node.named_children:
        t = child.type
        if t in ("function_definition", "class_definition", "decorated_definition"):
            continue  # nested definitions are not part of the kernel's own body
        if t == "for_statement":
            right = child.child_by_field_name("right")
            left = child.child_by_field_name("left")
            kind, rargs = "for", []
            if right is not None and right.type == "call":
                fname = dotted_name(right.child_by_field_name("function"), src)
                tlname = al.tl_function(fname)
                if fname == "range":
                    kind = "range"
                elif tlname in ("range", "static_range"):
                    kind = "tl." + tlname
                a = right.child_by_field_name("arguments")
                rargs = [x for x in (a.named_children if a else []) if x.type != "keyword_argument"]
            loop = Loop(kind, src.text_of(left) if left is not None and left.type == "identifier" else None,
                        child, src.range(child), rargs, loops[-1] if loops else None)
            k.loops.append(loop)
            if loop.var:
                k.assignments.setdefault(loop.var, []).append(Assignment(loop.var, None, child, loops + (loop,)))
            body = child.child_by_field_name("body")
            if body is not None:
                _walk_body(k, body, src, al, loops + (loop,))
            alt = child.child_by_field_name("alternative")
            if alt is not None:
                _walk_body(k, alt, src, al, loops)
        elif t == "while_statement":
            loop = Loop("while", None, child, src.range(child), [], loops[-1] if loops else None)
            k.loops.append(loop)
            body = child.child_by_field_name("body")
            if body is not None:
                _walk_body(k, body, src, al, loops + (loop,))
        elif t == "expression_statement":
            for e in child.named_children:
                if e.type in ("assignment", "augmented_assignment"):
                    _record_assignment(k, e, src, loops)
        elif t in ("if_statement", "elif_clause", "else_clause", "with_statement", "try_statement",
                   "except_clause", "finally_clause"):
            for c in child.named_children:
                if c.type in ("block", "elif_clause", "else_clause", "except_clause", "finally_clause"):
                    _walk_body(k, c, src, al, loops)
        elif t in ("block", "ERROR"):
            _walk_body(k, child, src, al, loops)


def _record_assignment(k: Kernel, e, src: Source, loops: tuple) -> None:
    left = e.child_by_field_name("left")
    right = e.child_by_field_name("right")
    aug = None
    if e.type == "augmented_assignment":
        aug = src.text_of(e.child_by_field_name("operator"))
    if left is None:
        return
    if left.type == "identifier":
        name = src.text_of(left)
        k.assignments.setdefault(name, []).append(Assignment(name, right, e, loops, aug))
    elif left.type in ("pattern_list", "tuple_pattern"):
        for item in left.named_children:
            if item.type == "identifier":
                name = src.text_of(item)
                k.assignments.setdefault(name, []).append(Assignment(name, None, e, loops, aug))


def split_arguments(call, src: Source) -> tuple[list, dict]:
    """A call's positional argument nodes and its keyword arguments (name → value node)."""
    argnode = call.child_by_field_name("arguments")
    args, kwargs = [], {}
    for a in (argnode.named_children if argnode else []):
        if a.type == "keyword_argument":
            kn = a.child_by_field_name("name")
            if kn is not None:
                kwargs[src.text_of(kn)] = a.child_by_field_name("value")
        elif a.type != "comment":
            args.append(a)
    return args, kwargs


_METHODS = ("to", "sum", "max", "min", "reshape", "trans", "permute", "broadcast_to", "expand_dims")


def _collect_calls(k: Kernel, body, src: Source, al: Aliases, skip: list) -> None:
    """Every tl call in the kernel body (nested definitions excluded), with its enclosing loops."""
    loop_bodies = []
    for loop in k.loops:
        b = loop.node.child_by_field_name("body")
        if b is not None:
            loop_bodies.append((b.start_byte, b.end_byte, loop))
        if loop.kind == "while":
            c = loop.node.child_by_field_name("condition")
            if c is not None:
                loop_bodies.append((c.start_byte, c.end_byte, loop))
    for n in captures(body, "(call) @c", "c"):
        if any(a <= n.start_byte < b for a, b in skip):
            continue
        fn = n.child_by_field_name("function")
        if fn is None:
            continue
        name = al.tl_function(dotted_name(fn, src)) if fn.type in ("attribute", "identifier") else None
        if name is None and fn.type == "attribute":
            # method forms: x.to(tl.float16), acc.sum(axis=0) are recorded by their method name
            attr = src.text_of(fn.child_by_field_name("attribute"))
            if attr in _METHODS:
                name = "." + attr
        if name is None:
            continue
        args, kwargs = split_arguments(n, src)
        enclosing = tuple(l for a, b, l in loop_bodies if a <= n.start_byte < b)
        k.calls.append(TlCall(name, n, args, kwargs, enclosing, src.range(n)))


# ---------------------------------------------------------------------------------------------
# launch sites and configurations


_LAUNCH = "(call function: (subscript value: (identifier) @k)) @launch"


def find_launches(src: Source, kernel_names: set[str], root=None) -> list[Launch]:
    """Every `kernel[grid](...)` under `root` (default: the file), with the function it sits in."""
    out = []
    if not kernel_names:
        return out
    root = src.root if root is None else root
    data = src.data[root.start_byte:root.end_byte]
    # Cheap pre-filter: a launch needs `name[` somewhere in the text.
    if not any((n + "[").encode() in data for n in kernel_names):
        return out
    for n in captures(root, _LAUNCH, "launch"):
        fn = n.child_by_field_name("function")
        value = fn.child_by_field_name("value")
        kname = src.text_of(value)
        if kname not in kernel_names:
            continue
        subs = [c for c in fn.named_children if c != value and c.type != "comment"]
        grid = subs[0] if subs else None
        args, kwargs = split_arguments(n, src)
        wrapper = n.parent
        while wrapper is not None and wrapper.type != "function_definition":
            wrapper = wrapper.parent
        out.append(Launch(kname, n, src.range(n), grid, args, kwargs, wrapper))
    return out


def _wrapper_scope(module: Module, launch: Launch) -> Scope:
    """Names visible at a launch: the wrapper's simple assignments before it, then module constants."""
    src = module.src
    assigns: dict[str, list[tuple[Any, Any]]] = {}
    if launch.wrapper is not None:
        body = launch.wrapper.child_by_field_name("body")
        for n in captures(body, "(assignment) @a", "a") if body is not None else []:
            if n.start_byte < launch.node.start_byte:
                left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
                if left is not None and left.type == "identifier" and right is not None:
                    assigns.setdefault(src.text_of(left), []).append((n, right))
                elif left is not None and left.type in ("pattern_list", "tuple_pattern"):
                    # `BLOCK_M, BLOCK_N = 32, 64` binds element-wise; `M, N = x.shape` stays unknown.
                    targets = left.named_children
                    values = right.named_children if right is not None and right.type in ("expression_list", "tuple") else []
                    for i, item in enumerate(targets):
                        if item.type == "identifier":
                            value = values[i] if len(values) == len(targets) else None
                            assigns.setdefault(src.text_of(item), []).append((n, value))

    scope = Scope(lookup=lambda name: None)
    # Is an assignment directly in the wrapper's body (assignment → statement → body block)?
    # Every assignment here lies inside that block, so its grandparent is the wrapper exactly when
    # its parent's parent is the block: asked once per statement, not per name looked up.
    wrapper_body = launch.wrapper.child_by_field_name("body") if launch.wrapper is not None else None
    at_top_memo: dict = {}

    def at_top(stmt) -> bool:
        r = at_top_memo.get(stmt)
        if r is None:
            p = stmt.parent
            r = at_top_memo[stmt] = p is not None and p.parent is not None and p.parent == wrapper_body
        return r

    def lookup(name: str):
        if name in assigns:
            defs = assigns[name]
            # The last assignment at the wrapper's top level overrides earlier ones; assignments in
            # branches all remain possible.
            top = [d for d in defs if at_top(d[0])]
            chosen = defs
            if top:
                last_top = top[-1]
                chosen = [d for d in defs if d[0].start_byte >= last_top[0].start_byte]
            out = []
            scope.seen.add(name)
            scope.depth += 1
            try:
                for stmt, right in chosen:
                    line = stmt.start_point[0] + 1
                    vals = evaluate(right, src, scope) if right is not None else [UNKNOWN]
                    out.extend(Value(v, f"`{src.text_of(stmt).strip()}` at line {line}", src.range(stmt)) for v in vals)
            finally:
                scope.seen.discard(name)
                scope.depth -= 1
            return out
        if name in module.constants:
            out = []
            scope.seen.add(name)
            try:
                for right in module.constants[name][-1:]:
                    line = right.start_point[0] + 1
                    out.extend(Value(v, f"the module constant at line {line}", src.range(right.parent)) for v in evaluate(right, src, scope))
            finally:
                scope.seen.discard(name)
            return out
        return None

    scope.lookup = lookup
    return scope


def _launch_values(module: Module, k: Kernel, launch: Launch) -> dict[str, list[Value]]:
    src = module.src
    scope = _wrapper_scope(module, launch)
    where = f"the launch at line {launch.line}"
    out: dict[str, list[Value]] = {}
    by_name: dict[str, Any] = {}
    for i, a in enumerate(launch.args):
        if a.type in ("list_splat", "dictionary_splat"):
            break
        if i < len(k.params):
            by_name[k.params[i].name] = a
    by_name.update(launch.kwargs)
    for name, node in by_name.items():
        vals: list[Value] = []
        found = scope.lookup(src.text_of(node)) if node.type == "identifier" else None
        if found is not None:
            vals = [Value(v.value, v.origin + f", passed at line {launch.line}", v.range) for v in found]
        else:
            vals = [Value(v, where, src.range(node)) for v in evaluate(node, src, scope)]
        out[name] = vals or [Value(UNKNOWN, where, src.range(node))]
    return out


def resolve_configs(module: Module, k: Kernel) -> list[Config]:
    """Every configuration the kernel can run with that this file lets us see."""
    bases: list[tuple[str, dict[str, list[Value]], Launch | None]] = []
    for launch in k.launches:
        bases.append((f"the launch at line {launch.line}", _launch_values(module, k, launch), launch))
    if not bases:
        bases.append(("defaults", {}, None))
    constexpr = [p for p in k.params if p.is_constexpr]
    tunes = k.autotune_configs or [None]
    configs: list[Config] = []
    for label, vals, launch in bases:
        for tune in tunes:
            merged: dict[str, list[Value]] = {}
            for p in constexpr:
                if tune is not None and p.name in tune.values:
                    merged[p.name] = [tune.values[p.name]]
                elif p.name in vals:
                    merged[p.name] = vals[p.name]
                elif p.name in k.heuristics:
                    merged[p.name] = [Value(UNKNOWN, f"@triton.heuristics: {k.heuristics[p.name]}")]
                elif p.has_default:
                    merged[p.name] = [Value(p.default, f"the default of {p.name}", p.range)]
                else:
                    merged[p.name] = [Value(UNKNOWN, label)]
            for opt, dflt in (("num_warps", 4), ("num_stages", 3)):
                if tune is not None and opt in tune.values:
                    merged[opt] = [tune.values[opt]]
                elif opt in vals:
                    merged[opt] = vals[opt]
                else:
                    merged[opt] = [Value(dflt, f"Triton's default {opt}={dflt}")]
            scalars = {p.name: vals[p.name] for p in k.params if not p.is_constexpr and p.name in vals}
            tlabel = label if tune is None else (f"{label} with autotune config #{tune.index + 1}" if launch else f"autotune config #{tune.index + 1}")
            names = list(merged)
            for combo in itertools.product(*(merged[n] for n in names)):
                sc = {n: vs[0] for n, vs in scalars.items() if len(vs) == 1}
                configs.append(Config(tlabel, dict(zip(names, combo)), launch, sc))
                if len(configs) >= MAX_CONFIGS:
                    return configs
    return configs
