"""TL022 — a module global that is not a `tl.constexpr`, read inside @triton.jit

## What it finds
A name read in a `@triton.jit` function (kernel or helper) that is neither a parameter nor a
local, but a global of the same file assigned a plain Python value: a number, a bool, a string
or a tuple of them (`BLOCK = 128`, `EPS = 1e-6`, `LOG2E = 1.4426950408889634`,
`BLOCK: tl.constexpr = 128`). Globals bound to `tl.constexpr(...)`, dtypes (`tl.float16`),
modules, `@triton.jit` functions or the result of an unknown call are not reported, nor are
globals used as parameter defaults (`BLOCK: tl.constexpr = DEFAULT_BLOCK`), which Triton reads
on the host. A read that no configuration of the kernel executes (a constexpr branch every
launch rules out) is not reported either. Each global is reported once per file, at its first
read, with the count of the other @jit functions that read it.

## Why
Triton refuses the read when it compiles the kernel: plain globals since Triton 3.0
(triton-lang/triton#3762), globals only annotated `tl.constexpr` since 3.2 (reported on
foundation-model-stack/fms-acceleration#148). Neither is reported when the project's Triton is
older than that. Checked on Triton 3.9.0 (sm_90 target) with ints, floats, bools, tuples and
`X: tl.constexpr = 32`:
`NameError: Cannot access global variable BLOCK from within @jit'ed function. Triton kernels can
only access global variables that are instanstiated as constexpr (x = triton.language.constexpr(42)).
Note that this is different from annotating a variable as constexpr (x: triton.language.constexpr = 42),
which is not supported.` The same kernels compile once the global is `tl.constexpr(...)`.
Triton allows a few other globals (modules, dtypes, JIT functions, namedtuples), and
`TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1` lifts the check, with no promise that it stays.

## Example
```python
BLOCK = 128
EPS = 1e-6

@triton.jit
def rms_norm(x_ptr, y_ptr, n):
    offs = tl.arange(0, BLOCK)          # TL022: `BLOCK` is not a tl.constexpr
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = x * tl.rsqrt(tl.sum(x * x) / n + EPS)   # TL022
```

## Fix
Wrap the value: `BLOCK = tl.constexpr(128)` (host code that reads it gets a `tl.constexpr`; use
`BLOCK.value` there where a plain int is needed), or pass it as a `tl.constexpr` parameter.
"""

from __future__ import annotations

from .. import message_text as mt
from .. import tlapi
from ..findings import Severity
from ..model import module_level_statements
from ..source import captures, dotted_name
from ..values import UNKNOWN, constants_scope, evaluate
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL022",
    name="non-constexpr-global",
    severity=Severity.ERROR,
    summary="a module global that is not a tl.constexpr, read inside @triton.jit (Triton refuses it)",
)

_PATTERNS = ("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "parenthesized_expression")
_BINDERS = (
    "(assignment left: (_) @b)", "(augmented_assignment left: (_) @b)", "(for_statement left: (_) @b)",
    "(for_in_clause left: (_) @b)", "(named_expression name: (_) @b)", "(as_pattern alias: (_) @b)",
    "(function_definition name: (_) @b)", "(class_definition name: (_) @b)", "(parameters) @b",
    "(lambda_parameters) @b", "(import_statement) @b", "(import_from_statement) @b",
    "(global_statement) @b", "(nonlocal_statement) @b",
)


def _bound(node, src, out: set[str]) -> None:
    """The names a binding target binds: `a`, `a, (b, c)`; not `x.a` or `x[i]`."""
    if node.type == "identifier":
        out.add(src.text_of(node))
    elif node.type in _PATTERNS or node.type in ("parameters", "lambda_parameters", "as_pattern_target",
                                                 "typed_parameter", "default_parameter",
                                                 "typed_default_parameter", "list_splat_pattern",
                                                 "dictionary_splat_pattern"):
        for c in node.named_children:
            if c.type == "identifier" and node.type in ("default_parameter", "typed_default_parameter") \
                    and c != node.named_children[0]:
                continue  # the default's value
            _bound(c, src, out)
    elif node.type in ("import_statement", "import_from_statement", "global_statement", "nonlocal_statement"):
        for c in captures(node, "(identifier) @i", "i"):
            out.add(src.text_of(c))  # over-approximate: any name an import mentions counts as bound


def _locals(ctx) -> set[str]:
    key = ("tl022.locals", ctx.kernel.name)
    cached = ctx.module.memo.get(key)
    if cached is None:
        cached = {p.name for p in ctx.kernel.params}
        for q in _BINDERS:
            for n in captures(ctx.kernel.node, q, "b"):
                _bound(n, ctx.src, cached)
        ctx.module.memo[key] = cached
    return cached


def _is_constexpr_call(node, ctx) -> bool:
    if node.type != "call":
        return False
    name = dotted_name(node.child_by_field_name("function"), ctx.src) or ""
    al = ctx.module.aliases
    return al.tl_function(name) == "constexpr" or name in ("constexpr",) or name.endswith("language.constexpr")


def _plain_value(node, ctx, scope):
    """The plain Python value a global is bound to (a number, bool, string or tuple of them),
    else UNKNOWN (a call, a name we cannot follow, a constexpr)."""
    if node.type in ("tuple", "list"):
        items = [_plain_value(c, ctx, scope) for c in node.named_children]
        return UNKNOWN if any(v is UNKNOWN for v in items) else tuple(items)
    if node.type == "parenthesized_expression" and node.named_children:
        return _plain_value(node.named_children[0], ctx, scope)
    if _is_constexpr_call(node, ctx):
        return UNKNOWN
    values = evaluate(node, ctx.src, scope)
    if len(values) != 1:
        return UNKNOWN
    v = values[0]
    return v if isinstance(v, (bool, int, float, str)) else UNKNOWN


class _Computed:
    """The value of an annotated global the analysis does not fold; Triton refuses it all the same."""

    def __repr__(self) -> str:
        return "..."


_COMPUTED = _Computed()


def _annotated_constexpr(ann, right, ctx) -> bool:
    """`X: tl.constexpr = <not a tl.constexpr(...) nor a tl.* object such as a dtype>`."""
    al = ctx.module.aliases
    if al.tl_function(dotted_name(ann.named_children[0] if ann.named_children else ann, ctx.src)) != "constexpr":
        return False
    if _is_constexpr_call(right, ctx):
        return False
    return not (right.type == "attribute" and al.tl_function(dotted_name(right, ctx.src)) is not None)


def _module_globals(ctx) -> dict[str, tuple]:
    """name → (value, annotation text, assignment node) for module globals bound only to plain
    values; a name also bound any other way (import, def, a call, a constexpr) is left out."""
    cached = ctx.module.memo.get("tl022.globals")
    if cached is not None:
        return cached
    src = ctx.module.src
    scope = constants_scope(ctx.module.constants, src)
    plain: dict[str, tuple] = {}
    other: set[str] = set()
    for stmt in module_level_statements(src):
        assign = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
        if assign is not None and assign.type == "assignment":
            left, right = assign.child_by_field_name("left"), assign.child_by_field_name("right")
            if left is not None and left.type == "identifier" and right is not None:
                name = src.text_of(left)
                ann = assign.child_by_field_name("type")
                value = _plain_value(right, ctx, scope)
                if value is UNKNOWN and ann is not None and _annotated_constexpr(ann, right, ctx):
                    value = _COMPUTED  # `X: tl.constexpr = torch.iinfo(...).max`: refused whatever it holds
                if value is UNKNOWN:
                    other.add(name)
                elif name not in plain:
                    plain[name] = (value, src.text_of(ann) if ann is not None else "", assign)
                continue
        names: set[str] = set()
        if stmt.type in ("function_definition", "class_definition"):
            names.add(src.text_of(stmt.child_by_field_name("name")))
        elif stmt.type == "decorated_definition":
            d = stmt.child_by_field_name("definition")
            if d is not None:
                names.add(src.text_of(d.child_by_field_name("name")))
        else:
            for q in _BINDERS:
                for n in captures(stmt, q, "b"):
                    _bound(n, src, names)
        other |= names
    out = {n: v for n, v in plain.items() if n not in other}
    ctx.module.memo["tl022.globals"] = out
    return out


def _reads(ctx, names: dict) -> list:
    """Identifier nodes in the kernel's body that read one of `names` as a variable."""
    body = ctx.kernel.node.child_by_field_name("body")
    if body is None:
        return []
    out = []
    for n in captures(body, "(identifier) @i", "i"):
        if ctx.src.text_of(n) not in names:
            continue
        p = n.parent
        if p is not None and p.type == "attribute" and p.child_by_field_name("attribute") == n:
            continue
        if p is not None and p.type == "keyword_argument" and p.child_by_field_name("name") == n:
            continue
        out.append(n)
    return out


def _executed(ctx, node) -> bool:
    """False only when every known configuration skips `node` (a constexpr branch)."""
    configs = ctx.kernel.configs
    if not configs:
        return True
    return any(ctx.values(node, c) != [] for c in configs)


# Triton versions from which the compiler refuses plain globals, and globals only annotated
# tl.constexpr (see the docstring for where each change is recorded).
REFUSES_PLAIN = (3, 0)
REFUSES_ANNOTATED = (3, 2)


def check(ctx: KernelContext):
    globals_ = _module_globals(ctx)
    if not globals_:
        return
    version = tlapi._version_key(tlapi.active().version)[:2]
    if version < REFUSES_PLAIN:
        return
    if version < REFUSES_ANNOTATED:
        globals_ = {n: v for n, v in globals_.items() if not v[1]}
    candidates = {n: v for n, v in globals_.items() if n not in _locals(ctx)}
    reported = set()
    for node in _reads(ctx, candidates):
        name = ctx.src.text_of(node)
        if name in reported or not _executed(ctx, node):
            continue
        reported.add(name)
        value, annotation, assign = candidates[name]
        line = assign.start_point[0] + 1
        right = ctx.src.text_of(assign.child_by_field_name("right"))
        right = right if len(right) <= 24 else "..."
        shown = mt.clip(name, 30)
        if annotation:
            why = f"global {shown} (line {line}) is only annotated {mt.clip(annotation, 24)}"
        else:
            kind = assign.child_by_field_name("right").type if isinstance(value, tuple) else type(value).__name__
            why = f"{shown} is a plain {kind} global (line {line})"
        yield ctx.finding(ctx.src.range(node), mt.shortest_needed(
                              f"{why}: Triton refuses it in @jit code; write {mt.code(f'{name} = tl.constexpr({right})', 48)}",
                              f"{why}: Triton refuses it in @jit code; wrap it in tl.constexpr()",
                              f"{why}: Triton refuses it in @jit code", limit=mt.MESSAGE_LIMIT - mt.USES_ROOM),
                          data={"name": name, "line": line, "annotated": bool(annotation),
                                # one global, one fix: its reads in every @jit function of the file are one finding
                                "once_per_file": f"global:{name}",
                                "value": list(value) if isinstance(value, tuple) else
                                None if value is _COMPUTED else value})
