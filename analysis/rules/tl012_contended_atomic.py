"""TL012 — contended atomics

## What it finds
- a `tl.atomic_*` inside a `for`/`while` loop whose address is the same on every iteration (it
  depends on nothing the loop assigns): the iterations' updates can be summed in registers and
  sent as one atomic after the loop. An atomic whose address moves with the loop (a row per
  iteration; a histogram bin from loaded data is the third case) cannot be hoisted and is not
  reported here; neither is
  one whose old value the code reads (`ticket = tl.atomic_add(counter, 1)`), a spin lock
  (`while tl.atomic_cas(lock, 0, 1) == 1: pass`) or a `tl.static_range` (unrolled at compile
  time);
- a `tl.atomic_add` whose address depends on neither `tl.program_id`, `tl.arange` nor loaded
  data, of a floating-point value (`tl.atomic_add(out_ptr, partial)`) or of a count of the
  program's data (`tl.atomic_add(count_ptr, tl.sum(x != 0))`): every program of the grid adds into
  the same word, one after the other, and a float sum changes with the order the atomics land in.
  An atomic whose mask selects programs (`mask=pid == 0`), a word the kernel reads back (a
  barrier's or a ticket's arrival count, `tl.atomic_add(counter, 1)`) and an order-independent
  `atomic_max`/`min`/`and`/`or`/`xor` (the usual one-pass amax) are left alone;
- a floating-point `tl.atomic_add` whose address reads program ids only through strides a launch
  passes as 0 (`dA_ptr += pid_b * stride_dA_batch + pid_c * stride_dA_chunk` with `stride_dA_batch
  = 0` set by the launching function on its non-deterministic path): those programs all add into
  the same words, as above, though the address names the program id;
- a `tl.atomic_add(hist_ptr + bins, 1)` whose bin comes from loaded data, into a table a constexpr
  or literal of at most 1024 bins bounds (`mask=bins < NUM_BINS`, `x % 256`,
  `tl.minimum(bins, NUM_BINS - 1)`): one atomic per element, and every program's land on the same
  few words. Not reported: a table of the program's own (its address reads the program id), a
  shared-memory table (`scope="cta"`), weighted adds, and a slot claim whose old value each lane
  needs (`slot = tl.atomic_add(cursor + e, 1)`).

## Why
Atomics on global memory are executed at the L2 slice that owns the address, one after the other
for the same address. Inside a loop every iteration pays that round trip where one would do. From
every program of a grid onto one word, a grid of 16,384 programs (2^24 fp32 elements,
BLOCK_SIZE=1024) performs 16,384 serialized read-modify-writes there, and a floating-point sum
comes out different from run to run because addition is not associative; a two-pass reduction
turns them into 16,384 plain stores spread over DRAM, which run at the copy bandwidth (2.97 TB/s
measured on H100, shared/gpu/h100.md), and gives the same bits every run. A data-indexed count
into 64 bins sends every element of the input to one of 64 words: each program's 1024 atomics
queue behind every other program's on the same words, and lanes of a warp that pick the same bin
serialize again; `tl.histogram` counts the block on chip and leaves 64 atomics a program.

## Example
```python
x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
tl.atomic_add(out_ptr, tl.sum(x, axis=0))       # TL012: every program, one address
```

## Fix
In a loop, accumulate in registers and issue one atomic after it. From every program, store one
partial per program (`tl.store(partial_ptr + pid, tl.sum(x, axis=0))`) and reduce the partials in
a second small kernel (or with torch), or spread the target over several slots
(`out_ptr + pid % 64`) and sum those. For a data-indexed count, let each program count its block
with `tl.histogram(bins, NUM_BINS, mask=...)` and add each bin once
(`tl.atomic_add(hist_ptr + tl.arange(0, NUM_BINS), counts)`): NUM_BINS atomics a program instead
of one an element. No automatic fix.
"""

from __future__ import annotations

import re

from .. import message_text as mt
from ..findings import Related, Severity
from ..model import ATOMICS
from ..shapes.dtypes import is_float, is_int
from ..source import captures
from . import _offsets as off
from . import _tiling_evidence as te
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL012",
    name="contended-atomic",
    severity=Severity.WARNING,
    summary="an atomic a loop repeats on one address, a float sum or count every program adds to one address, "
            "or a data-indexed count into a small table",
)

# Spin-lock acquire/release: an atomic_cas/xchg polled in a while loop is the point of the loop.
_LOCK_OPS = {"atomic_cas", "atomic_xchg"}


def check(ctx: KernelContext):
    k = ctx.kernel
    for call in k.calls:
        if call.name not in ATOMICS:
            continue
        ptr = call.arg(0, "pointer")
        if ptr is None or _old_value_read(call):
            continue  # a ticket, a flag or a lock: the returned old value is what the atomic is for
        bins = _histogram_bins(ctx, call, ptr)
        if bins is not None:
            yield ctx.finding(
                ctx.src.range(call.node),
                mt.shortest_needed(*(f"{mt.name(_base_text(ctx, ptr), w)}: one atomic per element into {bins} bins from every "
                                     f"program, serialized in L2; tl.histogram, then one add a bin"
                                     for w in (24, 12)),
                                   f"{mt.name(_base_text(ctx, ptr), 12)}: one atomic per element into {bins} bins, "
                                   "serialized in L2; count with tl.histogram"),
                data={"reason": "histogram", "bins": bins},
            )
            continue
        loops = [l for l in call.loops if l.kind != "tl.static_range"]
        if loops:
            if call.name in _LOCK_OPS and any(l.kind == "while" for l in loops):
                continue
            loop = loops[-1]
            if _moves_with(ctx, ptr, loop):
                continue  # a new address every iteration: nothing to hoist
            yield ctx.finding(
                ctx.src.range(call.node),
                f"tl.{call.name} hits one address in every iteration of the loop at line {loop.range.start.line + 1}; "
                "sum in registers, issue it once after",
                related=[Related(loop.range, "the loop")],
                data={"reason": "loop", "loop_line": loop.range.start.line + 1},
            )
            continue
        if call.name != "atomic_add":
            continue  # max/min/and/or/xor come out the same in any order
        floats = _float_sum(ctx, ptr, call.arg(1, "val"))
        if not floats and not _loaded_count(ctx, call, ptr):
            continue  # an integer add that is no count of the data: a barrier's arrival, a program tally
        if ctx.definition_calls(ptr, "program_id", "arange", "load"):
            zeroed = _zero_stride_axes(ctx, call, ptr)
            if zeroed:
                axes, strides = zeroed
                yield ctx.finding(
                    ctx.src.range(call.node),
                    mt.shortest_needed(*(f"{mt.name(strides, w)} passed as 0: programs along {mt.name(axes, w)} "
                                         f"add into one word; the float sum varies run to run"
                                         for w in (40, 24, 12))),
                    data={"reason": "zero-stride", "strides": strides},
                )
            continue
        if any(n.startswith("<loop:") for n in ctx.depends_on(ptr)):
            continue
        mask = call.kwargs.get("mask")
        if mask is not None and ctx.definition_calls(mask, "program_id"):
            continue  # only some programs take part (e.g. mask=pid == 0)
        effect = " and the float sum varies run to run" if floats else ", one round trip per program"
        yield ctx.finding(
            ctx.src.range(call.node),
            mt.shortest_needed(*(f"every program adds into {mt.name(ctx.src.text_of(ptr), w)}: serialized in L2"
                                 f"{effect}; reduce partials" for w in (24, 16))),
            data={"reason": "same-address"},
        )


def _zero_stride_axes(ctx: KernelContext, call, ptr):
    """(the program-id names, the strides) where every term of a float atomic_add's address that
    reads those program ids is scaled by a stride a launch passes as 0 (`stride_dA_batch = 0` in
    the launching function, or a literal 0): all of those programs add into the same words. None
    when no launch shows it or a mask selects programs."""
    if not _float_sum(ctx, ptr, call.arg(1, "val")):
        return None
    mask = call.kwargs.get("mask")
    if mask is not None and _selects_programs(ctx, mask):
        return None  # `mask=pid == 0`: some programs only (a lane bound `offs_h < nheads` is no selection)
    zero = _zero_passed(ctx)
    if not zero:
        return None
    pids = {n for n in ctx.kernel.assignments if _defining(ctx, n)}  # `pid_b = tl.program_id(0)`
    full, skipped = _address_names(ctx, ptr, set(), zero, pids), set()
    kept = _address_names(ctx, ptr, skipped, zero, pids, drop=True)
    lost = (full - kept) & pids
    if not lost or not skipped:
        return None
    return ", ".join(sorted(lost)), ", ".join(sorted(skipped))


def _selects_programs(ctx, mask) -> bool:
    """A comparison in the mask that reads the program id and no lanes (`pid == 0`)."""
    nodes = [mask] + [a.value for n in ctx.depends_on(mask) for a in ctx.kernel.assignments.get(n, ()) if a.value is not None]
    return any(ctx.definition_calls(c, "program_id") and not ctx.definition_calls(c, "arange")
               for n in nodes for c in captures(n, "(comparison_operator) @c", "c"))


def _defining(ctx, name):
    return [c for a in ctx.kernel.assignments.get(name, ()) if a.value is not None for c in ctx.calls_in(a.value, "program_id")]


def _address_names(ctx, node, skipped, zero, pids, drop=False, seen=None):
    """The names an address reads, through the pointer's assignments (`p += pid_b * stride_b`);
    with `drop`, leaving out the products by a stride in `zero` (recorded in `skipped`). A program
    id's own assignment is not followed: its name is what is asked about."""
    seen = set() if seen is None else seen
    out, stack = set(), [node]
    while stack:
        x = stack.pop()
        if drop and x.type == "binary_operator" and ctx.src.text_of(x.child_by_field_name("operator")) == "*":
            sides = [off.strip_parens(x.child_by_field_name("left")), off.strip_parens(x.child_by_field_name("right"))]
            hit = [ctx.src.text_of(sd) for sd in sides if sd is not None and sd.type == "identifier" and ctx.src.text_of(sd) in zero]
            if hit:
                skipped.update(hit)
                continue
        if x.type == "identifier":
            name = ctx.src.text_of(x)
            out.add(name)
            if name not in seen and name not in pids:
                seen.add(name)
                stack.extend(a.value for a in ctx.kernel.assignments.get(name, ()) if a.value is not None)
            continue
        stack.extend(x.named_children)
    return out


def _zero_passed(ctx: KernelContext) -> set[str]:
    """Runtime parameters some launch passes as 0: a literal, or a name its function sets to 0."""
    memo = ctx.kernel.__dict__.setdefault("_tl012_zero_passed", {})
    if "out" in memo:
        return memo["out"]
    out = set()
    for launch in ctx.kernel.launches:
        assigns = None
        for p in ctx.kernel.params:
            node = None if p.is_constexpr else te.passed_node(ctx, launch, p.name)
            if node is None:
                continue
            text = ctx.src.text_of(node).strip()
            if text == "0":
                out.add(p.name)
            elif node.type == "identifier" and launch.wrapper is not None:
                if assigns is None:
                    assigns = te._wrapper_assigns(ctx.src, launch)
                if any(not isinstance(v, str) and ctx.src.text_of(v).strip() == "0" for v in assigns.get(text, ())):
                    out.add(p.name)
    memo["out"] = out
    return out


def _old_value_read(call) -> bool:
    """Whether the atomic's result (the old value) is used, not just the update."""
    parent = call.node.parent
    return parent is not None and parent.type != "expression_statement"


def _moves_with(ctx: KernelContext, ptr, loop) -> bool:
    """Whether the address `ptr` can change from one iteration of `loop` to the next: it reads a
    name the loop assigns (its variable, a pointer advanced in the body, a value loaded there)."""
    for name in ctx.depends_on(ptr):
        for a in ctx.kernel.assignments.get(name.removeprefix("<loop:").rstrip(">"), []):
            if any(l is loop for l in a.loops):
                return True
    return False


def _float_sum(ctx: KernelContext, ptr, val) -> bool:
    """Whether the atomic adds floating-point values: the value's or the target's element type
    says so or, where the code leaves both types open (a load through an untyped pointer), a
    float literal feeds the value (`other=0.0`, `acc = 0.0`). An integer count is exact in any
    order and is not reported."""
    types = []
    for node in (val, ptr):
        a = ctx.shapes.value_at(node, None) if node is not None else None
        if a is not None and a.dtype is not None:
            types.append(a.dtype.lstrip("*"))
    if any(is_int(t) for t in types):
        return False
    if any(is_float(t) for t in types):
        return True
    return val is not None and _float_literal_feeds(ctx, val)


def _float_literal_feeds(ctx: KernelContext, node) -> bool:
    sources = [node]
    for name in ctx.depends_on(node):
        sources += [a.value for a in ctx.kernel.assignments.get(name, []) if a.value is not None]
    for s in sources:
        a = ctx.shapes.value_at(s, None)
        if a is not None and is_float(a.dtype):
            return True  # e.g. `x = tl.load(p).to(tl.float32)` ahead of an untyped scale
    return any(n.type == "float" for s in sources for n in (s, *captures(s, "(float) @f", "f")))


def _loaded_count(ctx: KernelContext, call, ptr) -> bool:
    """Whether an integer atomic_add sends a count of the program's data (`tl.sum(x != 0)`) to a
    word the kernel does not read back: a barrier's or ticket's word is read (loaded, spun on) and
    its contention is the point."""
    val = call.arg(1, "val")
    if val is None or not ctx.definition_calls(val, "load"):
        return False
    text = ctx.src.text_of(ptr)
    return not any(c is not call and c.name in ("load", *ATOMICS) and c.arg(0, "pointer") is not None
                   and ctx.src.text_of(c.arg(0, "pointer")) == text for c in ctx.kernel.calls)


# Where a bin index is bounded by the table's size: `mask=bins < NUM_BINS`,
# `tl.minimum(bins, NUM_BINS - 1)`, `bins % NUM_BINS`, `bins & (NUM_BINS - 1)`.
_BOUND = re.compile(r"<\s*(\w+)\s*(?:[)&|,]|$)|minimum\(.*,\s*(\w+)\s*-\s*1\s*\)|%\s*(\w+)|&\s*\(\s*(\w+)\s*-\s*1\s*\)")
SMALL_TABLE = 1024  # bins: tl.histogram keeps one count per bin per program


def _histogram_bins(ctx: KernelContext, call, ptr) -> int | None:
    """The bin count of an atomic_add of 1 at a bin read from loaded data (`hist_ptr + bins`,
    bins from `tl.load`) into a table whose size a constexpr or literal bounds, from every
    program alike; None for anything else. Shared-memory tables (`scope="cta"`), one table per
    program (the address reads the program id) and weighted adds are not counting histograms."""
    val = call.arg(1, "val")
    if call.name != "atomic_add" or val is None or ctx.src.text_of(val).strip() != "1":
        return None
    scope = call.kwargs.get("scope")
    if scope is not None and "cta" in ctx.src.text_of(scope):
        return None
    terms = [t for t in off.additive_terms(ctx, ptr) if ctx.src.text_of(t) != _base_text(ctx, ptr)]
    data = [t for t in terms if ctx.definition_calls(t, "load")]
    if not data or any(ctx.definition_calls(t, "program_id") for t in terms if t not in data):
        return None  # no bin read from data, or a table of the program's own
    texts = [ctx.src.text_of(t) for t in data] + ([ctx.src.text_of(call.kwargs["mask"])] if "mask" in call.kwargs else [])
    for name in set().union(*(ctx.depends_on(t) for t in data)):
        # the statements that turn loaded values into bins; a load's own mask bounds its offsets
        texts += [ctx.src.text_of(a.value) for a in ctx.kernel.assignments.get(name, [])
                  if a.value is not None and not ctx.calls_in(a.value, "load")]
    for text in texts:
        for m in _BOUND.finditer(text):
            n = _int_bound(ctx, next(g for g in m.groups() if g))
            if n is not None and n <= SMALL_TABLE:
                return n
    return None


def _int_bound(ctx: KernelContext, name: str) -> int | None:
    """A literal, or a constexpr parameter every configuration sets to the same integer."""
    if name.isdigit():
        return int(name)
    p = ctx.kernel.param(name)
    if p is None or not p.is_constexpr:
        return None
    vals = {c.get(name) for c in ctx.kernel.configs}
    return next(iter(vals)) if len(vals) == 1 and isinstance(next(iter(vals)), int) else None


def _base_text(ctx: KernelContext, ptr) -> str:
    """The pointer a sum starts from (`hist_ptr` of `hist_ptr + bins`)."""
    node = ptr
    while node is not None and node.type == "binary_operator":
        node = node.child_by_field_name("left")
    return ctx.src.text_of(node if node is not None else ptr)
