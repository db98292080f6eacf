"""The kernel's largest tile (what its num_warps × 32 threads share, TL009) and the shared memory
of its pipelined `tl.dot` operands (TL013), in one configuration, from the shape engine."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..model import Config, Kernel, Module, TlCall
from ..shapes import infer_kernel
from ..values import UNKNOWN
from .elements import ElementSizes
from .figures import MEMORY_OPS
from .trips import trip_evaluator


@dataclass
class Tile:
    elements: int  # of the largest tile seen
    call: TlCall  # the call that makes it (arange, zeros/full, load/store, dot)
    complete: bool  # every tile of the kernel was sized (else `elements` is a lower bound)
    from_dot: bool  # the largest tile is a tl.dot result (an accumulator)


def tile_node(call: TlCall):
    """The expression whose block is the tile a call works on: the result of arange, zeros, full
    and dot; the pointer block of a memory access. None for other calls."""
    if call.name in ("arange", "zeros", "full", "dot"):
        return call.node
    if call.name in MEMORY_OPS:
        return call.arg(0, "pointer")
    return None


def largest_tile(kernel: Kernel, module: Module, config: Config | None) -> Tile | None:
    """The kernel's largest tile in `config`, among the calls that run in it."""
    shapes = infer_kernel(module, kernel)
    run = shapes.run_for(config)
    best: Tile | None = None
    complete = True
    for c in kernel.calls:
        node = tile_node(c)
        if node is None or not run.executes(c.node):
            continue
        shp = shapes.tile_shape(node, config)
        if shp is None:
            complete = False
            continue
        n = math.prod(shp) if shp else 1
        if best is None or n > best.elements:
            best = Tile(n, c, True, c.name == "dot")
    if best is not None:
        best.complete = complete
    return best


def dot_operand_shapes(kernel: Kernel, module: Module, config: Config | None, dot: TlCall) -> tuple | None:
    """The concrete shapes of a tl.dot's two operands in `config`; None unless both are blocks of
    rank 2 or more."""
    shapes = infer_kernel(module, kernel)
    sa = shapes.tile_shape(dot.arg(0, "input"), config)
    sb = shapes.tile_shape(dot.arg(1, "other"), config)
    if sa is None or sb is None or len(sa) < 2 or len(sb) < 2:
        return None
    return sa, sb


def shared_estimate(kernel: Kernel, module: Module, config: Config | None,
                    elem_bytes: dict[str, int] | None = None) -> tuple[int | None, bool]:
    """(shared bytes of the pipelined tl.dot operands, whether an element size was assumed)."""
    sizes = ElementSizes(kernel, module, elem_bytes)
    run = infer_kernel(module, kernel).run_for(config)
    assumed = sizes.half_hint is None and any(
        sizes.of_value(c.arg(i, name), run) is None
        for c in kernel.calls_named("dot") if run.executes(c.node) for i, name in ((0, "input"), (1, "other")))
    return shared_bytes(kernel, module, config, sizes), assumed


def shared_bytes(kernel: Kernel, module: Module, config: Config | None, sizes: ElementSizes) -> int | None:
    """num_stages × (BM×BK + BK×BN) × element bytes for each pipelined tl.dot (inside a loop)
    that runs in `config`; one stage for a dot outside loops."""
    dots = kernel.calls_named("dot")
    if not dots:
        return 0
    run = infer_kernel(module, kernel).run_for(config)
    ev = trip_evaluator(kernel, module, config)
    stages = config.get("num_stages") if config is not None else UNKNOWN
    total = 0
    for c in dots:
        if not run.executes(c.node):
            continue
        operands = dot_operand_shapes(kernel, module, config, c)
        if operands is None:
            return None
        sa, sb = operands
        n_stages = 1
        loops = [lp for lp in c.loops if lp.kind in ("range", "tl.range")]
        if loops:
            own = ev.loop_stages(loops[-1])
            n_stages = own if own is not None else (stages if isinstance(stages, int) else None)
            if n_stages is None:
                return None
            n_stages = max(n_stages, 1)
        ea = sizes.of_value(c.arg(0, "input"), run) or sizes.default()[0]
        eb = sizes.of_value(c.arg(1, "other"), run) or sizes.default()[0]
        total += n_stages * (math.prod(sa) * ea + math.prod(sb) * eb)
    return total
