"""The kernel's largest tile (what its num_warps × 32 threads share, TL009) and the shared memory
of its pipelined `tl.dot` operands (TL013), in one configuration, from the shape engine."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..model import Config, Kernel, Module, TlCall
from ..shapes import infer_kernel, jit_functions
from ..source import captures
from ..values import UNKNOWN
from .elements import ElementSizes, dtype_node, tl_dtype
from .figures import MEMORY_OPS
from .pointers import call_at
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


def largest_tile(kernel: Kernel, module: Module, config: Config | None, skip=None) -> Tile | None:
    """The kernel's largest tile in `config`, among the calls that run in it (less those `skip`
    says yes to). A block a `@jit` helper returns may be larger than any tile the kernel's own
    calls make: then, or when its shape is unknown, the tile found is not `complete`."""
    shapes = infer_kernel(module, kernel)
    run = shapes.run_for(config)
    best: Tile | None = None
    complete = True
    for c in kernel.calls:
        node = tile_node(c)
        if node is None or not run.executes(c.node) or (skip is not None and skip(c)):
            continue
        shp = shapes.tile_shape(node, config)
        if shp is None:
            complete = False
            continue
        n = math.prod(shp) if shp else 1
        if best is None or n > best.elements:
            best = Tile(n, c, True, c.name == "dot")
    if best is not None:
        for call in _helper_calls(kernel, module):
            if not run.executes(call):
                continue
            shp = shapes.tile_shape(call, config)
            if shp is None or math.prod(shp) > best.elements:
                complete = False
                break
        best.complete = complete
    return best


def _helper_calls(kernel: Kernel, module: Module) -> list:
    """Calls of the file's `@jit` helpers in the kernel's body."""
    helpers = jit_functions(module)
    body = kernel.node.child_by_field_name("body")
    if body is None or not helpers:
        return []
    return [c for c in captures(body, "(call function: (identifier) @f) @c", "c")
            if kernel.src.text_of(c.child_by_field_name("function")) in helpers]


def dot_operand_shapes(kernel: Kernel, module: Module, config: Config | None, dot: TlCall) -> tuple | None:
    """The concrete shapes of a tl.dot's two operands in `config`; None unless both are blocks of
    rank 2 or more."""
    shapes = infer_kernel(module, kernel)
    sa = shapes.tile_shape(dot.arg(0, "input"), config)
    sb = shapes.tile_shape(dot.arg(1, "other"), config)
    if sa is None or sb is None or len(sa) < 2 or len(sb) < 2:
        return None
    return sa, sb


@dataclass
class DotBuffers:
    """The shared memory Triton stages for one `tl.dot`'s operands in one configuration."""

    call: TlCall
    stages: int  # 1 for a dot outside loops
    a_shape: tuple
    b_shape: tuple
    a_bytes: int  # element bytes of the operand as the dot takes it
    b_bytes: int
    loaded_bytes: tuple  # element bytes of the loads feeding A and B (their shared copies)
    bytes: int
    region: object  # the innermost loop node: dots of one loop share it, other loops reuse the memory


def dot_buffers(kernel: Kernel, module: Module, config: Config | None, sizes: ElementSizes,
                fallback: int | None = None) -> list[DotBuffers] | None:
    """Shared memory of each tl.dot that runs in `config`; None when a dot's shapes or stages are
    unknown. Matches what triton 3.9 allocates for sm_90 (`metadata.shared`, cross-compiled):
    - operands loaded in the dot's own type: num_stages × (A + B) bytes (tutorial matmul
      128×128×64 fp16: 32,768 per stage; 128×256×64 bf16 with 3 stages: 147,456);
    - operands converted between the load and the dot (`tl.load(p).to(tl.bfloat16)` of fp32):
      (num_stages − 1) copies of the loaded tiles plus one converted B (128×256×64 fp32 → bf16
      with 3 stages: 229,376; 128×128×64 with 4 stages: 212,992);
    - 8-bit operands: (num_stages + 1) × (A + B) / 2 (int8 128×128×128: 81,920 with 4 stages,
      98,304 with 5; fp8 256×256×128 with 4 stages: 163,840);
    - one copy of each operand for a dot outside loops.
    An operand whose type the code does not give counts `fallback` bytes (default: the kernel's
    `ElementSizes.default()`)."""
    run = infer_kernel(module, kernel).run_for(config)
    ev = trip_evaluator(kernel, module, config)
    stages = config.get("num_stages") if config is not None else UNKNOWN
    out = []
    for c in kernel.calls_named("dot"):
        if not run.executes(c.node):
            continue
        operands = dot_operand_shapes(kernel, module, config, c)
        if operands is None:
            return None
        sa, sb = operands
        n_stages, region = 1, None
        loops = [lp for lp in c.loops if lp.kind in ("range", "tl.range")]
        if loops:
            own = ev.loop_stages(loops[-1])
            n_stages = own if own is not None else (stages if isinstance(stages, int) else None)
            if n_stages is None:
                return None
            n_stages, region = max(n_stages, 1), loops[-1].node
        a_node, b_node = c.arg(0, "input"), c.arg(1, "other")
        # An int32 accumulator takes 8-bit integer operands: Triton's dot has no other int path.
        unknown = 1 if _int_accumulator(kernel, module, c, run) else fallback or sizes.default()[0]
        da = sizes.of_value(a_node, run) or unknown
        db = sizes.of_value(b_node, run) or unknown
        la = sizes.of_load(a_node, run) or da
        lb = sizes.of_load(b_node, run) or db
        a, b = math.prod(sa), math.prod(sb)
        if n_stages == 1:
            total = a * da + b * db
        elif (la, lb) != (da, db):
            total = (n_stages - 1) * (a * la + b * lb) + b * db
        elif da == 1 and db == 1:
            total = (n_stages + 1) * (a + b) // 2
        else:
            total = n_stages * (a * da + b * db)
        out.append(DotBuffers(c, n_stages, sa, sb, da, db, (la, lb), total, region if region is not None else c.node))
    return out


def _int_accumulator(kernel: Kernel, module: Module, c: TlCall, run) -> bool:
    """Whether the dot accumulates in int32: `out_dtype=tl.int32`, or an `acc` argument or
    `acc +=` target made by `tl.zeros(..., dtype=tl.int32)`."""
    out = c.kwargs.get("out_dtype")
    a = run.at(out) if out is not None else None
    if a is not None and a.kind == "dtype" and a.value == "int32":
        return True
    accs = [c.arg(2, "acc")]
    parent = c.node.parent
    if parent is not None and parent.type == "augmented_assignment":
        accs.append(parent.child_by_field_name("left"))
    for n in accs:
        if n is None or n.type != "identifier":
            continue
        for asg in kernel.assignments.get(kernel.src.text_of(n), []):
            made = call_at(kernel, asg.value) if asg.value is not None else None
            if made is not None and made.name in ("zeros", "full") and \
                    tl_dtype(dtype_node(made), kernel, module) in ("int32", "uint32"):
                return True
    return False


def shared_bytes(kernel: Kernel, module: Module, config: Config | None, sizes: ElementSizes) -> int | None:
    """Shared memory of the pipelined tl.dot operands that run in `config` (`dot_buffers`): the
    dots of one loop add up; different loops (and dots outside loops) reuse the same memory, so
    the kernel needs the largest of them. 0 without tl.dot, None when unknown."""
    buffers = dot_buffers(kernel, module, config, sizes)
    if buffers is None:
        return None
    regions: dict = {}
    for d in buffers:
        regions[id(d.region)] = regions.get(id(d.region), 0) + d.bytes
    return max(regions.values(), default=0)
