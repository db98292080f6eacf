"""The "verify" job's result messages: what the worker saw of each candidate (`Evidence`, one
`Check` per run against the original). messages.py re-exports them with the rest of the protocol;
tritonlens.rewrite.verify decides what they mean. Standard library only, like messages.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

try:  # imported as tritonlens.profiling.worker.verify_messages
    from .json_message import NONE, OPT_STR, Message, json_field
except ImportError:  # a plain file in the worker folder
    from json_message import NONE, OPT_STR, Message, json_field


@dataclass
class Check(Message):
    """One run of a candidate against the original on one seed and case (or the ragged shape), or
    on the inputs of one adversarial value range (`range`: its name, worker/verify_ranges.py)."""

    keep_more: ClassVar[bool] = True
    seed: int = json_field(int)
    case: int | str = json_field((int, str))  # a case index, or "ragged"
    label: str = json_field(str, "")
    shapes: str = json_field(str, "")
    ok: bool = json_field(bool, False)
    reason: str | None = json_field(OPT_STR, None)
    rel_err: float | None = json_field((int, float, NONE), None)
    max_err: float | None = json_field((int, float, NONE), None)
    tol: float | None = json_field((int, float, NONE), None)
    run_diff: float | None = json_field((int, float, NONE), None)  # GPU: two runs on the same inputs
    range: str | None = json_field(OPT_STR, None)  # "near exp overflow (x≈88)"; None: an ordinary check
    more: dict = field(default_factory=dict)


@dataclass
class CandidateError(Message):
    stage: str = json_field(str)  # import | run | timing | cases
    type: str = json_field(str)  # syntax | compile | exception | unexercised
    message: str = json_field(str, "")
    traceback: str = json_field(str, "")


@dataclass
class Evidence(Message):
    """What the "verify" job saw of one candidate; tritonlens.rewrite.verify decides what it means."""

    keep_more: ClassVar[bool] = True
    id: str = json_field(str)
    error: CandidateError | None = json_field(of=CandidateError, default=None)
    checks: list = json_field(of=Check, many=True, factory=list)
    launches: int = json_field(int, 0)  # Triton launches of the candidate's own kernels, all checks
    calls: int = json_field(int, 0)
    ops_added: list = json_field(list, factory=list)  # aten ops the candidate ran outside kernels, the original not
    stability: str = json_field(str, "")
    ragged_sizes: dict | None = json_field((dict, NONE), None)
    ragged_note: str | None = json_field(OPT_STR, None)
    timing: dict | None = json_field((dict, NONE), None)  # {"orig_ms": [...], "cand_ms": [...]}
    # elements left out of the comparisons, and why: the original leaves them unwritten, or they
    # differ between two runs of the original
    notes: list = json_field(list, factory=list)
    ranges_skipped: list = json_field(list, factory=list)  # 'range "zeros": the original gives no finite element ...'
    ghost_ran: bool = json_field(bool, False)  # replayed with its kernels' launches made no-ops
    ghost_failure: str | None = json_field(OPT_STR, None)  # the replay still gave the original's output
    out_bytes: int | None = json_field((int, NONE), None)  # bytes of output elements written on the timed case
    planned: int | None = json_field((int, NONE), None)  # ordinary checks the plan holds (None: seeds × shapes)
    one_seed: str | None = json_field(OPT_STR, None)  # the real-size case's shapes, checked on one seed only
    more: dict = field(default_factory=dict)  # seconds, extra


@dataclass
class PhaseTimes(Message):
    """Wall seconds of one verify job by phase (worker/verify_clock.py): each second counted once."""

    inputs: float = json_field((int, float), 0.0)  # drawing and copying inputs
    reference: float = json_field((int, float), 0.0)  # the original's runs
    candidate: float = json_field((int, float), 0.0)  # the candidates' runs (checks, value ranges, ghost replay)
    compare: float = json_field((int, float), 0.0)  # comparisons, masks of written and deterministic elements
    timing: float = json_field((int, float), 0.0)  # A/B rounds, tune and baseline timings
    compile: float = json_field((int, float), 0.0)  # Triton compiles, wherever they happened
    other: float = json_field((int, float), 0.0)
    total: float = json_field((int, float), 0.0)


@dataclass
class Precompiled(Message):
    """What a "precompile" action did (worker/verify_precompile.py)."""

    compiled: int = json_field(int, 0)  # kernels compiled ahead, now in Triton's cache
    threads: int = json_field(int, 0)
    note: str = json_field(str, "")


@dataclass
class VerifyResult(Message):
    """The "verify" job's result."""

    mode: str = json_field(str)  # gpu | interpreter
    device: str = json_field(str, "")
    cases: int = json_field(int, 1)
    seeds: int = json_field(int, 1)
    candidates: list = json_field(of=Evidence, many=True, factory=list)
    baseline_ms: float | None = json_field((int, float, NONE), None)
    source: str = json_field(str, "")  # where the cases came from: harness | tritonlens_cases | records
    phases: PhaseTimes | None = json_field(of=PhaseTimes, default=None)
    # bytes per element of the timed case's first floating-point tensor argument (the original's
    # check): what a config search sizes shared memory by; None where the case has none
    elem_bytes: int | None = json_field((int, NONE), None)
    precompiled: Precompiled | None = json_field(of=Precompiled, default=None)  # action "precompile" only
