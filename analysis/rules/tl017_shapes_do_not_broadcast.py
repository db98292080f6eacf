"""TL017: block shapes that cannot broadcast (operands, mask vs pointers, stored value vs pointers)."""

from __future__ import annotations

from ..findings import Severity
from ._shape_findings import shape_findings
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL017",
    name="shapes-do-not-broadcast",
    severity=Severity.ERROR,
    summary="block shapes that cannot broadcast: elementwise operands, a mask or a stored value against its pointer block",
)


def check(ctx: KernelContext):
    yield from shape_findings(ctx, {"broadcast", "mask", "other", "store_value"})
