"""Static estimates of what a kernel moves and computes, per program and per launch: bytes, FLOPs,
the largest tile, the shared memory of pipelined `tl.dot`s, programs per launch.

Tile shapes and dtypes come from the shape engine (analysis/shapes), in the configuration being
estimated. Masks are ignored (a tail program is counted full) and caches are not modelled: each
access moves its bytes from DRAM. Every assumption made is listed in `Estimate.notes`.

Modules: figures (what is reported), memory (bytes and FLOPs), tiles (largest tile, shared
memory), elements (element sizes), pointers (the base pointer of an address), trips (loop trip
counts), grid (programs per launch).

Pure: no torch, no triton. Used by the hover card, TL009/TL013/TL015 and the profiler.
"""

from .elements import ElementSizes
from .figures import DEFAULT_ELEM_BYTES, MEMORY_OPS, Access, Estimate
from .grid import grid_programs
from .memory import estimate, estimates_for
from .pointers import base_pointer
from .tiles import DotBuffers, Tile, dot_buffers, dot_operand_shapes, largest_tile

__all__ = [
    "DEFAULT_ELEM_BYTES", "MEMORY_OPS", "Access", "DotBuffers", "ElementSizes", "Estimate", "Tile", "base_pointer",
    "dot_buffers", "dot_operand_shapes", "estimate", "estimates_for", "grid_programs", "largest_tile",
]
