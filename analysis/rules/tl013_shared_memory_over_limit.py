"""TL013: the shared memory a pipelined tl.dot needs (stages × operand tiles × bytes) exceeds what
the target GPU gives one block."""

from __future__ import annotations

from .. import gpus
from ..estimates import estimate, shapes_of, _Eval
from ..findings import Related, Severity
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL013",
    name="shared-memory-over-limit",
    severity=Severity.WARNING,
    summary="estimated shared memory of a pipelined tl.dot over the target's limit (H100: 227 KB per block)",
)

TARGET = gpus.DEFAULT_GPU


def check(ctx: KernelContext):
    k = ctx.kernel
    dots = k.calls_named("dot")
    if not dots:
        return
    gpu = gpus.get(TARGET)
    for config in k.configs:
        est = estimate(k, config, ctx.module)
        if any(n.startswith("assumed 4-byte") for n in est.notes):
            # The operands' dtype is unknown: judge with the smallest usual tl.dot input (fp16/bf16)
            # rather than guess fp32 and report a kernel that fits.
            low = estimate(k, config, ctx.module, elem_bytes={p.name: 2 for p in k.params if not p.is_constexpr})
            if low.shared_bytes != est.shared_bytes:
                low.notes.append("assumed 2-byte (fp16/bf16) dot operands: their dtype is not in the code")
            est = low
        if est.shared_bytes is None or est.shared_bytes <= gpu.smem_per_block:
            continue
        dot = dots[0]
        detail = _detail(ctx, dot, config, est)
        stages = config.values.get("num_stages")
        origin = f"num_stages={est.num_stages} from {stages.origin}" if stages is not None and stages.origin else ""
        related = [Related(stages.range, origin)] if stages is not None and stages.range is not None else \
            ctx.related_for(config, None, "configuration")
        assumed = [n for n in est.notes if n.startswith("assumed") and "pointers of unknown dtype" in n
                   or n.startswith("assumed 2-byte (fp16")]
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
    ev = _Eval(ctx.kernel, ctx.module, config)
    shapes = shapes_of(ctx.kernel)
    sa = ev.shape(shapes.shape(dot.arg(0, "input")))
    sb = ev.shape(shapes.shape(dot.arg(1, "other")))
    if not sa or not sb or est.num_stages is None:
        return "stages × operand tiles × element bytes"
    per_elem = est.shared_bytes // (est.num_stages * (sa[0] * sa[-1] + sb[0] * sb[-1])) \
        if est.num_stages * (sa[0] * sa[-1] + sb[0] * sb[-1]) else 0
    return (f"num_stages={est.num_stages} × ({sa[0]}×{sa[-1]} + {sb[0]}×{sb[-1]}) × {per_elem} bytes"
            if len(ctx.kernel.calls_named('dot')) == 1 else "summed over the kernel's tl.dot calls")
