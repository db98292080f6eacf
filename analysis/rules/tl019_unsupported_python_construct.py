"""TL019 — Python construct Triton's compiler rejects

## What it finds
Inside a `@triton.jit` function: `try`/`except`, `raise`, `with` on anything but Triton's own
context managers, `lambda`, list/set/dict comprehensions, set and dict literals, `yield`,
`global`/`nonlocal`, nested `def`/`class`, `break`, `continue`, `del`, `return` inside a loop,
`for … else` / `while … else`, a `**kwargs` parameter, and calls of plain (undecorated) Python
functions of the same file.

Not reported, because Triton 3.9 compiles them: `assert` (device assert), `print`, chained
comparisons, `:=`, `*args` parameters, calls of `@triton.jit` helpers — and any construct in a
branch of an `if` whose condition depends on constexprs only (Triton prunes the untaken branch
without generating code for it, so `if MODE == 2: raise …` is fine).

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
# context managers) are not reported. A construct under an `if` on constexprs alone is not reported
# either: Triton prunes the untaken branch without looking at it.

from __future__ import annotations

from ..findings import Range, Severity
from ..source import captures, dotted_name
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL019",
    name="unsupported-python-construct",
    severity=Severity.ERROR,
    summary="a Python construct Triton's compiler rejects inside @triton.jit",
)

# node type → (what it is, what to do instead)
CONSTRUCTS = {
    "try_statement": ("`try`/`except`", "Triton has no exceptions: guard with masks or `tl.where`"),
    "raise_statement": ("`raise`", "use `tl.device_assert` (runtime) or `tl.static_assert` (compile time)"),
    "lambda": ("a `lambda`", "define a module-level @triton.jit function"),
    "list_comprehension": ("a list comprehension", "unroll with `tl.static_range` or build a tuple"),
    "set_comprehension": ("a set comprehension", "unroll with `tl.static_range`"),
    "dictionary_comprehension": ("a dict comprehension", "unroll with `tl.static_range`"),
    "set": ("a set literal", "use a tuple"),
    "dictionary": ("a dict literal", "pass values as separate (constexpr) arguments"),
    "yield": ("`yield`", "a kernel cannot be a generator: return values instead"),
    "global_statement": ("`global`", "pass the value as a (constexpr) argument"),
    "nonlocal_statement": ("`nonlocal`", "pass the value as an argument"),
    "function_definition": ("a nested function definition", "move it to module level and decorate it with @triton.jit"),
    "class_definition": ("a class definition", "define classes outside the kernel"),
    "break_statement": ("`break`", "Triton 3.9 has no `break`: fold the exit condition into the loop bounds or a mask"),
    "continue_statement": ("`continue`", "Triton 3.9 has no `continue`: wrap the rest of the body in an `if`"),
    "delete_statement": ("`del`", "just stop using the name"),
}
_QUERY = "[" + " ".join(f"({t})" for t in CONSTRUCTS) + " (with_statement) (return_statement) (for_statement) (while_statement) (call)] @n"


def _constexpr_only(ctx, cond) -> bool:
    names = ctx.names_in(cond)
    if not names:
        return True
    for n in names:
        p = ctx.kernel.param(n)
        if p is not None and p.is_constexpr:
            continue
        if n in ctx.module.constants or n in ("True", "False", "None", "tl", "triton"):
            continue
        if ctx.kernel.param(n) is None and n not in ctx.kernel.assignments:
            continue  # a module-level name (a constexpr global): also decided at compile time
        return False
    return True


def _pruned_or_nested(ctx, node, body) -> bool:
    """Inside a nested definition (reported once, at the definition) or under a constexpr `if`."""
    n = node.parent
    while n is not None and n != body:
        if n.type in ("function_definition", "class_definition", "lambda"):
            return True
        if n.type in ("if_statement", "elif_clause"):
            cond = n.child_by_field_name("condition")
            if cond is not None and not (cond.start_byte <= node.start_byte < cond.end_byte) and _constexpr_only(ctx, cond):
                return True
        n = n.parent
    return False


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
            yield ctx.finding(src.range(p), f"`{src.text_of(p)}`: @triton.jit refuses `**` parameters "
                              "(TypeError when the module is imported); name each parameter", data={"construct": "**kwargs"})
    plain = None
    for node in captures(body, _QUERY, "n"):
        t = node.type
        if _pruned_or_nested(ctx, node, body):
            continue
        if t in CONSTRUCTS:
            what, instead = CONSTRUCTS[t]
            rng = src.range(node)
            if t in ("function_definition", "class_definition", "try_statement", "for_statement"):
                rng = src.line_range(node.start_point[0])
            yield ctx.finding(rng, f"{what} inside @triton.jit `{k.name}`: Triton's compiler rejects it; {instead}",
                              data={"construct": t})
        elif t == "with_statement":
            items = [c for c in captures(node, "(with_item) @w", "w") if c.parent is not None and c.parent.parent == node]
            for item in items:
                value = item.named_children[0] if item.named_children else None
                if value is not None and value.type == "as_pattern":
                    value = value.named_children[0] if value.named_children else None
                fn = value.child_by_field_name("function") if value is not None and value.type == "call" else None
                dotted = dotted_name(fn, src) if fn is not None else None
                if dotted and (k and (ctx.module.aliases.tl_function(dotted) or ctx.module.aliases.triton_attr(dotted))):
                    continue
                yield ctx.finding(src.line_range(node.start_point[0]),
                                  f"`with {src.text_of(value) if value is not None else ''}` inside @triton.jit `{k.name}`: "
                                  "Triton only lowers its own context managers", data={"construct": "with"})
                break
        elif t == "return_statement":
            if _in_loop(node, body):
                yield ctx.finding(src.range(node), f"`return` inside a loop of @triton.jit `{k.name}`: Triton rejects it; "
                                  "set a flag or restructure so the return comes after the loop", data={"construct": "return-in-loop"})
        elif t in ("for_statement", "while_statement"):
            alt = node.child_by_field_name("alternative")
            if alt is not None:
                row, col = alt.start_point
                yield ctx.finding(Range(src.pos((row, col)), src.pos((row, col + 4))),
                    f"`{'for' if t == 'for_statement' else 'while'} … else` in @triton.jit `{k.name}`: Triton rejects the "
                    "`else` of a loop; put that code after the loop", data={"construct": "loop-else"})
        elif t == "call":
            fn = node.child_by_field_name("function")
            if fn is None or fn.type != "identifier":
                continue
            name = src.text_of(fn)
            if plain is None:
                plain = _plain_functions(ctx)
            if name in plain and name not in k.assignments and k.param(name) is None:
                yield ctx.finding(src.range(fn), f"`{name}` is a plain Python function: @triton.jit `{k.name}` can only call "
                                  f"other @triton.jit functions and Triton builtins; decorate `{name}` with @triton.jit",
                                  data={"construct": "plain-call", "function": name})
