"""TL013 — pipelined `tl.dot` over the shared-memory limit

## What it finds
For each configuration (launch sites × autotune configs), the shared memory Triton stages for
the operands of the kernel's `tl.dot` calls, against the target's limit per block (H100: 232,448
bytes = 227 KB, from analysis/gpus.py). A `tl.dot` inside a `range`/`tl.range` loop is software
pipelined over `num_stages` (`tl.range(..., num_stages=S)` wins over the kernel's); the dots of
one loop add up, while different loops (and dots outside loops) reuse the same memory, so the
kernel needs the largest of them. Per dot, as triton 3.9 allocates for sm_90:
- operands loaded in the type the dot takes: `num_stages × (BLOCK_M×BLOCK_K + BLOCK_K×BLOCK_N) ×
  element bytes`;
- operands converted between the load and the dot (`tl.load(p).to(tl.bfloat16)` of fp32 data):
  `num_stages − 1` copies of the loaded tiles, in the loaded type, plus one converted B tile;
- 8-bit operands (int8, fp8): `(num_stages + 1) / 2 × (A + B)` bytes, since Triton stages them
  more sparingly;
- a dot outside loops: one copy of each operand.
Element sizes come from the code (a conversion, a `tl.zeros` dtype, a typed load). When the code
gives no type for an operand, it is taken as 2 bytes (fp16/bf16, the usual `tl.dot` input) and
the message says so; a load whose type is unknown is taken to be in the type the dot takes.

## Why
The model is what Triton allocates. Cross-compiled with triton 3.9 for sm_90 (contiguous,
16-aligned operands as at a real launch), `metadata.shared` of a matmul loop is: 128×128×64 fp16,
1–4 stages → 32,768 per stage (the tutorial matmul); 128×256×64 bf16, 3 stages → 147,456;
4 stages → 196,608 (the 691 TFLOP/s H100 config, shared/gpu/h100.md); 256×256×64 bf16,
4 stages → 262,144; the same 128×256×64 loop on fp32 data converted to bf16, 3 stages →
229,376 (2 × fp32 tiles + one bf16 B); int8 128×128×128, 4 stages → 81,920. A kernel over the
limit compiles, but loading it on an H100 fails in `CompiledKernel._init_handles` with
`out of resource: shared memory, Required: 262144, Hardware limit: 232448. Reducing block sizes or
`num_stages` may help.` — inside `@triton.autotune` that config is skipped (tuning time lost, and
the kernel fails if every config is over); at a plain launch it is an exception.

## Example
```python
triton.Config({"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=4)
# TL013: 4 × (256×64 + 64×256) × 2 = 262,144 bytes > 232,448
```

## Fix
Lower `num_stages` (3 stages of the example take 196,608 bytes) or `BLOCK_K`, or use smaller
tiles. No automatic fix: which of them to change is a performance decision.
"""

from __future__ import annotations

from .. import gpus
from .. import message_text as mt
from ..estimates import ElementSizes, dot_buffers
from ..findings import Related, Severity
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL013",
    name="shared-memory-over-limit",
    severity=Severity.WARNING,
    summary="shared memory of a pipelined tl.dot over the target's limit (H100: 227 KB per block)",
)

ASSUMED_BYTES = 2  # an operand of unknown type: fp16/bf16, the usual tl.dot input


def check(ctx: KernelContext):
    k = ctx.kernel
    if not k.calls_named("dot"):
        return
    # Settings and the CLI refuse unknown names; one that still gets here fails the rule loudly
    # (an analysis error) rather than being judged against another GPU's limit.
    gpu = gpus.get(ctx.target)
    sizes = ElementSizes(k, ctx.module)
    for config in k.configs:
        buffers = dot_buffers(k, ctx.module, config, sizes, fallback=ASSUMED_BYTES)
        if not buffers:
            continue
        regions: dict = {}
        for d in buffers:
            regions.setdefault(id(d.region), []).append(d)
        worst = max(regions.values(), key=lambda ds: sum(d.bytes for d in ds))
        total = sum(d.bytes for d in worst)
        if total <= gpu.smem_per_block:
            continue
        stages = config.values.get("num_stages")
        related = [Related(stages.range, f"num_stages={stages.value} from {stages.origin or config.label}")] \
            if stages is not None and stages.range is not None else ctx.related_for(config, None, "configuration")
        assumed = any(_assumed(ctx, sizes, d) for d in worst)
        formula = _formula(worst[0]) if len(worst) == 1 else f"{len(worst)} dots in one loop"
        skipped = "autotune skips it" if "autotune" in config.label else "the launch fails"
        guess = " (2-byte assumed)" if assumed else ""
        limit = f"{gpu.name} allows {gpu.smem_per_block:,}: {skipped}"
        yield ctx.finding(
            ctx.src.range(worst[0].call.node),
            mt.shortest_needed(f"tl.dot needs {total:,} B of shared memory, {formula}{guess}; {limit}",
                               f"tl.dot needs {total:,} B of shared memory{guess}; {limit}"),
            related=related,
            data={"shared_bytes": total, "limit": gpu.smem_per_block, "gpu": gpu.name, "config": config.label,
                  "assumed_operand_bytes": ASSUMED_BYTES if assumed else None},
        )


def _assumed(ctx: KernelContext, sizes: ElementSizes, d) -> bool:
    """Whether an operand's type is not in the code (the estimate took ASSUMED_BYTES for it)."""
    run = ctx.shapes.run_for(None)
    return any(sizes.of_value(d.call.arg(i, name), run) is None for i, name in ((0, "input"), (1, "other")))


def _formula(d) -> str:
    a = "×".join(map(str, d.a_shape[-2:]))
    b = "×".join(map(str, d.b_shape[-2:]))
    la, lb = d.loaded_bytes

    def tiles(x: int, y: int) -> str:
        return f"({a} + {b}) × {x} B" if x == y else f"({a}×{x} + {b}×{y} B)"

    if d.stages == 1:
        return f"{tiles(d.a_bytes, d.b_bytes)}, one stage"
    if (la, lb) != (d.a_bytes, d.b_bytes):
        return f"{d.stages - 1} × {tiles(la, lb)} loaded + {b} × {d.b_bytes} B converted"
    if d.a_bytes == 1 and d.b_bytes == 1:
        return f"({d.stages}+1)/2 × {tiles(1, 1)}"
    return f"{d.stages} stages × {tiles(d.a_bytes, d.b_bytes)}"
