"""TL004 — `tl.dot` operand tile dimension below 16

## What it finds
A `tl.dot(a, b)` whose reduction dimension K, or whose output tile M × N, is smaller than the
tensor-core minimum in at least one configuration the file shows (launch values, wrapper
assignments, defaults, each autotune `triton.Config`). The tile shape is read from where the
operands come from: the 2-D offsets of the load that produced them (`offs_m[:, None]` is the row
axis, `offs_k[None, :]` the column axis, each a `tl.arange` whose extent is evaluated),
a block pointer's `block_shape`, `tl.zeros`/`tl.full` shapes, through `.to(...)`, `tl.trans`
and `.T`. The shape engine's run of each configuration decides the dimensions where it knows
the operands' shapes (a row offset built from a reduction is a scalar, not the reduced arange);
the loads' aranges only name where a value came from. Values it cannot know stay silent, and so
does a dimension of 0 (the sentinel of a configuration that never reaches the dot).

- **K < 16** (K < 32 when the operands are cast to an 8-bit type): error. Triton's
  `semantic.dot` asserts `lhs.shape[-1] >= min_dot_size[2]` and the NVIDIA backend's
  `min_dot_size` returns K ≥ 16 for 16-bit types and K ≥ 32 for 8-bit types (Triton 3.9,
  `backends/nvidia/compiler.py`); fp32 (tf32) got K ≥ 8 only in Triton 3.9
  (triton-lang/triton#10234). Checked with the real compiler for sm_90: a 32×32×8 fp16 and
  bf16 dot fails with `Input shapes should have M >= 1, N >= 1 and K >= 16`, 32×32×16 compiles.
- **M or N < 16**: warning. Since triton-lang/triton#7451 (mid-2025) Triton pads such tiles up
  to the tensor-core instruction (mma.sync m16n8k16) instead of refusing them, so they compile
  (verified: 8×32×32 fp16 builds for sm_90) but a 16-row instruction does 8 rows of useful work
  and Hopper's wgmma (64-row warp-group tiles) is not used; older Triton rejects them
  ("All non-batch values … must be >= 16", triton-lang/triton#4197).

Note that `TRITON_INTERPRET=1` accepts any size (its `min_dot_size` is `(1, 1, 1)`), so CPU
tests pass and the kernel fails only when first compiled for a GPU.

## Why
Tiles this small also starve the tensor cores even when they compile: on our H100 the
tutorial matmul runs at 89 TFLOP/s with 32×32×32 tiles and 691 TFLOP/s with 128×256×64 (7.8×,
shared H100 figures), and a K tile of 8 cannot be issued at all for fp16.

## Example
```python
offs_k = tl.arange(0, BLOCK_K)
a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
acc += tl.dot(a, b)          # TL004 with BLOCK_K=8 from the launch
```

## Fix
Use K tiles of at least 16 (32 for fp8/int8) and M, N tiles of at least 16 — in practice 64–256
with autotuning. For a genuinely tiny dimension (a head dimension of 8, a matrix-vector product)
pad the operand to 16 with a masked load, or do the product without `tl.dot`:
`tl.sum(a * x[None, :], axis=1)`.
"""


from __future__ import annotations

from .. import message_text as mt
from ..findings import Related, Severity
from ..values import UNKNOWN, fmt
from . import _offsets as off
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL004",
    name="dot-tile-too-small",
    severity=Severity.ERROR,
    summary="tl.dot with an operand tile dimension < 16",
)

MIN_MN = 16  # one mma.sync m16n8k16 / wgmma row block; smaller M or N is padded up to it
_EIGHT_BIT = ("float8", "fp8", "int8", "uint8")


def _dims(ctx, node, depth=0):
    """(dim0, dim1) of a 2-D operand: each ("arange", TlCall) or ("expr", node); None if unknown."""
    src = ctx.src
    node = off.strip_parens(node)
    if node is None or depth > 10:
        return None
    if node.type == "attribute" and src.text_of(node.child_by_field_name("attribute")) == "T":
        d = _dims(ctx, node.child_by_field_name("object"), depth + 1)
        return (d[1], d[0]) if d else None
    if node.type == "identifier":
        defs = off.reaching_defs(ctx, src.text_of(node), node.start_byte)
        if len(defs) != 1 or defs[0].augmented or off.rhs_of(defs[0]) is None:
            return None
        return _dims(ctx, off.rhs_of(defs[0]), depth + 1)
    if node.type != "call":
        return None
    mc = off.method_call(node, src, "to")
    if mc is not None:
        return _dims(ctx, mc[0], depth + 1)
    call = next((c for c in ctx.kernel.calls if c.node.id == node.id), None)
    if call is None:
        return None
    if call.name in ("trans", ".trans") or (call.name in ("permute", ".permute")):
        inner = call.arg(0, "input") if not call.name.startswith(".") else node.child_by_field_name("function").child_by_field_name("object")
        d = _dims(ctx, inner, depth + 1)
        return (d[1], d[0]) if d else None
    if call.name in ("zeros", "full"):
        return _tuple_dims(call.arg(0, "shape"))
    if call.name == "load":
        ptr = call.arg(0, "pointer")
        shape = off.tile_aranges(ctx, ptr)
        if shape is not None:
            return ("arange", shape[0][0]), ("arange", shape[1][0])
        blocks = ctx.definition_calls(ptr, "make_block_ptr")
        if len(blocks) == 1:
            return _tuple_dims(blocks[0].arg(4, "block_shape"))
    return None


def _tuple_dims(node):
    node = off.strip_parens(node)
    if node is None or node.type not in ("tuple", "list"):
        return None
    items = [c for c in node.named_children if c.type != "comment"]
    if len(items) != 2:
        return None
    return ("expr", items[0]), ("expr", items[1])


def _extent(ctx, dim, config):
    """[(value, origin, origin_range)] for one dimension in one configuration."""
    kind, what = dim
    if kind == "arange":
        start, end = what.arg(0, "start"), what.arg(1, "end")
        if end is None:
            return []
        starts = ctx.values(start, config) if start is not None else [0]
        out = []
        for e in ctx.values(end, config):
            for s in starts:
                if isinstance(e, int) and isinstance(s, int) and e is not UNKNOWN and s is not UNKNOWN:
                    origin, rng = ctx.origin_of(end, config)
                    out.append((e - s, origin or f"{mt.code(ctx.src.text_of(what.node))} at line {off.line_of(what.node)}", rng))
        return out
    out = []
    for v in ctx.values(what, config):
        if isinstance(v, int) and not isinstance(v, bool):
            origin, rng = ctx.origin_of(what, config)
            out.append((v, origin or f"{mt.code(ctx.src.text_of(what))} at line {off.line_of(what)}", rng))
    return out


def _min_k(ctx, a, b) -> tuple[int, str]:
    text = off.chain_text(ctx, a) + off.chain_text(ctx, b)
    if any(t in text for t in _EIGHT_BIT):
        return 32, "8-bit operands"
    return 16, "16-bit operands"


def _engine_dims(ctx, a, b, config):
    """{"M", "K", "N": dimension} of the shape engine's run in `config` (ints, or Syms when
    `config` is None), or None when it does not know both operands as 2-D blocks."""
    sa, sb = ctx.shapes.shape_of(a, config), ctx.shapes.shape_of(b, config)
    if sa is None or sb is None or len(sa) != 2 or len(sb) != 2:
        return None
    return {"M": sa[0], "K": sa[1], "N": sb[1]}


def _engine_origin(ctx, symbolic, name, value, config, dim):
    """Where the engine's `value` of dimension `name` comes from: the constexpr it names, else
    the arange the operands' loads use when that agrees, else the expression."""
    expr = getattr(symbolic.get(name), "expr", None) if symbolic else None
    if config is not None and expr in config.values:
        v = config.values[expr]
        return f"{expr}={fmt(v.value)} from {v.origin or config.label}", v.range
    if dim is not None:
        for v, origin, rng in _extent(ctx, dim, config):
            if v == value:
                return origin, rng
    return (f"{expr}" if expr else "the operand's shape") + (f" in {config.label}" if config is not None else ""), None


def check(ctx: KernelContext):
    for dot in ctx.kernel.calls_named("dot"):
        a, b = dot.arg(0, "input"), dot.arg(1, "other")
        if a is None or b is None:
            continue
        da, db = _dims(ctx, a), _dims(ctx, b)
        dims = {}
        if da is not None:
            dims["M"], dims["K"] = da[0], da[1]
        if db is not None:
            dims["N"] = db[1]
            dims.setdefault("K", db[0])
        symbolic = _engine_dims(ctx, a, b, None)
        if not dims and symbolic is None:
            continue
        min_k, k_kind = _min_k(ctx, a, b)
        for name in ("M", "K", "N"):
            low = min_k if name == "K" else MIN_MN
            seen = []
            for config in ctx.kernel.configs or [None]:
                # the shape engine's run is the judge; the loads' aranges only where it knows nothing
                engine = _engine_dims(ctx, a, b, config)
                if engine is not None:
                    v = engine[name]
                    found = [(v, *_engine_origin(ctx, symbolic, name, v, config, dims.get(name)))] \
                        if isinstance(v, int) and not isinstance(v, bool) else []
                else:
                    found = _extent(ctx, dims[name], config) if name in dims else []
                for value, origin, rng in found:
                    # 0 is a sentinel of a configuration that never reaches the dot (a dead `flag = 0`)
                    if 0 < value < low and (value, origin) not in [(v, o) for v, o, _ in seen]:
                        seen.append((value, origin, rng))
            if seen:
                yield _finding(ctx, dot, name, low, k_kind, seen)


def _short(origin: str, rng) -> str:
    """'BLOCK_K=8 at line 31' of the origin 'BLOCK_K=8 from `BLOCK_K = 8` at line 31, passed at line 33'."""
    head, sep, _ = origin.partition(" from ")
    return mt.clip(head, 30) + (f" at line {rng.start.line + 1}" if sep and rng is not None else "")


def _finding(ctx, dot, name, low, k_kind, seen):
    v, o, r = seen[0]
    first = f"{name}={fmt(v)} ({_short(o, r)})"
    more = f" (and {len(seen) - 1} more configuration{'s' if len(seen) > 2 else ''})" if len(seen) > 1 else ""
    if name == "K":
        msg = mt.fit(mt.shortest_needed(f"tl.dot reduction dimension {first} is below {low}, which Triton refuses for {k_kind}",
                                        f"tl.dot {first} is below {low}, which Triton refuses for {k_kind}"), more)
        severity = Severity.ERROR
    else:
        msg = mt.fit(f"tl.dot tile {first} is below {low}: Triton pads it to the tensor-core shape", more)
        severity = Severity.WARNING
    related = [Related(r, o) for _, o, r in seen if r is not None]
    return ctx.finding(ctx.src.range(dot.node), msg, severity=severity, related=related,
                       data={"dim": name, "values": [v for v, _, _ in seen], "minimum": low})
