"""The values TL003 follows from a masked load to a reduction: what padded lanes hold.

Not a rule (the registry only loads `tl*` modules). `Const` is a lane-independent value (a
literal, `tl.zeros`, a reduction's result), `Pad` the value of the lanes a load masked off; both
carry whether every lane is known to be non-negative, which makes a padded 0 harmless for a max.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..values import UNKNOWN
from . import _offsets as off

UNDEF = "undefined"  # a masked load with no `other`


@dataclass(frozen=True)
class Const:
    """A lane-independent value (a literal, `tl.zeros`), known or not."""

    value: object = UNKNOWN
    nonneg: bool = False


@dataclass(frozen=True)
class Pad:
    """Values of lanes masked off by `loads`: `value` is what they hold (UNKNOWN, UNDEF, a float)."""

    value: object
    loads: frozenset
    direct: bool  # reached only through casts and names (a fix of `other` is then exact)
    nonneg: bool = False  # every lane (not only the padded ones) is ≥ 0
    chosen: bool = False  # set by `tl.where(mask, x, c)`: the author picked c for the masked lanes


UNARY = {
    "exp": math.exp, "math.exp": math.exp, "exp2": lambda v: 2.0 ** v, "math.exp2": lambda v: 2.0 ** v,
    "log": math.log, "math.log": math.log, "log2": math.log2, "math.log2": math.log2,
    "sqrt": math.sqrt, "math.sqrt": math.sqrt, "abs": abs, "math.abs": abs, "sigmoid": lambda v: 1 / (1 + math.exp(-v)),
}
NONNEG_FUNCS = {"exp", "math.exp", "exp2", "math.exp2", "sqrt", "math.sqrt", "abs", "math.abs", "sigmoid"}


def apply_fn(fn, *vals):
    if any(v is UNKNOWN for v in vals):
        return UNKNOWN
    if any(v is UNDEF for v in vals):
        return UNDEF
    try:
        return float(fn(*vals))
    except (ValueError, OverflowError, ZeroDivisionError, TypeError):
        if fn is math.log and vals and vals[0] == 0:
            return -math.inf
        return UNKNOWN


# Values that are never negative by what they count or measure: lengths, counts, norms,
# probabilities; the kernel names cover the second pass of a max-of-|x| or a bincount.
_NONNEG_POINTER = re.compile(r"(^|_)(seq_?)?(len|lens|lengths?|counts?|cnt|num_tokens|sizes?|norms?|probs?)(_|$)",
                             re.IGNORECASE)
_NONNEG_KERNEL = re.compile(r"max_norm|amax|absmax|abs_max|bincount|histc", re.IGNORECASE)


def nonneg_source(ctx, load) -> bool:
    ptr = load.arg(0, "pointer")
    bases = [n for n in off.names_in_text(ptr, ctx.src) if n in off.param_kinds(ctx).pointers] if ptr is not None else []
    return any(_NONNEG_POINTER.search(n) for n in bases) or bool(_NONNEG_KERNEL.search(ctx.kernel.name))


def unsigned_cast(dtype_text: str) -> bool:
    """`.to(tl.int1)`, `.to(tl.uint8)`: a value that cannot be negative."""
    return bool(re.search(r"\b(tl\.)?(int1|uint\d+)\b", dtype_text))


def as_nonneg(v, nonneg: bool):
    if not nonneg or v.nonneg:
        return v
    if isinstance(v, Pad):
        return Pad(v.value, v.loads, v.direct, True, v.chosen)
    return Const(v.value, True)
