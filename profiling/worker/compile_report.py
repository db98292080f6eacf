"""The compile report: what `compile_file` answers (and caches), what TL101–TL106, the hover's
"compiled for" section and Show IR read. `tritonlens compile --format json` prints a fixed subset
of it (compile_cli's `to_json`).

Standard library only, beside messages.py: the worker folder travels as plain files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

try:  # imported as tritonlens.profiling.worker.compile_report
    from .json_message import NONE, OPT_STR, Message, json_field
except ImportError:  # a plain file beside messages.py
    from json_message import NONE, OPT_STR, Message, json_field

OPT_INT = (int, NONE)
OPT_NUM = (int, float, NONE)


@dataclass
class CompileFailure(Message):
    """Why the module, a kernel or one configuration did not compile: the position is in the
    file (1-based line, 0-based column) when known."""

    keep_more: ClassVar[bool] = True
    type: str = json_field(str, "")
    message: str = json_field(str, "")
    line: int | None = json_field(OPT_INT, None)
    column: int | None = json_field(OPT_INT, None)
    more: dict = field(default_factory=dict)


@dataclass
class LineFacts(Message):
    """One source line of a configuration: PTX instructions, and SASS spill traffic when ptxas spilled."""

    line: int = json_field(int)
    instructions: int = json_field(int, 0)
    spill_bytes: int = json_field(int, 0)


@dataclass
class LoadFacts(Message):
    """The global loads of one source line: bytes per instruction, widest and narrowest."""

    line: int = json_field(int)
    widest: int = json_field(int)
    narrowest: int = json_field(int)
    instructions: int = json_field(int, 0)
    kinds: list = json_field(list, factory=list)  # e.g. "ld.global", "tma"


@dataclass
class DotFacts(Message):
    """One `tl.dot` as the compiler lowered it."""

    line: int | None = json_field(OPT_INT, None)
    column: int | None = json_field(OPT_INT, None)
    lowering: str = json_field(str, "")  # wgmma | mma.sync | tcgen05 | fma
    m: int | None = json_field(OPT_INT, None)
    n: int | None = json_field(OPT_INT, None)
    k: int | None = json_field(OPT_INT, None)
    a_dtype: str | None = json_field(OPT_STR, None)
    b_dtype: str | None = json_field(OPT_STR, None)
    input_precision: str | None = json_field(OPT_STR, None)


@dataclass
class WiderLoad(Message):
    line: int = json_field(int)
    bytes: int = json_field(int)
    could_be: int = json_field(int)


@dataclass
class VectorWhatIf(Message):
    """TL106's evidence: the loads a recompile with `arguments` divisible by 16 made wider."""

    arguments: list = json_field(list, factory=list)
    lines: list = json_field(of=WiderLoad, many=True, factory=list)


@dataclass
class ConfigFacts(Message):
    """One compiled configuration. Resource fields stay null when it did not compile (`error`)."""

    label: str | None = json_field(OPT_STR, None)
    labels: list = json_field(list, factory=list)  # launches sharing this specialisation
    constexprs: dict = json_field(dict, factory=dict)
    num_warps: int | None = json_field(OPT_INT, None)
    num_stages: int | None = json_field(OPT_INT, None)
    registers: int | None = json_field(OPT_INT, None)
    spill_bytes: int | None = json_field(OPT_INT, None)
    stack_bytes: int | None = json_field(OPT_INT, None)
    shared_bytes: int | None = json_field(OPT_INT, None)
    occupancy: float | None = json_field(OPT_NUM, None)  # percent, theoretical
    blocks_per_sm: int | None = json_field(OPT_INT, None)
    warps_per_sm: int | None = json_field(OPT_INT, None)
    limiter: str | None = json_field(OPT_STR, None)
    mma: str | None = json_field(OPT_STR, None)
    dots: list = json_field(of=DotFacts, many=True, factory=list)
    pipelined: bool | None = json_field((bool, NONE), None)
    pipeline: str | None = json_field(OPT_STR, None)
    vectorized: bool | None = json_field((bool, NONE), None)
    loads: list = json_field(of=LoadFacts, many=True, factory=list)
    lines: list = json_field(of=LineFacts, many=True, factory=list)
    error: CompileFailure | None = json_field(of=CompileFailure, default=None)
    signature: dict | None = json_field((dict, NONE), None)  # {param: "*fp16" | "i32" | "constexpr"}
    specialization: dict | None = json_field((dict, NONE), None)
    key: str | None = json_field(OPT_STR, None)  # names the IR folder in the compile cache
    cached: bool | None = json_field((bool, NONE), None)
    compile_s: float | None = json_field(OPT_NUM, None)
    args: dict | None = json_field((dict, NONE), None)  # the compile job's arguments (CompileJob's ARG)
    # Where the configuration came from: the weakest source of its values, strongest first
    # captured | configs | static | pinned | assumed (profiling/assumed_values.py says how each is chosen).
    source: str = json_field(str, "captured")
    value_sources: dict = json_field(dict, factory=dict)  # {constexpr / num_warps / num_stages / pinned arg: source}
    assumed: list = json_field(list, factory=list)  # each assumed value (with how to pin it) and argument stand-in
    vector_whatif: VectorWhatIf | None = json_field(of=VectorWhatIf, default=None)

    @property
    def compiled(self) -> bool:
        return self.error is None and self.registers is not None


@dataclass
class KernelCompile(Message):
    name: str = json_field(str)
    line: int | None = json_field(OPT_INT, None)
    configs: list = json_field(of=ConfigFacts, many=True, factory=list)
    lines: list = json_field(of=LineFacts, many=True, factory=list)  # the first compiled configuration's
    error: CompileFailure | None = json_field(of=CompileFailure, default=None)  # nothing compiled
    source: str | None = json_field(OPT_STR, None)  # captured | configs | static (the static model's path)
    note: str | None = json_field(OPT_STR, None)  # why it was compiled from the static model, or not at all
    pin_messages: list = json_field(list, factory=list)  # pins that were ignored or not used, and why
    reason: str | None = json_field(OPT_STR, None)  # why no configuration compiled, one line (no_facts.py)


@dataclass
class CompileReport(Message):
    """`compile_file`'s answer for one file and target."""

    path: str = json_field(str)
    target: str = json_field(str, "sm_90")
    triton_version: str | None = json_field(OPT_STR, None)
    kernels: list = json_field(of=KernelCompile, many=True, factory=list)
    error: CompileFailure | None = json_field(of=CompileFailure, default=None)  # the module failed
    cached: bool = json_field(bool, False)
    source: str = json_field(str, "")  # where the configurations came from, in words
    capture_errors: list = json_field(list, factory=list)  # why the harness stopped early
    # Top-level statements of the file that raised in the worker and were skipped (the kernels'
    # own definitions never depend on them): "line 12: ModuleNotFoundError: No module named 'fla'".
    module_failures: list = json_field(list, factory=list)

    def kernel(self, name: str) -> KernelCompile | None:
        return next((k for k in self.kernels if k.name == name), None)
