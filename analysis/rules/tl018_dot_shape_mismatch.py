"""TL018: tl.dot operands whose inner dimensions differ, or that are not 2-D/3-D blocks."""

from __future__ import annotations

from ..findings import Severity
from ._shape_findings import shape_findings
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL018",
    name="dot-shape-mismatch",
    severity=Severity.ERROR,
    summary="tl.dot operands whose inner dimensions differ, or that are not 2-D/3-D blocks of one rank",
)


def check(ctx: KernelContext):
    yield from shape_findings(ctx, {"dot_inner", "dot_rank", "dot_batch", "dot_acc"})
