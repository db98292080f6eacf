"""TL008 — matmul tile sizes / num_warps hard-coded at the launch, no autotuning

## What it finds
A launch `kernel[grid](...)` of a kernel that calls `tl.dot` and has no `@triton.autotune`, passing
tile-size constexprs (`BLOCK*`, `*_SIZE`, `BM`/`BN`/`BK`, `TILE*`) and/or `num_warps` as fixed
numbers: a literal at the launch (`BLOCK_M=32`, `num_warps=4`), a wrapper constant assigned once
before it (`BLOCK_SIZE = 64`, `BLOCK_M, BLOCK_N = 32, 32`) or a module constant. One finding per
launch, on its fixed arguments; the message lists the values, the related locations say where each
was set (`num_stages` is named too when fixed).

Silent for kernels without `tl.dot` (an element-wise kernel or a memset moves at most a few tens of
percent with its block size; TL015 reports blocks that are too small), values derived from the
problem (`triton.next_power_of_2(n_cols)`), values chosen per case (assigned under an `if`, in a
loop, or more than once before the launch), values the wrapper's caller passes in, constexprs a
`@triton.heuristics` computes, group sizes (`GROUP_M`, a quantization group), model dimensions
(`HEAD_DIM`, `HIDDEN_SIZE`, …), and kernels whose launch is not in the file.

## Why
The best tile and warp count depend on the problem shape and the GPU, and the spread is large.
Measured on our H100 (shared figures): the tutorial fp16 matmul at 4096³ runs at 89 TFLOP/s with
32×32×32 tiles, 4 warps, 1 stage and at 691 TFLOP/s with 128×256×64, 8 warps, 4 stages —
7.8×, 97% of cuBLAS; an fp32 vector add moves 1.27 TB/s at BLOCK=64 and 3.02 TB/s at BLOCK=256
(2.4×), while num_warps=16 with BLOCK=128 drops to 1.03 TB/s. A single hard-coded choice is right
for at most one of these shapes. `@triton.autotune` benchmarks a list of `triton.Config` once per
distinct `key` value and caches the winner. The rule is off by default: on real projects a fixed
configuration is mostly a deliberate choice for the shapes the code serves.

## Example
```python
matmul_kernel[grid](a, b, c, M, N, K, ...,
                    BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, num_warps=4, num_stages=1)   # TL008
```

## Fix
Move the choices into `@triton.autotune(configs=[triton.Config({...}, num_warps=..., num_stages=...), ...], key=[...sizes...])`,
drop them from the launch, and make the grid a function of the chosen meta-parameters
(`grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)`). Where one value is right by
construction (a row that must fit in one block), derive it from the shape instead of a literal.
"""

from __future__ import annotations

import re

from .. import message_text as mt
from ..findings import Related, Severity
from ..source import walk
from . import _offsets as off
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL008",
    name="hardcoded-launch-config",
    severity=Severity.INFO,
    summary="matmul tile sizes / num_warps hard-coded at the launch with no @triton.autotune",
    default=False,
    off_because="judged 3 of 20 findings true on real code",
)

# GROUP_M (the swizzle) and quantization group sizes are fixed on purpose: not tile choices.
_TILE = re.compile(r"BLOCK|^TILE|_SIZE$|^B[MNKD]$", re.IGNORECASE)
_NOT_TILE = re.compile(r"GROUP", re.IGNORECASE)
# model dimensions are fixed by the model, not tunable tile sizes
_MODEL_DIM = re.compile(r"HEAD|DIM|VOCAB|HIDDEN|EMBED|FEAT|CHANNEL|SEQ|BATCH", re.IGNORECASE)
_OPTIONS = ("num_warps", "num_stages")
_MATMUL = ("dot", "dot_scaled")  # where the tile choice moves throughput several-fold
MESSAGE_VALUES = 36  # characters of `NAME=value` a message lists before '…'



def _is_tile_name(name: str) -> bool:
    return bool(_TILE.search(name)) and not _MODEL_DIM.search(name) and not _NOT_TILE.search(name)


def _literal(ctx, node, launch, depth=0):
    """(value text, where) when `node` is an integer literal, or a name the wrapper (or the module)
    binds to one before the launch; None when it is computed (next_power_of_2(n), a parameter, …)."""
    src = ctx.src
    node = off.strip_parens(node)
    if node is None or depth > 4:
        return None
    if node.type == "integer":
        return src.text_of(node), "a literal at the launch"
    if node.type != "identifier":
        return None
    name = src.text_of(node)
    if launch.wrapper is not None:
        params, assignments = _wrapper_facts(src, launch.wrapper)
        if name in params:
            return None  # the caller chooses it
        binds = [(n, v) for n in assignments if n.start_byte < launch.node.start_byte
                 for v in [_bound_value(n, name, src)] if v is not None]
        if len(binds) > 1 or any(_chosen(n, launch.wrapper) for n, _ in binds):
            return None  # chosen per case (`if BLOCK >= 2048: num_warps = 8`), not hard-coded
        last = binds[-1] if binds else None
        if last is not None:
            stmt, value = last
            value = off.strip_parens(value)
            if value is not None and value.type == "integer":
                return src.text_of(value), f"{mt.code(src.text_of(stmt))} at line {off.line_of(stmt)}"
            if value is not None and value.type == "identifier":
                return _literal(ctx, value, launch, depth + 1)
            return None
    for right in ctx.module.constants.get(name, [])[-1:]:
        r = off.strip_parens(right)
        if r is not None and r.type == "integer":
            return src.text_of(r), f"the module constant at line {off.line_of(r)}"
    return None


def _wrapper_facts(src, wrapper) -> tuple[set, list]:
    """The wrapper's parameter names and its own assignments in order (nested definitions
    excluded), read once per wrapper: every tile and option of every launch asks."""
    memo = src.memo_for("tl008.wrapper")
    facts = memo.get(wrapper)
    if facts is None:
        params = wrapper.child_by_field_name("parameters")
        body = wrapper.child_by_field_name("body")
        assignments = [n for n in walk(body, stop_at=("function_definition", "lambda", "class_definition"))
                       if n.type == "assignment"] if body is not None else []
        facts = memo[wrapper] = (off.names_in_text(params, src) if params is not None else set(), assignments)
    return facts


def _chosen(assign, wrapper) -> bool:
    """Whether `assign` runs only in some cases: inside an `if`, a loop or a `try` of the wrapper."""
    p = assign.parent
    while p is not None and p.id != wrapper.id:
        if p.type in ("if_statement", "elif_clause", "else_clause", "for_statement", "while_statement",
                      "try_statement", "match_statement"):
            return True
        p = p.parent
    return False


def _bound_value(assign, name, src):
    """The value `assign` gives `name`: `X = v` or `A, X = a, v`; None when it does not bind it."""
    left, right = assign.child_by_field_name("left"), assign.child_by_field_name("right")
    if left is None or right is None:
        return None
    if left.type == "identifier":
        return right if src.text_of(left) == name else None
    if left.type in ("pattern_list", "tuple_pattern") and right.type in ("expression_list", "tuple"):
        targets = [c for c in left.named_children]
        values = [c for c in right.named_children]
        if len(targets) == len(values):
            for t, v in zip(targets, values):
                if t.type == "identifier" and src.text_of(t) == name:
                    return v
    return None


def check(ctx: KernelContext):
    k = ctx.kernel
    if k.autotuned or not k.launches or not k.calls_named(*_MATMUL):
        return
    tiles = [p for p in k.params if p.is_constexpr and _is_tile_name(p.name) and p.name not in k.heuristics]
    for launch in k.launches:
        fixed = []  # (name, value, where, node)
        for p in tiles:
            node = launch.kwargs.get(p.name)
            if node is None and p.index < len(launch.args):
                node = launch.args[p.index]
            if node is None:
                continue
            lit = _literal(ctx, node, launch)
            if lit is not None:
                fixed.append((p.name, lit[0], lit[1], node))
        options = []
        for opt in _OPTIONS:
            node = launch.kwargs.get(opt)
            if node is not None:
                lit = _literal(ctx, node, launch)
                if lit is not None:
                    options.append((opt, lit[0], lit[1], node))
        if not fixed and not any(o[0] == "num_warps" for o in options):
            continue
        yield _finding(ctx, launch, fixed, options)


def _finding(ctx, launch, fixed, options):
    src = ctx.src
    everything = fixed + options
    nodes = [n for *_, n in everything]
    first = min(nodes, key=lambda n: n.start_byte)
    last = max(nodes, key=lambda n: n.end_byte)
    start, end = first, last
    # name the keyword too (`BLOCK_M=32`), not only its value
    if first.parent is not None and first.parent.type == "keyword_argument":
        start = first.parent
    values = ", ".join(f"{name}={value}" for name, value, _, _ in everything)
    if len(values) > MESSAGE_VALUES:
        values = values[:MESSAGE_VALUES].rsplit(", ", 1)[0] + ", …"
    msg = f"matmul launch fixes {values} with no @triton.autotune: one choice for every shape and GPU"
    related = [Related(src.range(n), f"{name}={value} ({where})") for name, value, where, n in everything]
    return ctx.finding(src.span(start, end), msg, related=related,
                       data={"fixed": {n: v for n, v, _, _ in everything}})
