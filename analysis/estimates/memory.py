"""Bytes moved and FLOPs per program and per launch, for one configuration of a kernel.

For each `tl.load` / `tl.store` / atomic: elements = product of the dimensions of its pointer
block (block pointers included), times the element size, times the trip counts of the enclosing
loops. `tl.dot` counts 2·M·N·K FLOPs per call, and only `tl.dot`: FLOPs are the tensor-core work,
elementwise arithmetic is not counted. A load, store or `tl.dot` in a JIT helper the kernel calls
makes the figure it belongs to unknown (None), never 0. Calls in a branch the configuration does not take
(`if HAS_BIAS:` with HAS_BIAS=False) are not counted.
"""

from __future__ import annotations

import math

from .. import gpus
from ..model import Config, Kernel, Module
from ..shapes import infer_kernel
from ..values import UNKNOWN, Value
from .elements import ElementSizes
from .figures import MEMORY_OPS, Access, Estimate
from .grid import grid_programs
from .helpers import uncounted
from .pointers import base_pointer
from .tiles import shared_bytes
from .trips import trip_evaluator


def _with_scalars(config: Config | None, scalars: dict[str, int]) -> Config:
    merged = dict(config.scalars) if config is not None else {}
    merged.update({k: Value(v, "given") for k, v in scalars.items()})
    return Config(config.label if config else "given values", dict(config.values) if config else {},
                  config.launch if config else None, merged)


def estimate(kernel: Kernel, config: Config | None, module: Module,
             elem_bytes: dict[str, int] | None = None, *, scalars: dict[str, int] | None = None,
             gpu: str | None = None) -> Estimate:
    """Estimates for one configuration of `kernel`.

    `elem_bytes` maps pointer parameter names to element sizes (the profiler knows the dtypes);
    `scalars` maps runtime parameters to values (`{"K": 4096, "n_elements": 1 << 24}`) so loop trip
    counts and the grid can be resolved; `gpu` picks the ridge point (default H100).
    """
    target = gpus.get(gpu)
    if scalars:
        config = _with_scalars(config, scalars)
    shapes = infer_kernel(module, kernel)
    run = shapes.run_for(config)
    ev = trip_evaluator(kernel, module, config)
    sizes = ElementSizes(kernel, module, elem_bytes)
    notes: list[str] = []
    noted_loops: set = set()
    default_size, default_note = sizes.default()
    used_default = False
    accesses: list[Access] = []
    loaded: int | None = 0
    stored: int | None = 0
    flops = 0
    flops_known = True
    per_iteration = False
    largest = 0
    largest_known = True
    not_run = 0

    def tile(node):
        nonlocal largest, largest_known
        shp = shapes.tile_shape(node, config) if node is not None else None
        if shp is None:
            largest_known = False
        elif shp:
            largest = max(largest, math.prod(shp))
        return shp

    for c in kernel.calls:
        if c.name not in MEMORY_OPS and c.name not in ("dot", "zeros", "full", "arange"):
            continue
        if not run.executes(c.node):
            not_run += c.name in MEMORY_OPS or c.name == "dot"
            continue
        if c.name in ("zeros", "full", "arange"):
            tile(c.node)
            continue
        line = c.range.start.line + 1
        trips = ev.trips(c, notes, noted_loops)
        if trips is None and c.loops:
            per_iteration = True
        mult = trips if trips is not None else 1
        if c.name == "dot":
            sa, sb = tile(c.arg(0, "input")), tile(c.arg(1, "other"))
            out = None
            if sa is not None and sb is not None and len(sa) >= 2 and len(sb) >= 2:
                m, k, n = math.prod(sa[:-1]), sa[-1], sb[-1]
                out = 2 * m * n * k * mult
                largest = max(largest, m * n)
                flops += out
            else:
                flops_known = False
                notes.append(f"tl.dot at line {line}: operand tile shapes unknown in this configuration")
            accesses.append(Access("dot", c.range, line, None, None if sa is None or sb is None else (sa, sb), None,
                                   None, trips, None, out, trips is None and bool(c.loops)))
            continue
        ptr = c.arg(0, "pointer")
        base = base_pointer(kernel, ptr)
        shp = tile(ptr)
        size, size_note = None, ""
        if base is not None and base in sizes.given:
            size = int(sizes.given[base])
        elif c.name == "store":
            size = sizes.of_value(c.arg(1, "value"), run)
            if size is not None:
                size_note = "element size from the stored value's dtype"
        if size is None:
            size, used_default = default_size, True
            size_note = "assumed element size"
        elems = math.prod(shp) if shp is not None else None
        nbytes = elems * size * mult if elems is not None else None
        accesses.append(Access(c.name, c.range, line, base, shp, elems, size, trips, nbytes, None,
                               trips is None and bool(c.loops), size_note))
        if c.name == "load":
            loaded = None if loaded is None or nbytes is None else loaded + nbytes
        elif c.name == "store":
            stored = None if stored is None or nbytes is None else stored + nbytes
        else:  # an atomic reads and writes its elements
            loaded = None if loaded is None or nbytes is None else loaded + nbytes
            stored = None if stored is None or nbytes is None else stored + nbytes
        if nbytes is None:
            notes.append(f"tl.{c.name} at line {line}: tile shape unknown in this configuration")
    helpers = uncounted(kernel, module)
    if helpers.dots:
        flops_known = False
    if helpers.loads:
        loaded = None
    if helpers.stores:
        stored = None
    notes.extend(helpers.notes())
    if used_default:
        notes.append(default_note)
    if not_run:
        notes.append(f"{not_run} memory access{'es' if not_run > 1 else ''} or tl.dot in branches this "
                     f"configuration does not take: not counted")

    shared = shared_bytes(kernel, module, config, sizes)
    programs = grid_programs(kernel, module, config, scalars)
    total = None if loaded is None or stored is None else loaded + stored
    intensity = None
    bound = None
    if total is not None and flops_known:
        if total > 0:
            intensity = flops / total
            bound = "compute" if intensity >= target.ridge else "memory"
        elif flops > 0:
            bound = "compute"
    per_launch_bytes = programs * total if programs is not None and total is not None and not per_iteration else None
    per_launch_flops = programs * flops if programs is not None and flops_known and not per_iteration else None
    if programs is not None and per_iteration:
        notes.append("per-launch figures need the loop trip counts: pass the runtime sizes as `scalars`")
    if any(c.name in ("load", "store") and "mask" in c.kwargs for c in kernel.calls):
        notes.append("masked accesses counted as full tiles")
    nw = config.get("num_warps") if config is not None else UNKNOWN
    ns = config.get("num_stages") if config is not None else UNKNOWN
    return Estimate(
        config=config.label if config is not None else "defaults",
        bytes_loaded=loaded, bytes_stored=stored, flops=flops if flops_known else None,
        shared_bytes=shared, programs=programs, per_launch_bytes=per_launch_bytes,
        per_launch_flops=per_launch_flops, intensity=intensity, bound_hint=bound, notes=notes,
        per_iteration=per_iteration, accesses=accesses,
        largest_tile=largest if largest_known and largest > 0 else None,
        num_warps=nw if isinstance(nw, int) else None, num_stages=ns if isinstance(ns, int) else None,
        gpu=target.name, ridge=target.ridge,
    )


def estimates_for(kernel: Kernel, module: Module, elem_bytes: dict[str, int] | None = None, *,
                  scalars: dict[str, int] | None = None, gpu: str | None = None) -> list[Estimate]:
    """One `Estimate` per configuration of the kernel (launch sites × autotune configs), in order."""
    configs = kernel.configs or [None]
    return [estimate(kernel, c, module, elem_bytes, scalars=scalars, gpu=gpu) for c in configs]
