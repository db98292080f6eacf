"""TL019 — Python construct Triton's compiler rejects

## What it finds
Inside a `@triton.jit` function: `try`/`except`, `raise`, `with` on anything but Triton's own
context managers, `lambda`, list/set/dict comprehensions, set and dict literals, `yield`,
`global`/`nonlocal`, nested `def`/`class`, `break`, `continue`, `del`, `return` inside a loop,
`for … else` / `while … else`, a `**kwargs` parameter, and calls of plain (undecorated) Python
functions of the same file.

Not reported, because Triton 3.9 compiles them: `assert` (device assert), `print`, chained
comparisons, `:=`, `*args` parameters, calls of `@triton.jit` helpers. Nor is a construct Triton
may never compile: Triton compiles only the arm of an `if` that a compile-time condition selects,
so a construct is reported only where the shape engine knows it is compiled, in some
configuration: every `if` around it has a runtime condition (both arms are compiled) or a
constexpr condition that configuration decides in its favour. An undecided compile-time
condition (`if dtype is tl.int64:`, `if x.dtype == tl.float16:`,
`if tl.constexpr(x.dtype.primitive_bitwidth) == 8:`, a helper's parameter) or one the engine
does not know keeps it silent, and so does code after a `return` in the same block (the code
generator stops there). A `raise` under any compile-time condition is a deliberate compile-time
error (it refuses a configuration on purpose) and is never reported.

## Why
Triton compiles the kernel's Python AST itself (`triton/compiler/code_generator.py`); AST nodes it
has no lowering for raise `UnsupportedLanguageConstruct: unsupported AST node type: Try` (or
`Break`, `Lambda`, `Dict`, …), comprehensions other than tuple ones raise `NotImplementedError`,
plain Python calls raise `RuntimeError: Unsupported function referenced`, and `**kwargs` is refused
by the decorator at import. None of this shows until the kernel is first compiled — usually on the
first launch, on the GPU machine. Every construct listed above is checked against the installed
Triton 3.9 in the test suite (`tests/inference/test_rules_real_compiler.py` compiles each positive
fixture kernel with `triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))` and expects
the refusal; the negative fixtures must compile).

## Example
```python
@triton.jit
def k(x_ptr, n):
    for i in range(n):
        if tl.load(x_ptr + i) < 0:
            break          # TL019: Triton has no `break`
```

## Fix
Fold early exits into the loop bounds or a mask (`tl.where`), replace `try`/`raise` by
`tl.device_assert`/`tl.static_assert`, move helpers to module level with `@triton.jit`, unroll
comprehensions with `tl.static_range`, and pass configuration as constexpr arguments instead of
dicts or globals.
"""

# Each construct listed here was checked against the real compiler (Triton 3.9, sm_90 target): see
# tests/fixtures/rules/TL019 and tests/inference/test_rules_real_compiler.py. Constructs the compiler
# accepts (assert, print, chained comparisons, `:=`, tuple comprehensions, `with` on Triton's own
# context managers) are not reported.

from __future__ import annotations

from .. import message_text as mt
from ..findings import Range, Severity
from ..source import captures, dotted_name
from ..values import UNKNOWN
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL019",
    name="unsupported-python-construct",
    severity=Severity.ERROR,
    summary="a Python construct Triton's compiler rejects inside @triton.jit",
)

# node type → (what it is, what to do instead)
CONSTRUCTS = {
    "try_statement": ("try/except", "guard with masks or tl.where"),
    "raise_statement": ("raise", "use tl.device_assert or tl.static_assert"),
    "lambda": ("a lambda", "define a module-level @triton.jit function"),
    "list_comprehension": ("a list comprehension", "unroll with tl.static_range or build a tuple"),
    "set_comprehension": ("a set comprehension", "unroll with tl.static_range"),
    "dictionary_comprehension": ("a dict comprehension", "unroll with tl.static_range"),
    "set": ("a set literal", "use a tuple"),
    "dictionary": ("a dict literal", "pass values as separate (constexpr) arguments"),
    "yield": ("yield", "a kernel cannot be a generator: return values instead"),
    "global_statement": ("global", "pass the value as a (constexpr) argument"),
    "nonlocal_statement": ("nonlocal", "pass the value as an argument"),
    "function_definition": ("a nested function definition", "move it to module level with @triton.jit"),
    "class_definition": ("a class definition", "define classes outside the kernel"),
    "break_statement": ("break", "fold the exit condition into the loop bounds or a mask"),
    "continue_statement": ("continue", "wrap the rest of the body in an if"),
    "delete_statement": ("del", "just stop using the name"),
}
_QUERY = "[" + " ".join(f"({t})" for t in CONSTRUCTS) + " (with_statement) (return_statement) (for_statement) (while_statement) (call)] @n"


def _nested(node, body) -> bool:
    """Inside a nested definition: reported once, at the definition."""
    n = node.parent
    while n is not None and n != body:
        if n.type in ("function_definition", "class_definition", "lambda"):
            return True
        n = n.parent
    return False


def _after_return(node, body) -> bool:
    """After a `return` in the same block: the code generator stops at the return."""
    n = node
    while n is not None and n != body:
        parent = n.parent
        if parent is not None and parent.type in ("block", "module"):
            for sib in parent.named_children:
                if sib.start_byte >= n.start_byte:
                    break
                if sib.type == "return_statement":
                    return True
        n = parent
    return False


def _arm_conditions(node, body) -> list:
    """The condition deciding each `if` arm around `node`: an arm's own, and for an `else` the
    chain's last one (Triton's `elif` is an `if` in the `else` of the one before)."""
    out = []
    n, child = node.parent, node
    while n is not None and n != body:
        if n.type in ("if_statement", "elif_clause"):
            cond = n.child_by_field_name("condition")
            if cond is not None and child == n.child_by_field_name("consequence"):
                out.append(cond)
        elif n.type == "else_clause" and n.parent is not None:
            chain = n.parent
            elifs = [c for c in chain.children_by_field_name("alternative") if c.type == "elif_clause"]
            last = elifs[-1] if elifs else chain
            cond = last.child_by_field_name("condition")
            if cond is not None:
                out.append(cond)
        child, n = n, n.parent
    return out


def _compiling_run(ctx, node, body, deliberate: bool):
    """The run of a configuration in which Triton compiles `node`, as far as the shape engine knows:
    every `if` around it is decided there (a constexpr the configuration gives) or is a runtime
    condition (both arms are compiled). An undecided compile-time condition or an unknown one
    may prune it: no finding. A `raise` under any compile-time condition is a deliberate
    compile-time error (the branch exists to refuse a configuration), never reported."""
    if _nested(node, body) or _after_return(node, body):
        return None
    conds = _arm_conditions(node, body)
    for run in ctx.shapes.results():
        if not run.executes(node):
            continue
        kinds = [_condition_kind(run.at(c)) for c in conds]
        if "unknown" in kinds or "compile-time" in kinds:
            continue
        if deliberate and "decided" in kinds:
            continue
        return run
    return None


def _condition_kind(a) -> str:
    if a is None or a.kind == "unknown":
        return "unknown"
    if a.kind == "tensor" and not a.weak:
        return "runtime"
    return "decided" if a.constant else "compile-time"


def _in_loop(node, body) -> bool:
    n = node.parent
    while n is not None and n != body:
        if n.type in ("for_statement", "while_statement"):
            return True
        if n.type in ("function_definition", "lambda"):
            return False
        n = n.parent
    return False


def _plain_functions(ctx) -> set[str]:
    from ..model import top_level_definitions

    cached = ctx.module.memo.get("tl019.plain_functions")
    if cached is not None:
        return cached
    out = ctx.module.memo["tl019.plain_functions"] = set()
    src = ctx.module.src
    for outer, fn, decorators in top_level_definitions(src):
        name = fn.child_by_field_name("name")
        if name is not None and not decorators:
            out.add(src.text_of(name))
    return out


def check(ctx: KernelContext):
    k, src = ctx.kernel, ctx.src
    body = k.node.child_by_field_name("body")
    if body is None:
        return
    params = k.node.child_by_field_name("parameters")
    for p in (params.named_children if params else []):
        # `*args` compiles (Triton 3.9 binds nothing to it); `**kwargs` is refused when the
        # decorator runs: "JIT functions do not support **kwargs parameters".
        if p.type == "dictionary_splat_pattern":
            yield ctx.finding(src.range(p), f"{mt.clip(src.text_of(p), 30)}: @triton.jit refuses ** parameters "
                              "(TypeError at import); name each parameter", data={"construct": "**kwargs"})
    for node in captures(body, _QUERY, "n"):
        f = _construct_finding(ctx, node, body)
        run = _compiling_run(ctx, node, body, deliberate=node.type == "raise_statement") if f is not None else None
        if run is not None:
            # the constexprs of a configuration whose compilation meets the construct
            f.data["constexprs"] = {} if run.config is None else {
                p.name: run.config.get(p.name) for p in k.params if p.is_constexpr and run.config.get(p.name) is not UNKNOWN}
            yield f


def _construct_finding(ctx, node, body):
    """The finding `node` gives if Triton compiles it; None when it is a construct Triton takes."""
    k, src = ctx.kernel, ctx.src
    t = node.type
    if t in CONSTRUCTS:
        what, instead = CONSTRUCTS[t]
        rng = src.range(node)
        if t in ("function_definition", "class_definition", "try_statement", "for_statement"):
            rng = src.line_range(node.start_point[0])
        return ctx.finding(rng, f"{what} in @triton.jit code: Triton rejects it; {instead}",
                           data={"construct": t})
    if t == "with_statement":
        items = [c for c in captures(node, "(with_item) @w", "w") if c.parent is not None and c.parent.parent == node]
        for item in items:
            value = item.named_children[0] if item.named_children else None
            if value is not None and value.type == "as_pattern":
                value = value.named_children[0] if value.named_children else None
            fn = value.child_by_field_name("function") if value is not None and value.type == "call" else None
            dotted = dotted_name(fn, src) if fn is not None else None
            if dotted and (ctx.module.aliases.tl_function(dotted) or ctx.module.aliases.triton_attr(dotted)):
                continue
            return ctx.finding(src.line_range(node.start_point[0]),
                               f"{mt.code('with ' + (src.text_of(value) if value is not None else ''))} in @triton.jit "
                               "code: Triton only lowers its own context managers", data={"construct": "with"})
        return None
    if t == "return_statement":
        if not _in_loop(node, body):
            return None
        return ctx.finding(src.range(node), "return inside a loop in @triton.jit code: Triton rejects it; "
                           "set a flag and return after the loop", data={"construct": "return-in-loop"})
    if t in ("for_statement", "while_statement"):
        alt = node.child_by_field_name("alternative")
        if alt is None:
            return None
        row, col = alt.start_point
        return ctx.finding(Range(src.pos((row, col)), src.pos((row, col + 4))),
                           f"{'for' if t == 'for_statement' else 'while'} … else in @triton.jit code: Triton rejects a loop's "
                           "else; put that code after the loop", data={"construct": "loop-else"})
    if t == "call":
        fn = node.child_by_field_name("function")
        if fn is None or fn.type != "identifier":
            return None
        name = src.text_of(fn)
        if name in _plain_functions(ctx) and name not in k.assignments and k.param(name) is None:
            return ctx.finding(src.range(fn), mt.fit(f"{mt.clip(name, 30)} is a plain Python function, which @triton.jit "
                                                     "code cannot call", "; decorate it with @triton.jit"),
                               data={"construct": "plain-call", "function": name})
    return None
