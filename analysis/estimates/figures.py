"""What the estimates report: per access (`Access`) and per configuration (`Estimate`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import gpus
from ..findings import Range

DEFAULT_ELEM_BYTES = 4
MEMORY_OPS = ("load", "store") + ("atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
                                  "atomic_xor", "atomic_xchg", "atomic_cas")


@dataclass
class Access:
    """What one `tl.load` / `tl.store` / atomic / `tl.dot` does per program in one configuration."""

    kind: str  # "load", "store", "atomic_add", …, "dot"
    range: Range
    line: int  # 1-based
    base: str | None  # the pointer parameter it reads or writes (None for dot)
    shape: tuple | None  # tile shape, ints; for dot the two operand shapes; None when unknown
    elements: int | None  # per call
    elem_bytes: int | None
    trips: int | None  # product of enclosing loop trip counts (1 outside loops); None if unknown
    bytes: int | None  # per program, trips included when known (per iteration otherwise)
    flops: int | None = None  # for dot: 2·M·N·K per program (trips included when known)
    per_iteration: bool = False  # some enclosing loop's trip count is unknown
    note: str = ""


@dataclass
class Estimate:
    config: str  # the configuration's label
    bytes_loaded: int | None  # per program; None if some load could not be sized
    bytes_stored: int | None
    flops: int | None  # tl.dot FLOPs per program (only tl.dot counts); None when some are unknown
    shared_bytes: int | None  # pipelined tl.dot operand buffers; 0 without tl.dot
    programs: int | None  # grid size when resolvable
    per_launch_bytes: int | None
    per_launch_flops: int | None
    intensity: float | None  # FLOP per byte moved (loaded + stored)
    bound_hint: str | None  # "memory" / "compute" against the target's ridge point, None if unknown
    notes: list[str] = field(default_factory=list)
    per_iteration: bool = False  # figures are per iteration of a loop whose trip count is unknown
    accesses: list[Access] = field(default_factory=list)
    largest_tile: int | None = None  # elements of the largest tile (TL009)
    num_warps: int | None = None
    num_stages: int | None = None
    gpu: str = gpus.DEFAULT_GPU
    ridge: float = 0.0

    @property
    def bytes_total(self) -> int | None:
        if self.bytes_loaded is None or self.bytes_stored is None:
            return None
        return self.bytes_loaded + self.bytes_stored

    def access_at(self, line: int, column: int) -> Access | None:
        """The access whose call covers a 0-based position (for hovers on tl.load/store/dot)."""
        best = None
        for a in self.accesses:
            r = a.range
            inside = (r.start.line, r.start.column) <= (line, column) <= (r.end.line, r.end.column)
            if inside and (best is None or (r.start.line, r.start.column) >= (best.range.start.line, best.range.start.column)):
                best = a  # the innermost call wins
        return best
