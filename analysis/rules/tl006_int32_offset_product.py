"""TL006 — program id × runtime stride kept in int32

## What it finds
A product in an address (`tl.load`/`tl.store`/atomic pointer, directly or through local
variables and `X += ...`) whose one factor comes from `tl.program_id` and whose other factor is a
runtime integer parameter: `row * stride`, `pid * n_cols`, `offs_m[:, None] * stride_am`, with
no `.to(tl.int64)` / `tl.int64` anywhere in the chain. The message names the product, the
`program_id` line and the runtime factor.

Silent for products by constexprs (`pid * BLOCK_SIZE`: the grid bounds it by the size), for
products without a program id, when a cast to int64 already appears, and for a tile's axis
multiplied by the innermost stride (passed as `t.stride(-1)` / `t.stride(1)` at every visible
launch, or `offs_n[None, :] * stride_bn` when no launch is visible), whose product stays below
that dimension's size.

## Why
Triton computes `program_id` and integer kernel arguments in int32 (arguments are specialised
to i64 only when the value itself is ≥ 2**31). `row * stride` wraps once the tensor holds more
than 2**31 − 1 elements before that row — 8 GiB of fp32, 4 GiB of fp16 — which today's 80–141
GB GPUs hold easily (a 65536 × 65536 fp16 matrix, a long-context KV cache). The wrapped offset is
negative or small, so the kernel reads or writes the wrong rows without any error. The Triton
matmul tutorial and the fused-attention kernels widen their offsets for this reason
(`.to(tl.int64)`); the cost is a 64-bit multiply-add per program, nothing on a memory-bound
kernel.

## Example
```python
row = tl.program_id(0)
row_ptr = in_ptr + row * in_row_stride          # TL006
```

## Fix
Widen before multiplying. The quick fix widens at the source when the program id is assigned on
its own (`row = tl.program_id(0).to(tl.int64)`, which covers every product derived from it),
casts an inline `tl.program_id(0).to(tl.int64) * stride`, and otherwise casts the factor in the
product (`offs_m[:, None].to(tl.int64) * stride_am`). It uses the file's alias for
`triton.language`.
"""

from __future__ import annotations

from ..findings import Applicability, Range, Related, Severity, TextEdit
from . import _offsets as off
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL006",
    name="int32-offset-product",
    severity=Severity.INFO,
    summary="program_id × runtime-stride offset kept in int32 (no int64 cast)",
    fix_title="compute the offset in int64",
    fix_applicability=Applicability.SAFE,
    fix_safety=('Every value that fitted in int32 is unchanged in int64; only the offsets that overflowed, '
                'and were wrong, change.'),
)


def _factors(ctx, node, depth=0):
    node = off.strip_parens(node)
    if node is not None and depth < 12 and node.type == "binary_operator" and ctx.src.text_of(node.child_by_field_name("operator")) == "*":
        return _factors(ctx, node.child_by_field_name("left"), depth + 1) + _factors(ctx, node.child_by_field_name("right"), depth + 1)
    return [node] if node is not None else []


def _pointer_exprs(ctx):
    k = ctx.kernel
    out = []
    for call in k.calls:
        if call.name in off.MEMORY_OPS + off.ATOMIC_OPS:
            ptr = call.arg(0, "pointer")
            if ptr is not None:
                out.append(ptr)
    return out


def _int64_params(ctx):
    return {p.name for p in ctx.kernel.params if p.annotation and "int64" in p.annotation}


def check(ctx: KernelContext):
    kinds = off.param_kinds(ctx)
    if not kinds.runtime or not ctx.kernel.calls_named("program_id"):
        return
    wide = _int64_params(ctx)
    seen = set()
    for ptr in _pointer_exprs(ctx):
        for term in off.additive_terms(ctx, ptr):
            t = off.strip_parens(term)
            if t is None or t.id in seen or t.type != "binary_operator":
                continue
            factors = _factors(ctx, t)
            if len(factors) < 2:
                continue
            pid_side, runtime_side = None, None
            for f in factors:
                if off.is_fed(ctx, f, "program_id"):
                    pid_side = pid_side or f
                else:
                    rt = off.runtime_params_in(ctx, f)
                    if rt and not (set(rt) & wide):
                        runtime_side = runtime_side or (f, rt)
            if pid_side is None or runtime_side is None:
                continue
            if "int64" in off.chain_text(ctx, t):
                continue
            if _inner_axis_stride(ctx, pid_side, runtime_side[1]):
                continue
            seen.add(t.id)
            yield _finding(ctx, t, pid_side, runtime_side)


def _inner_axis_stride(ctx, pid_side, names) -> bool:
    """A tile axis times the innermost stride (`t.stride(-1)`, or `t.stride(1)` for a 2-D tile,
    at every visible launch; or `offs_n[None, :] * stride_bn` with no launch to ask) stays below
    that dimension's size: not worth an int64 cast. A last axis the launch multiplies by
    `t.stride(0)` is large (and TL007 reports the access)."""
    info = off.term_info(ctx, pid_side)
    if info.ndim != 2:
        return False
    dims = [off.stride_dim(ctx, node) for n in names for _launch, node in off.launch_args(ctx, n)]
    if dims:
        return all(d in (-1, 1) for d in dims)
    return info.axis == 1


def _finding(ctx, product, pid_side, runtime_side):
    src = ctx.src
    rt_node, rt_names = runtime_side
    pids = off.feeds(ctx, pid_side, "program_id")
    pid_line = off.line_of(pids[0].node)
    stride = ", ".join(f"`{n}`" for n in rt_names)
    through = "" if off.strip_parens(pid_side).id == pids[0].node.id else f", through `{src.text_of(pid_side)}`"
    msg = (f"`{src.text_of(product)}` multiplies the program id (tl.program_id at line {pid_line}{through}) by the runtime {stride} in int32: once the offset passes 2**31 - 1 elements "
           f"(8 GiB of fp32) it wraps and the access lands at the wrong address; compute it in int64")
    related = [Related(src.range(pids[0].node), "the program id")]
    p = ctx.kernel.param(rt_names[0])
    if p is not None:
        related.append(Related(p.range, "the runtime factor"))
    return ctx.finding(src.range(product), msg, fix=_fix(ctx, pid_side, pids), related=related,
                       data={"factors": rt_names})


def _fix(ctx, pid_side, pids):
    """Widen at the source: `pid = tl.program_id(0)` → `tl.program_id(0).to(tl.int64)` when the
    program id is assigned on its own; otherwise cast the factor in the product."""
    src = ctx.src
    fn = pids[0].node.child_by_field_name("function")
    prefix = src.text_of(fn).rsplit(".", 1)[0] if fn is not None and "." in src.text_of(fn) else "tl"
    cast = f".to({prefix}.int64)"
    if len(pids) == 1:
        call = pids[0].node
        parent = call.parent
        if parent is not None and parent.type == "assignment" and parent.child_by_field_name("right").id == call.id:
            end = src.pos(call.end_point)
            return [TextEdit(Range(end, end), cast)]
        if off.strip_parens(pid_side).id == call.id:
            end = src.pos(call.end_point)
            return [TextEdit(Range(end, end), cast)]
    node = pid_side
    end = src.pos(node.end_point)
    if node.type in ("identifier", "subscript", "call", "attribute", "parenthesized_expression"):
        return [TextEdit(Range(end, end), cast)]
    start = src.pos(node.start_point)
    return [TextEdit(Range(start, start), "("), TextEdit(Range(end, end), ")" + cast)]

