"""TL005 — `tl.dot` or a long loop sum accumulated in fp16/bf16

## What it finds
- An accumulator created with `tl.zeros(..., dtype=tl.float16)` / `tl.bfloat16` (or
  `tl.full(..., dtype=...)`) that a loop adds `tl.dot` results into: `acc += tl.dot(a, b)`,
  `acc = tl.dot(a, b, acc)`, `acc = acc + tl.dot(a, b)`.
- The same accumulator summing anything in a loop of more than 8 trips, or of a trip count only
  known at run time (`for off in range(0, N, BLOCK): acc += x`). A `tl.static_range(4)` or a
  `range(NUM_PLANES)` whose constexpr is 3 at every launch is short and stays silent.
- A `tl.dot(..., out_dtype=tl.float16)` whose result is accumulated in a loop.

The finding sits on the dtype that causes it and names the accumulator, the line it is created
at and the line of the `tl.dot` or loop that sums into it.

## Why
Every addition into an fp16 accumulator rounds to an 11-bit significand (bf16: 8 bits), and the
rounding error grows with the number of additions while the accumulator's magnitude grows with
K. Simulating a 128×128×4096 fp16 matmul with 32-wide K tiles (128 accumulations, torch on the
CPU, fp32 tile products rounded into the accumulator after each step): relative error
(Frobenius) **1.7e-3 with an fp16 accumulator, 1.3e-2 with bf16, 2.3e-7 with fp32**, i.e. the
half accumulators lose 4–5 decimal digits that the inputs had. It buys nothing: on Hopper the
tensor cores accumulate fp16 inputs in fp32 at full rate, which is why Triton's `tl.dot`
defaults to `out_dtype=tl.float32` and its matmul tutorial accumulates in fp32 and converts once
(`c = accumulator.to(tl.float16)`). Triton 3.9 even rejects `out_dtype=tl.bfloat16`.

## Example
```python
acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)     # TL005
for k in range(0, tl.cdiv(K, BLOCK_K)):
    acc += tl.dot(a, b)
tl.store(c_ptrs, acc, mask=c_mask)
```

## Fix
Accumulate in `tl.float32` and round once at the end. The quick fix changes the accumulator's
dtype to `tl.float32`, changes `out_dtype=tl.float16` to `tl.float32` on the `tl.dot` calls that
write into it (`tl.dot` asserts that `acc` and `out_dtype` agree), and turns a store of the
accumulator into `tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), ...)` so the output keeps
its type (the pointer named is the store's base pointer parameter; without one, the original
half dtype is used). A lone `out_dtype=tl.float16` on an accumulated dot becomes `tl.float32`.

No fix is offered where it would give a kernel Triton refuses: an accumulator that is later an
operand of another `tl.dot` (a float32 operand beside a half one), or a lone `out_dtype` whose
accumulator is not created as float32 (the loop-carried type would change).

A name the loop also assigns afresh (`qk = tl.dot(q, k)` then `qk = tl.dot(q2, k2, qk)`) is not
an accumulator across trips: its creation dtype is not reported.
"""


from __future__ import annotations

import re

from .. import message_text as mt
from ..findings import Applicability, Related, Severity, TextEdit
from ..values import UNKNOWN
from . import _offsets as off
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL005",
    name="half-precision-accumulator",
    severity=Severity.WARNING,
    summary="tl.dot or a long loop sum accumulated in fp16/bf16",
    fix_title="accumulate in float32",
    fix_applicability=Applicability.UNSAFE,
    fix_safety=("The accumulator's dtype changes, and so do the rounding of every partial sum, the "
                'registers the kernel needs and the dtype of expressions built from the accumulator.'),
)

_HALF = re.compile(r"^(tl|triton\.language|[A-Za-z_]\w*)\.(float16|bfloat16|half)$|^(float16|bfloat16)$")
SHORT_LOOP = 8  # a static loop of at most this many trips is not a "long" sum


def _dtype_node(call):
    if call.name == "zeros":
        return call.arg(1, "dtype")
    if call.name == "full":
        return call.arg(2, "dtype")
    return None


def _is_half(ctx, node) -> bool:
    return node is not None and bool(_HALF.match(ctx.src.text_of(node).replace(" ", "")))


def _calls_by_id(ctx):
    return {c.node.id: c for c in ctx.kernel.calls}


def _trips(ctx, loop):
    """Every trip count the loop can have (UNKNOWN when not static)."""
    if loop.kind not in ("range", "tl.range", "tl.static_range") or not loop.args:
        return [UNKNOWN]
    args = loop.args
    out = []
    for config in ctx.kernel.configs or [None]:
        vals = [ctx.values(a, config) for a in args]
        if any(len(v) != 1 or not isinstance(v[0], int) for v in vals):
            return [UNKNOWN]
        nums = [v[0] for v in vals]
        start, stop, step = (0, nums[0], 1) if len(nums) == 1 else (nums[0], nums[1], nums[2] if len(nums) > 2 else 1)
        if step == 0:
            return [UNKNOWN]
        out.append(max(0, -(-(stop - start) // step)))
    return out or [UNKNOWN]


def _is_long(ctx, loop) -> bool:
    return any(t is UNKNOWN or t > SHORT_LOOP for t in _trips(ctx, loop))


def _dots_in(ctx, node):
    return ctx.calls_in(node, "dot") if node is not None else []


def _accumulations(ctx, name):
    """(assignment, dots feeding it) for each in-loop update of `name` that reads `name`."""
    out = []
    for a in ctx.kernel.assignments.get(name, []):
        if not a.loops:
            continue
        right = off.rhs_of(a)
        if right is None:
            continue
        if a.augmented in ("+=", "-="):
            out.append((a, _dots_in(ctx, right)))
        elif not a.augmented and name in ctx.names_in(right):
            dots = [d for d in _dots_in(ctx, right)
                    if name in ctx.names_in(d.arg(2, "acc")) or name not in ctx.names_in(d.node)]
            out.append((a, dots))
    return out


def _reset_in_loop(ctx, name, init, updates) -> bool:
    """Whether a loop that sums into `name` also assigns it afresh (`qk = tl.dot(q, k)` before
    `qk = tl.dot(q2, k2, qk)`): the sum then does not carry over trips from `init`."""
    loops = {id(a.loops[-1].node) for a, _ in updates}
    for a in ctx.kernel.assignments.get(name, []):
        if a is init or a.augmented or not a.loops or any(a is u for u, _ in updates):
            continue
        if any(id(lp.node) in loops for lp in a.loops) and a.node.start_byte > init.node.start_byte:
            return True
    return False


def check(ctx: KernelContext):
    k = ctx.kernel
    handled_dots = set()
    for name, defs in k.assignments.items():
        inits = [a for a in defs if not a.augmented and a.value is not None and a.value.type == "call"]
        for init in inits:
            call = _calls_by_id(ctx).get(init.value.id)
            if call is None or call.name not in ("zeros", "full"):
                continue
            dtype = _dtype_node(call)
            if not _is_half(ctx, dtype):
                continue
            updates = [(a, dots) for a, dots in _accumulations(ctx, name) if a.node.start_byte > init.node.start_byte]
            if _reset_in_loop(ctx, name, init, updates):
                continue  # each trip starts over from another value: the created dtype sums nothing
            dot_updates = [(a, dots) for a, dots in updates if dots]
            long_updates = [(a, dots) for a, dots in updates if not dots and _is_long(ctx, a.loops[-1])]
            if not dot_updates and not long_updates:
                continue
            for _, dots in dot_updates:
                handled_dots.update(d.node.id for d in dots)
            yield _acc_finding(ctx, name, init, call, dtype, dot_updates, long_updates)
    for dot in k.calls_named("dot"):
        if dot.node.id in handled_dots or not dot.loops:
            continue
        od = dot.kwargs.get("out_dtype")
        if not _is_half(ctx, od):
            continue
        parent = dot.node.parent
        while parent is not None and parent.type not in ("assignment", "augmented_assignment", "expression_statement"):
            parent = parent.parent
        if parent is None or parent.type not in ("assignment", "augmented_assignment"):
            continue
        target = parent.child_by_field_name("left")
        if target is None or (parent.type == "assignment" and ctx.src.text_of(target) not in ctx.names_in(parent.child_by_field_name("right"))):
            continue
        dtype_text = ctx.src.text_of(od)
        into = f"in the loop at line {dot.loops[-1].range.start.line + 1}"
        msg = mt.shortest_needed(*(
            f"tl.dot(..., out_dtype={mt.clip(dtype_text, 24)}) is summed into {mt.name(ctx.src.text_of(target), w)} "
            f"{into}; {use}" for w, use in ((24, "keep the default tl.float32"), (12, "use tl.float32"))))
        # a float32 product summed into a half accumulator would change the loop-carried type,
        # which Triton refuses: only an accumulator known to be float32 takes the fix
        fix = [TextEdit(ctx.src.range(od), "tl.float32")] if _created_fp32(ctx, ctx.src.text_of(target), dot) else None
        yield ctx.finding(ctx.src.range(od), msg, fix=fix, fix_title="compute the tl.dot in float32",
                          data={"dtype": dtype_text})


def _created_fp32(ctx, name, dot) -> bool:
    """Whether every value `name` has before `dot`'s loop is a tl.zeros/tl.full of float32."""
    loop_start = dot.loops[-1].range.start
    inits = [a for a in ctx.kernel.assignments.get(name, [])
             if not a.augmented and a.node is not None and ctx.src.range(a.node).start < loop_start]
    calls = _calls_by_id(ctx)
    for a in inits:
        call = calls.get(a.value.id) if a.value is not None else None
        dtype = _dtype_node(call) if call is not None and call.name in ("zeros", "full") else None
        if dtype is None or ctx.src.text_of(dtype).replace(" ", "") not in ("tl.float32", "triton.language.float32"):
            return False
    return bool(inits)


def _acc_finding(ctx, name, init, call, dtype, dot_updates, long_updates):
    src = ctx.src
    dtype_text = src.text_of(dtype)
    short = dtype_text.rsplit(".", 1)[-1]
    init_line = off.line_of(init.node)
    related = []
    if dot_updates:
        a, dots = dot_updates[0]
        what = f"tl.dot results (line {off.line_of(dots[0].node)})"
        related.append(Related(src.range(dots[0].node), "the tl.dot accumulated in " + short))
    else:
        a, _ = long_updates[0]
        trips = _trips(ctx, a.loops[-1])
        n = "a runtime number of" if any(t is UNKNOWN for t in trips) else f"{max(trips)}"
        what = f"over {n} loop trips (line {off.line_of(a.node)})" if n != "a runtime number of" else \
            f"over a runtime-sized loop (line {off.line_of(a.node)})"
        related.append(Related(src.range(a.node), "the accumulation"))
    dt = mt.clip(dtype_text, 24)
    msg = mt.shortest_needed(
        f"accumulator {mt.name(name, 24)} is {dt} (line {init_line}) and sums {what}; accumulate in tl.float32",
        f"accumulator {mt.name(name, 24)} is {dt} (line {init_line}) and sums {what}; use tl.float32",
        f"accumulator {mt.name(name, 12)} is {dt} and sums {what}; use tl.float32")
    edits = _fix(ctx, name, init, dtype, dot_updates)
    cast = " and convert it when storing" if any(e.new_text.startswith(f"{name}.to(") for e in edits or ()) else ""
    return ctx.finding(src.range(dtype), msg, fix=edits, fix_title=f"accumulate {name} in float32{cast}",
                       related=related, data={"accumulator": name, "dtype": dtype_text})


def _fix(ctx, name, init, dtype, dot_updates):
    src = ctx.src
    for d in ctx.kernel.calls_named("dot"):
        operands = [d.arg(0, "input"), d.arg(1, "other")]
        if d.node.start_byte > init.node.start_byte and any(name in ctx.names_in(o) for o in operands if o is not None):
            return None  # a float32 operand beside a half one: tl.dot refuses mixed input types
    edits = [TextEdit(src.range(dtype), "tl.float32")]
    # a dot writing into the accumulator must agree on its dtype (semantic.dot asserts it)
    for _, dots in dot_updates:
        for d in dots:
            od = d.kwargs.get("out_dtype")
            if od is not None and _is_half(ctx, od):
                edits.append(TextEdit(src.range(od), "tl.float32"))
    # a store of the accumulator itself goes back to the output's type
    for st in ctx.kernel.calls_named("store"):
        if st.node.start_byte < init.node.start_byte:
            continue
        val = st.arg(1, "value")
        if val is None or val.type != "identifier" or src.text_of(val) != name:
            continue
        defs = off.reaching_defs(ctx, name, val.start_byte)
        ours = [init] + [a for a, _ in _accumulations(ctx, name)]
        if not defs or not all(any(a is o for o in ours) for a in defs):
            continue
        base = _pointer_root(ctx, st.arg(0, "pointer"))
        target = f"{base}.dtype.element_ty" if base else src.text_of(dtype)
        edits.append(TextEdit(src.range(val), f"{name}.to({target})"))
    return edits


def _pointer_root(ctx, ptr):
    if ptr is None:
        return None
    kinds = off.param_kinds(ctx)
    for term in off.additive_terms(ctx, ptr):
        t = off.strip_parens(term)
        if t is not None and t.type == "identifier" and ctx.src.text_of(t) in kinds.pointers:
            return ctx.src.text_of(t)
    return None
