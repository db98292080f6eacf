"""The "frontend" job's pieces and answer: one kernel's standalone module in, per configuration
whether Triton's front end (the AST → TTIR step of `triton.compile`) accepts it out.

Standard library only, beside messages.py: the worker folder travels as plain files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

try:  # imported as tritonlens.profiling.worker.frontend_report
    from .json_message import NONE, OPT_STR, Message, json_field
except ImportError:  # a plain file beside messages.py
    from json_message import NONE, OPT_STR, Message, json_field

# What the front end made of one configuration.
ACCEPTED = "accepted"  # the kernel lowered to TTIR
REFUSED = "refused"  # Triton raised while lowering it: `line` says where, when it knows
NOT_BUILT = "not-built"  # nothing was asked of Triton: the module or its arguments could not be made
STATUSES = (ACCEPTED, REFUSED, NOT_BUILT)


@dataclass
class FrontendKernel(Message):
    """One kernel to lower: `text` is analysis/standalone.py's module (the user's line numbers),
    `statements` its (first, last) 1-based line spans executed one by one, `functions` the names
    wrapped with `triton.jit` (the kernel first), `configs` compile-job CONFIG dicts."""

    name: str = json_field(str)
    path: str = json_field(str, "")
    text: str = json_field(str, "")
    statements: list = json_field(list, factory=list)
    functions: list = json_field(list, factory=list)
    configs: list = json_field(list, factory=list)


@dataclass
class FrontendOutcome(Message):
    """One configuration: `visited` lists the lines the front end lowered (accepted ones only),
    so a caller can tell a line that compiled from one a constexpr branch left out."""

    keep_more: ClassVar[bool] = True
    label: str = json_field(str, "")
    status: str = json_field(str, NOT_BUILT)
    line: int | None = json_field((int, NONE), None)  # the refused node's first line in the file
    end_line: int | None = json_field((int, NONE), None)  # and its last (a statement may span several)
    type: str = json_field(str, "")
    message: str = json_field(str, "")
    visited: list = json_field(list, factory=list)
    seconds: float = json_field((int, float), 0.0)
    more: dict = field(default_factory=dict)


@dataclass
class FrontendKernelResult(Message):
    name: str = json_field(str)
    error: str | None = json_field(OPT_STR, None)  # the standalone module itself could not be made
    configs: list = json_field(of=FrontendOutcome, many=True, factory=list)


@dataclass
class FrontendResult(Message):
    """The "frontend" job's result."""

    triton_version: str = json_field(str, "")
    kernels: list = json_field(of=FrontendKernelResult, many=True, factory=list)
