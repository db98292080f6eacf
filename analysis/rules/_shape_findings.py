"""Turn the shape problems the inference found (per configuration) into one finding per place."""

from __future__ import annotations

from .. import message_text as mt
from ..findings import MESSAGE_LIMIT, Related
from ..shapes import infer_kernel
from ..values import UNKNOWN, fmt


def config_values(config, kernel) -> str:
    """`BLOCK_M=32, BLOCK_N=64` for the constexprs of `config` (unknown ones left out)."""
    if config is None:
        return ""
    parts = [f"{p.name}={fmt(config.get(p.name))}" for p in kernel.params
             if p.is_constexpr and config.get(p.name) is not UNKNOWN]
    return ", ".join(parts)


def shape_findings(ctx, kinds: set[str]):
    """Group problems of `kinds` by place across configurations; name the first configuration."""
    shapes = infer_kernel(ctx.module, ctx.kernel)
    grouped: dict = {}
    for run in shapes.per_config:
        for prob in run.problems.values():
            if prob.kind in kinds:
                grouped.setdefault((prob.node.start_byte, prob.kind), []).append((run, prob))
    for (_start, _kind), items in sorted(grouped.items(), key=lambda kv: kv[0]):
        run, prob = items[0]
        config = run.config
        where = short_where = ""
        related = []
        if prob.call is not None:  # in a @jit helper, with the values this call passes
            related.append(Related(ctx.src.range(prob.call), "the call passing these blocks"))
        if config is not None and config.label != "defaults":
            vals = config_values(config, ctx.kernel)
            short_where = f" in {config.label}"
            where = short_where + (f" ({vals})" if vals else "")
            if config.launch is not None:
                related.append(Related(config.launch.range, f"configuration: {config.label}"))
            for p in ctx.kernel.params:
                v = config.values.get(p.name) if p.is_constexpr else None
                if v is not None and v.range is not None and v.known and len(related) < 4:
                    related.append(Related(v.range, f"{p.name}={fmt(v.value)} from {v.origin or config.label}"))
        elif config is not None:
            vals = config_values(config, ctx.kernel)
            where = f" (with {vals})" if vals else ""
        others = len({id(r.config) for r, _ in items}) - 1
        more = f"; {others} more configuration{'s' if others > 1 else ''}" if others > 0 else ""
        via = f" (call at line {prob.call.start_point[0] + 1})" if prob.call is not None else ""
        yield ctx.finding(
            ctx.src.range(prob.node), _message(prob.message, via, where, short_where, more), related=related,
            data={"kind": prob.kind, "config": config.label if config is not None else None,
                  "constexprs": {p.name: config.get(p.name) for p in ctx.kernel.params
                                 if p.is_constexpr and config is not None and config.get(p.name) is not UNKNOWN},
                  "shapes": [[d if isinstance(d, (int, type(None))) else str(d) for d in s] if s is not None else None
                             for s in prob.shapes]},
        )


def _message(problem: str, via: str, where: str, short_where: str, more: str) -> str:
    """The problem, then what fits of: the helper call, the configuration with its values (or its
    label alone), how many more configurations."""
    head = mt.fit(problem, via)
    return mt.fit(head, where if len(head) + len(where) + len(more) <= MESSAGE_LIMIT else short_where, more)
