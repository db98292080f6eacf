"""Where a kernel's time goes, line by line: GPU warp-stall samples folded onto the kernel's own
source lines. Standard library only: this file travels with the worker folder.

Two shapes:
- `SassSamples`, the "lines" job's result: what Nsight Compute's source counters sampled per SASS
  instruction of one launch, with the compiled kernel's line table (`nvdisasm -gi`).
- `LineProfile`, what a profile keeps (`LaunchProfile.lines`): those samples folded onto the lines
  of the kernel's file (profiling/line_fold.py), the hottest first. Code inlined from a jit helper
  counts for the kernel's line that called it, the line the user can act on; the helper's own
  line is kept in `via`.

Samples come from a separate replay under ncu, after the launch was timed: they never change the
timed figures, and `cost_s` says what they cost.
"""

from __future__ import annotations

from dataclasses import dataclass

try:  # imported as tritonlens.profiling.worker.line_profile
    from .json_message import NONE, OPT_STR, Message, json_field
    from .worker_error import WorkerError
except ImportError:  # a plain file in the worker folder
    from json_message import NONE, OPT_STR, Message, json_field
    from worker_error import WorkerError

# ncu's source-view stall columns ("stall_long_sb") → what the warp waits for, in a reader's words.
# Each fits an inlay hint beside its share: VS Code cuts a line's hints past 43 characters.
STALL_TEXT = {
    "long_sb": "waiting on global memory",
    "short_sb": "waiting on shared memory or MUFU",
    "mio": "shared-memory queue full",
    "lg": "global-memory queue full",
    "barrier": "waiting at a barrier",
    "membar": "waiting on a memory fence",
    "math": "math pipe busy",
    "wait": "fixed-latency dependency",
    "dispatch": "dispatch stall",
    "branch_resolving": "resolving a branch",
    "drain": "draining stores at exit",
    "imc": "constant-cache miss",
    "no_inst": "instruction-cache miss",
    "not_selected": "ready, another warp issued",
    "selected": "issuing",
    "sleep": "sleeping",
    "sleeping": "sleeping",
    "tex": "texture queue full",
    "misc": "other",
}

# SASS opcode (the part before the first dot) → the instruction class a hover names.
_OPCODE_KIND = {
    "LDG": "global load", "STG": "global store", "LD": "global load", "ST": "global store",
    "LDGSTS": "async copy to shared memory", "LDGDEPBAR": "async copy to shared memory",
    "UTMALDG": "TMA load", "UTMASTG": "TMA store", "UBLKCP": "TMA load", "UTMAPF": "TMA load",
    "LDS": "shared memory", "STS": "shared memory", "LDSM": "shared memory", "STSM": "shared memory",
    "HMMA": "tensor core", "IMMA": "tensor core", "HGMMA": "tensor core", "IGMMA": "tensor core",
    "QGMMA": "tensor core", "WARPGROUP": "tensor core", "DMMA": "tensor core",
    "BAR": "barrier", "SYNCS": "barrier", "WARPSYNC": "barrier", "MEMBAR": "barrier", "DEPBAR": "barrier",
    "ATOM": "atomic", "ATOMG": "atomic", "RED": "atomic", "ATOMS": "atomic", "REDUX": "warp reduction",
    "SHFL": "warp shuffle", "MUFU": "special function",
    "FFMA": "arithmetic", "FADD": "arithmetic", "FMUL": "arithmetic", "HFMA2": "arithmetic", "HADD2": "arithmetic",
    "HMUL2": "arithmetic", "FMNMX": "arithmetic", "IMAD": "integer arithmetic", "IADD3": "integer arithmetic",
    "LEA": "integer arithmetic", "SHF": "integer arithmetic", "LOP3": "integer arithmetic",
    "F2F": "conversion", "F2FP": "conversion", "I2F": "conversion", "F2I": "conversion",
    "BRA": "branch", "EXIT": "branch", "BSYNC": "branch", "BSSY": "branch",
}


def instruction_kind(sass: str) -> str:
    """`@!P0 LDG.E.128 R16, desc[UR4][R20.64]` → "global load"; unknown opcodes → "other"."""
    words = sass.strip().split()
    if words and words[0].startswith("@"):
        words = words[1:]
    opcode = words[0].split(".")[0] if words else ""
    return _OPCODE_KIND.get(opcode, "other")


def stall_text(reason: str) -> str:
    return STALL_TEXT.get(reason, reason.replace("_", " "))


# -- the "lines" job's result --------------------------------------------------------------------
@dataclass
class SassSample(Message):
    """One sampled SASS instruction of the launch."""

    offset: int = json_field(int)  # bytes from the kernel's first instruction
    sass: str = json_field(str)
    samples: int = json_field(int)  # warp-state samples at this instruction, issued or not
    stalls: dict = json_field(dict, factory=dict)  # {reason: not-issued samples}, STALL_TEXT's keys
    file: str | None = json_field(OPT_STR, None)  # innermost source file and line, as ncu correlated it
    line: int | None = json_field((int, NONE), None)


@dataclass
class SassSamples(Message):
    """The "lines" job's result: one launch's sampled instructions (only those with samples)."""

    kernel: str = json_field(str)
    key: str | None = json_field(OPT_STR, None)
    instructions: list = json_field(of=SassSample, many=True, factory=list)
    total_samples: int = json_field(int, 0)
    line_table: str | None = json_field(OPT_STR, None)  # `nvdisasm -gi` of the launched cubin
    ptx_locs: str | None = json_field(OPT_STR, None)  # the PTX's `.file` and `.loc` lines
    ir_locs: str | None = json_field(OPT_STR, None)  # the TTGIR's `#loc` lines: where helpers were inlined
    cost_s: float | None = json_field((int, float, NONE), None)  # wall seconds of the sampling run
    method: str = json_field(str, "ncu source counters")
    tensor_pipe_pct: float | None = json_field((int, float, NONE), None)  # the same run's tensor-pipe use


# -- folded onto the kernel's lines --------------------------------------------------------------
@dataclass
class LineStall(Message):
    reason: str = json_field(str)  # STALL_TEXT's key
    samples: int = json_field(int)


@dataclass
class LineInstructions(Message):
    kind: str = json_field(str)  # instruction_kind()'s class
    samples: int = json_field(int)
    example: str = json_field(str, "")  # the kind's most-sampled SASS instruction on this line


@dataclass
class LineSamples(Message):
    line: int = json_field(int)  # 1-based line of the kernel's file
    samples: int = json_field(int)
    share: float = json_field((int, float))  # of the launch's samples, 0..1
    stalls: list = json_field(of=LineStall, many=True, factory=list)  # most first
    instructions: list = json_field(of=LineInstructions, many=True, factory=list)  # most first
    via: list = json_field(list, factory=list)  # "standard.py:184": inlined helper lines, most first
    # lines of the global loads whose data this line's long-scoreboard stalls wait for
    waits_on: list = json_field(list, factory=list)

    @property
    def top_reason(self) -> str | None:
        return self.stalls[0].reason if self.stalls else None

    def label(self) -> str:
        """`38% · waiting on global memory`, or `80% · waiting on the load on line 27` where the
        load the stall waits for is known: the line's end-of-line hint."""
        pct = f"{100 * self.share:.0f}%"
        if not self.top_reason:
            return pct
        if self.top_reason == "long_sb" and self.waits_on:
            return f"{pct} · waiting on the load on line {self.waits_on[0]}"
        return f"{pct} · {stall_text(self.top_reason)}"


@dataclass
class LineProfile(Message):
    """A launch's samples on its kernel's lines (LaunchProfile.lines)."""

    kernel: str = json_field(str)
    key: str | None = json_field(OPT_STR, None)
    source_hash: str | None = json_field(OPT_STR, None)  # the kernel's source when it was sampled
    total_samples: int = json_field(int, 0)
    unattributed: int = json_field(int, 0)  # samples at instructions with no line of the kernel's file
    lines: list = json_field(of=LineSamples, many=True, factory=list)  # most samples first
    cost_s: float | None = json_field((int, float, NONE), None)
    method: str = json_field(str, "ncu source counters")
    # % of peak the tensor cores were busy in the sampled launch (None: not measured, or no tl.dot)
    tensor_pipe_pct: float | None = json_field((int, float, NONE), None)
    error: WorkerError | None = json_field(of=WorkerError, default=None)

    def hottest(self, n: int = 3, min_share: float = 0.05) -> list[LineSamples]:
        return [s for s in self.lines[:n] if s.share >= min_share]

    def to_json(self) -> dict:
        out = super().to_json()
        if out["error"] is None:
            del out["error"]
        return out
