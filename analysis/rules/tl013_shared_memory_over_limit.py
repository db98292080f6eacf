"""TL013 — pipelined `tl.dot` over the shared-memory limit

## What it finds
For each configuration (launch sites × autotune configs), the shared memory a software-pipelined
`tl.dot` needs: `num_stages × (BLOCK_M×BLOCK_K + BLOCK_K×BLOCK_N) × element bytes` for a `tl.dot`
inside a `range`/`tl.range` loop (one stage outside loops; `tl.range(..., num_stages=S)` wins
over the kernel's), summed over the kernel's dots, against the target's limit per block (H100:
232,448 bytes = 227 KB, from analysis/gpus.py). The element size comes from the code
(`.to(tl.float32)` on an operand, a `tl.float16` conversion elsewhere in the kernel); when the
code does not say, operands are taken as 2-byte (fp16/bf16), the smallest usual `tl.dot` input,
so a kernel that fits is never reported.

## Why
The estimate matches what Triton allocates. Cross-compiled with triton 3.9 for sm_90 (contiguous,
16-aligned operands as at a real launch), the tutorial matmul's `metadata.shared` is exactly the
formula: 128×128×64 fp16 → 32,768 / 65,536 / 98,304 / 131,072 bytes for 1–4 stages; 128×256×64
with 4 stages → 196,608 (this is the 691 TFLOP/s H100 config, shared/gpu/h100.md); 256×256×64 or
128×128×128 with 4 stages → 262,144. Such a kernel compiles, but loading it on an H100 fails in
`CompiledKernel._init_handles` with
`out of resource: shared memory, Required: 262144, Hardware limit: 232448. Reducing block sizes or
`num_stages` may help.` — inside `@triton.autotune` that config is silently skipped, at a plain
launch it is an exception.

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

import types

from .. import gpus
from ..estimates import ElementSizes, dot_operand_shapes, shared_estimate
from ..findings import Related, Severity
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL013",
    name="shared-memory-over-limit",
    severity=Severity.WARNING,
    summary="estimated shared memory of a pipelined tl.dot over the target's limit (H100: 227 KB per block)",
)


def check(ctx: KernelContext):
    k = ctx.kernel
    dots = k.calls_named("dot")
    if not dots:
        return
    # Settings and the CLI refuse unknown names; one that still gets here fails the rule loudly
    # (an analysis error) rather than being judged against another GPU's limit.
    gpu = gpus.get(ctx.target)
    for config in k.configs:
        shared, assumed = shared_estimate(k, ctx.module, config)
        note = ""
        if assumed:
            # The operands' dtype is unknown: judge with the smallest usual tl.dot input (fp16/bf16)
            # rather than guess fp32 and report a kernel that fits.
            low, _ = shared_estimate(k, ctx.module, config, {p.name: 2 for p in k.params if not p.is_constexpr})
            if low != shared:
                note = "assumed 2-byte (fp16/bf16) dot operands: their dtype is not in the code"
            shared = low
        elif _half_hint(k, ctx.module):
            note = _half_hint(k, ctx.module)
        if shared is None or shared <= gpu.smem_per_block:
            continue
        stages_v = config.values.get("num_stages")
        est = types.SimpleNamespace(shared_bytes=shared, num_stages=_stages(k, config))
        dot = dots[0]
        detail = _detail(ctx, dot, config, est)
        stages = stages_v
        origin = f"num_stages={est.num_stages} from {stages.origin}" if stages is not None and stages.origin else ""
        related = [Related(stages.range, origin)] if stages is not None and stages.range is not None else \
            ctx.related_for(config, None, "configuration")
        assumed = [note] if note else []
        yield ctx.finding(
            ctx.src.range(dot.node),
            f"pipelined tl.dot needs about {est.shared_bytes:,} bytes of shared memory in {config.label} "
            f"({detail}) but {gpu.name} gives a block at most {gpu.smem_per_block:,} bytes "
            f"({gpu.smem_per_block // 1024} KB): the launch fails with OutOfResources; lower num_stages or BLOCK_K"
            + (f" ({assumed[0]})" if assumed else ""),
            related=related,
            data={"shared_bytes": est.shared_bytes, "limit": gpu.smem_per_block, "gpu": gpu.name,
                  "config": config.label},
        )


def _detail(ctx, dot, config, est) -> str:
    sa, sb = dot_operand_shapes(ctx.kernel, ctx.module, config, dot) or (None, None)
    if not sa or not sb or est.num_stages is None:
        return "stages × operand tiles × element bytes"
    per_elem = est.shared_bytes // (est.num_stages * (sa[0] * sa[-1] + sb[0] * sb[-1])) \
        if est.num_stages * (sa[0] * sa[-1] + sb[0] * sb[-1]) else 0
    return (f"num_stages={est.num_stages} × ({sa[0]}×{sa[-1]} + {sb[0]}×{sb[-1]}) × {per_elem} bytes"
            if len(ctx.kernel.calls_named('dot')) == 1 else "summed over the kernel's tl.dot calls")


def _stages(k, config) -> int | None:
    v = config.get("num_stages")
    return v if isinstance(v, int) else None


def _half_hint(k, module) -> str:
    d = ElementSizes(k, module)
    return d.default()[1] if d.half_hint is not None else ""
