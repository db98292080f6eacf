"""The reports built from the worker's replies: what `tritonlens profile|optimize --format json`
print and what the language server keeps and shows. Their JSON shapes are described here
only; the reading and writing is messages.py's (`from_json` / `to_json`).

Standard library only, beside messages.py: the worker folder travels as plain files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

try:  # imported as tritonlens.profiling.worker.reports
    from .json_message import NONE, OPT_STR, Message, json_field
    from .messages import Case, LaunchProfile, WorkerError
except ImportError:  # a plain file beside messages.py
    from json_message import NONE, OPT_STR, Message, json_field
    from messages import Case, LaunchProfile, WorkerError


@dataclass
class KernelProfile(Message):
    name: str = json_field(str)
    line: int = json_field(int)
    launches: list = json_field(of=LaunchProfile, many=True, factory=list)
    error: str | None = json_field(OPT_STR, None)


@dataclass
class ProfileReport(Message):
    """`tritonlens profile --format json` and the server's profile command."""

    file: str = json_field(str)
    backend: str = json_field(str, "local")
    mode: str | None = json_field(OPT_STR, None)
    device: dict | None = json_field((dict, NONE), None)
    ceilings: dict | None = json_field((dict, NONE), None)
    source: str | None = json_field(OPT_STR, None)
    cases: list = json_field(of=Case, many=True, factory=list)
    kernels: list = json_field(of=KernelProfile, many=True, factory=list)
    error: WorkerError | None = json_field(of=WorkerError, default=None)

    def kernel(self, name: str) -> KernelProfile | None:
        return next((k for k in self.kernels if k.name == name), None)


@dataclass
class CandidateReport(Message):
    """One proposed rewrite and the verifier's verdict on it."""

    keep_more: ClassVar[bool] = True
    proposer: str = json_field(str)
    title: str = json_field(str)
    accepted: bool = json_field(bool)
    reason: str = json_field(str, "")
    kernel: str | None = json_field(OPT_STR, None)
    quick_fix_title: str | None = json_field(OPT_STR, None)
    speedup: float | None = json_field((int, float, NONE), None)
    max_rel_error: float | None = json_field((int, float, NONE), None)
    diff: str = json_field(str, "")  # unified diff of the file
    source: str | None = json_field(OPT_STR, None)  # the rewritten file, when accepted
    more: dict = field(default_factory=dict)  # description, mode, checks, seeds, shapes, evidence, meta...

    def to_json(self) -> dict:
        out = super().to_json()
        if out["source"] is None:  # refused: no "source" key at all, as clients test for it
            del out["source"]
        return out


@dataclass
class OptimizeReport(Message):
    """`tritonlens optimize --format json` and the server's optimize command."""

    path: str = json_field(str)
    kernel: str | None = json_field(OPT_STR, None)
    device: str | None = json_field(OPT_STR, None)
    mode: str | None = json_field(OPT_STR, None)
    baseline_ms: float | None = json_field((int, float, NONE), None)
    cancelled: bool = json_field(bool, False)
    candidates: list = json_field(of=CandidateReport, many=True, factory=list)
    best: CandidateReport | None = json_field(of=CandidateReport, default=None)
    refusals: str | None = json_field(OPT_STR, None)
    notes: list = json_field(list, factory=list)
    time_line: str | None = json_field(OPT_STR, None)  # "time: 84 s in the worker: compile 12 s, inputs 3 s, …"
    budget_s: float | None = json_field((int, float, NONE), None)  # the whole optimize's limit; null: none
    seconds: float | None = json_field((int, float, NONE), None)  # what it took
