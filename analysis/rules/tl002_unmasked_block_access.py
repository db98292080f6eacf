"""TL002 — unmasked load/store at block offsets in a kernel that takes a size

## What it finds
A `tl.load` or `tl.store` whose address is built from `tl.program_id` and `tl.arange` (or a
block pointer from `tl.make_block_ptr` offset by the program id) and that has neither a `mask`
nor a `boundary_check`, in a kernel that receives a size bound: a runtime integer parameter
named like a size (`n`, `n_elements`, `N`, `M`, `K`, `n_cols`, `numel`, `seq_len`, …) or one the
kernel compares against. The message names the size parameter(s) and the lines of the
`program_id` and `arange` the offsets come from.

It stays silent when the kernel takes no size at all (the launch may cover the data exactly by
construction), when the access sits under an `if` on a constexpr, a heuristic or the size
(`if EVEN_K:`, `if start + BLOCK <= n:` fast paths), and for per-program scalars
(`tl.store(mean_ptr + row, m)`) that carry no `arange`.

## Why
The grid is `cdiv(n, BLOCK)` programs, so unless `n` is a multiple of `BLOCK` the last program's
block overhangs the tensor. Triton does not bounds-check: an unmasked load past the end reads
whatever lies there (or faults with an illegal address), and an unmasked store silently corrupts
the neighbouring allocation. The Triton tutorials' vector add masks for exactly this reason
("guard memory operations against out-of-bounds accesses", 01-vector-add). A mask costs
nothing measurable on a memory-bound kernel: on our H100 the masked vector add reaches
2.99 TB/s at BLOCK=1024, 100% of the 2.97 TB/s device copy ceiling (docs: shared H100 figures).

## Example
```python
@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, alpha, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)                # TL002: no mask, n_elements ignored
    tl.store(out_ptr + offsets, x * alpha)      # TL002
```

## Fix
Mask with the bound: `tl.load(x_ptr + offsets, mask=offsets < n_elements)` and the same mask on
the store. The quick fix does this when the address is `ptr + offs` with 1-D offsets and the
kernel has one size bound; it reuses a `mask = offs < n` variable when the kernel has one. For a
block pointer pass `boundary_check=(0, 1)` (and `padding_option="zero"` on loads). If the size is
a multiple of the block by contract, say so with a `@triton.heuristics` `EVEN_N` flag and an
`if EVEN_N:` fast path, or suppress the line with `# tritonlens: ignore[TL002]`.
"""

from __future__ import annotations

import re

from ..findings import Applicability, Range, Related, Severity, TextEdit
from ..source import walk
from . import _offsets as off
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL002",
    name="unmasked-block-access",
    severity=Severity.WARNING,
    summary="tl.load/tl.store at program_id/arange offsets with no mask while the kernel takes a size bound",
    fix_title="mask the access with the size bound",
    fix_applicability=Applicability.UNSAFE,
    fix_safety=("The bound is the kernel's size parameter as the rule infers it; when the kernel has "
                'several sizes, or the access runs along a different axis, the mask may name the wrong one.'),
)

# Names that say "how many": n, N, M, K, n_elements, numel, seq_len, n_cols, num_tokens, …
_SIZE_NAME = re.compile(r"^(n|N|M|K|L|numel|size|length)$|^(n|num)_|numel|elements|_size$|^size_|(^|_)len(gth)?$|^(n|N)[A-Z_]")
_NOT_SIZE = re.compile(r"stride|eps|scale|seed|alpha|beta|ptr|offset|^p$|prob|temp|momentum", re.IGNORECASE)


def _size_params(ctx: KernelContext) -> list[str]:
    kinds = off.param_kinds(ctx)
    compared = set()
    for node in walk(ctx.kernel.node):
        if node.type == "comparison_operator":
            compared |= off.names_in_text(node, ctx.src)
    out = []
    for p in ctx.kernel.params:
        if p.name not in kinds.runtime or _NOT_SIZE.search(p.name):
            continue
        if p.annotation and "float" in p.annotation:
            continue
        if _SIZE_NAME.search(p.name) or p.name in compared:
            out.append(p.name)
    return out


def _mask_node(call):
    if call.name == "load":
        return call.arg(1, "mask")
    return call.arg(2, "mask")


def check(ctx: KernelContext):
    k = ctx.kernel
    sizes = None
    for call in k.calls_named("load", "store"):
        ptr = call.arg(0, "pointer")
        if ptr is None or _mask_node(call) is not None or "boundary_check" in call.kwargs:
            continue
        if call.name == "load" and len(call.args) > 3:
            continue  # positional boundary_check
        if not off.is_fed(ctx, ptr, "program_id"):
            continue
        block_ptrs = ctx.definition_calls(ptr, "make_block_ptr", "advance")
        pids = off.feeds(ctx, ptr, "program_id")
        aranges = off.feeds(ctx, ptr, "arange")
        if not pids or not (aranges or block_ptrs):
            continue
        if sizes is None:
            sizes = _size_params(ctx)
        if not sizes:
            return  # no size bound: the launch may be exact by construction
        guards = off.enclosing_conditions(call.node)
        guard_names = set().union(*(ctx.depends_on(g) for g in guards)) if guards else set()
        kinds = off.param_kinds(ctx)
        if guard_names & (kinds.constexpr | set(sizes) | set(k.heuristics)):
            continue  # an `if EVEN_K:` / `if start + BLOCK <= n:` fast path: the guard is the mask
        yield _finding(ctx, call, ptr, pids, aranges, block_ptrs, sizes)


def _finding(ctx, call, ptr, pids, aranges, block_ptrs, sizes):
    src = ctx.src
    what = "tl.load" if call.name == "load" else "tl.store"
    pid_line = off.line_of(pids[0].node)
    if block_ptrs and not aranges:
        origin = f"a block pointer (tl.make_block_ptr at line {off.line_of(block_ptrs[0].node)}) offset by tl.program_id at line {pid_line}"
        remedy = "pass boundary_check=(0, 1) (and padding_option=\"zero\" on loads)"
    else:
        origin = f"offsets from tl.program_id (line {pid_line}) and tl.arange (line {off.line_of(aranges[0].node)})"
        remedy = "mask it"
    size_list = ", ".join(f"`{s}`" for s in sizes)
    msg = (f"{what} at {origin} has no mask, but {ctx.kernel.name} takes the size bound {size_list}: "
           f"lanes past the end are read or written wherever the size is not a multiple of the block; {remedy}")
    related = [Related(src.range(pids[0].node), "the program id the offsets come from")]
    p = ctx.kernel.param(sizes[0])
    if p is not None:
        related.append(Related(p.range, "the size bound"))
    edits = None if block_ptrs else _fix(ctx, call, ptr, sizes)
    return ctx.finding(src.range(call.node), msg, fix=edits, related=related,
                       data={"sizes": sizes, "access": call.name})


def _fix(ctx, call, ptr, sizes):
    """`p + offs` with 1-D offsets and one size bound → `mask=offs < n` (reusing a `mask`
    variable of the kernel that already says exactly that)."""
    src = ctx.src
    if len(sizes) != 1:
        return None
    expr = off.strip_parens(ptr)
    if expr is None or expr.type != "binary_operator" or src.text_of(expr.child_by_field_name("operator")) != "+":
        return None
    kinds = off.param_kinds(ctx)
    sides = [off.strip_parens(expr.child_by_field_name("left")), off.strip_parens(expr.child_by_field_name("right"))]
    if any(x is None or x.type != "identifier" for x in sides):
        return None
    names = [src.text_of(x) for x in sides]
    offs_nodes = [x for x, nm in zip(sides, names) if nm not in kinds.pointers]
    if len(offs_nodes) != 1:
        return None
    leaf = offs_nodes[0]
    if not ctx.definition_calls(leaf, "arange") or any(t.ndim for t in off.pointer_terms(ctx, leaf)):
        return None
    offs, n = src.text_of(leaf), sizes[0]
    cond = f"{offs} < {n}"
    mask_expr = cond
    for name, defs in ctx.kernel.assignments.items():
        if len(defs) == 1 and defs[0].value is not None and src.text_of(defs[0].value).replace(" ", "") == cond.replace(" ", "") \
                and defs[0].node.start_byte < call.node.start_byte:
            mask_expr = name
            break
    args = call.node.child_by_field_name("arguments")
    last = [a for a in (args.named_children if args is not None else []) if a.type != "comment"]
    if not last:
        return None
    pos = src.pos(last[-1].end_point)
    return [TextEdit(Range(pos, pos), f", mask={mask_expr}")]
