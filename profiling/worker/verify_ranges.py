"""Adversarial value ranges: checks on inputs the harness never produces, sized to the dtype and to
what the original's kernels compute.

The ordinary checks copy the harness's mean and spread, and randn-sized values never overflow `exp`
nor reach a division's zero. A range check takes one check's inputs (the first seed, the smallest
case) and replaces the values of every floating-point input tensor (integers, booleans and indices
keep theirs), then compares the candidate with the original only where the original's output is
finite. The ranges are chosen from the text of the original's Triton functions (a regular
expression per operation, comments included: a false hit only costs a run):

- exp / exp2 / expm1 / sigmoid / softmax: values around log(max) of the tensor's dtype (fp32 and
  bf16 ≈ 88, fp16 ≈ 11), where an exp of the raw input overflows;
- log, division, sqrt / rsqrt: tiny values (1e-30 in fp32 and bf16, 1e-6 in fp16) and zeros, where
  a missing clamp or eps shows; with a division or a root also constant rows (a variance of 0);
- always: the data shifted by +1e3 and by -1e3 and scaled by 1e3, where accumulating in a narrow
  dtype overflows and a cancelling formula loses its digits.

They aim at catastrophic failures (NaN, overflow, a wrong magnitude), so their tolerances are
looser than the ordinary checks' (RANGE_TOLERANCES); rounding moved by a new summation order stays
well inside them.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

import torch
from verify_inputs import flatten

_EXP = re.compile(r"\b(exp2?|expm1|sigmoid|softmax|softplus)\s*\(")
_LOG = re.compile(r"\b(log2?|log10|log1p)\s*\(")
_DIV = re.compile(r"(?<![/*])/(?![/=])|\b(r?sqrt|sqrt_rn|fdiv|div_rn|reciprocal)\s*\(")

SHIFT = 1e3
_TINY = {torch.float16: 1e-6, torch.float64: 1e-300}  # others: 1e-30

# (relative-norm, elementwise relative to the output's RMS), per output dtype
RANGE_TOLERANCES = {torch.float16: (5e-2, 0.25), torch.bfloat16: (5e-2, 0.25), torch.float32: (1e-3, 1e-2),
                    torch.float64: (1e-6, 1e-5)}


@dataclass(frozen=True)
class ValueRange:
    kind: str  # exp | tiny | zeros | constant | shift | scale
    name: str  # as refusals quote it: near exp overflow (x≈88)
    value: float = 0.0


def kernel_text(source: str) -> str:
    """The text of the file's @jit functions (with autotune/heuristics above them); the whole file
    when it does not parse or has none."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    parts = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                "jit" in ast.unparse(d) for d in node.decorator_list):
            parts.append(ast.get_source_segment(source, node) or "")
    return "\n".join(parts) or source


def exp_limit(dtype: torch.dtype) -> float:
    """log of the dtype's largest finite value: exp overflows past it."""
    return math.log(torch.finfo(dtype).max)


def ranges_for(source: str, dtype: torch.dtype | None) -> list[ValueRange]:
    """The ranges to check an original (its text) on; `dtype` is its first floating-point input's
    (None: it has none, and no range applies)."""
    if dtype is None:
        return []
    text = kernel_text(source)
    out = []
    if _EXP.search(text):
        out.append(ValueRange("exp", f"near exp overflow (x≈{int(exp_limit(dtype))})"))
    divides = bool(_DIV.search(text))
    if divides or _LOG.search(text):
        tiny = _TINY.get(dtype, 1e-30)
        out += [ValueRange("tiny", f"tiny values (|x|≈{tiny:g})", tiny), ValueRange("zeros", "zeros")]
        if divides:
            out.append(ValueRange("constant", "constant rows"))
    out += [ValueRange("shift", f"shifted by +{SHIFT:g}", SHIFT), ValueRange("shift", f"shifted by -{SHIFT:g}", -SHIFT),
            ValueRange("scale", f"scaled by {SHIFT:g}", SHIFT)]
    return out


def first_float_dtype(args, kwargs) -> torch.dtype | None:
    return next((t.dtype for _, t in flatten((args, kwargs), []) if t.dtype.is_floating_point), None)


def apply_range(rng: ValueRange, args, kwargs, gen: torch.Generator) -> None:
    """Give every floating-point tensor among (args, kwargs) the range's values, in place (the
    tensors' layouts stay); the other tensors are left alone."""
    for _, t in flatten((args, kwargs), []):
        if not t.dtype.is_floating_point or t.numel() == 0:
            continue
        if torch._debug_has_internal_overlap(t) != 0:  # a broadcast view: change its storage
            t = t.as_strided((t.untyped_storage().nbytes() // t.element_size(),), (1,), 0)
        with torch.no_grad():
            x = t.detach().to("cpu", torch.float64)
            if rng.kind == "exp":
                x = exp_limit(t.dtype) + torch.randn(x.shape, generator=gen, dtype=torch.float64)
            elif rng.kind == "tiny":
                rms = float(x.norm()) / math.sqrt(x.numel())
                x = x / (rms if rms > 0 else 1.0) * rng.value
            elif rng.kind == "zeros":
                x = torch.zeros_like(x)
            elif rng.kind == "constant":  # eighths: a row's sum and mean are exact, its variance exactly 0
                x = (x[..., :1] * 8).round().div(8).expand(x.shape).clone() if x.dim() else x
            elif rng.kind == "shift":
                x = x + rng.value
            elif rng.kind == "scale":
                x = x * rng.value
            limit = torch.finfo(t.dtype).max / 2
            t.copy_(x.clamp(-limit, limit).to(t.dtype))


def range_tolerance(dtype: torch.dtype, ordinary: tuple[float, float]) -> tuple[float, float]:
    """Never tighter than the ordinary checks' tolerance."""
    loose = RANGE_TOLERANCES.get(dtype, (0.2, 1.0))
    return max(loose[0], ordinary[0]), max(loose[1], ordinary[1])
