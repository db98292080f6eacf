"""A check's inputs and how its outputs are compared: seeded random tensors of the case's layout,
ragged shapes, deep clones, tolerances."""

from __future__ import annotations

import math

import torch
from verify_tracking import guarded_empty, raw_empty, span_of

def flatten(value, out: list, path: str = "") -> list:
    if isinstance(value, torch.Tensor):
        out.append((path, value))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            flatten(v, out, f"{path}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            flatten(v, out, f"{path}[{k!r}]")
    elif isinstance(value, (bool, int, float)) and path.startswith("out"):
        out.append((path, torch.tensor(value)))
    return out


def ragged_size(s: int, used: set) -> int:
    if s <= 2:
        return s
    r = max(3, int(s * 0.61))
    if r % 2 == 0:
        r -= 1
    while r in used and r > 3:
        r -= 2
    return max(r, 3)


def ragged_map(args, kwargs) -> dict:
    sizes = sorted({int(d) for _, t in flatten((args, kwargs), []) for d in t.shape if d > 2}, reverse=True)
    mapping, used = {}, set()
    for s in sizes:
        r = ragged_size(s, used)
        mapping[s] = r
        used.add(r)
    return mapping


def _layout_order(t: torch.Tensor) -> list[int]:
    """Dimensions from outermost to innermost, by stride (ties keep their order)."""
    return sorted(range(t.dim()), key=lambda d: (-t.stride(d), d))


def _random_like(t: torch.Tensor, shape, gen, exact_layout: bool) -> torch.Tensor:
    dev = t.device
    if exact_layout:
        need = max(span_of(t), 1)
        base = raw_empty(need, dtype=t.dtype, device=dev)
        out = base.as_strided(t.shape, t.stride(), t.storage_offset())
        fill = base
    else:
        order = _layout_order(t)
        dense = torch.empty([shape[d] for d in order], dtype=t.dtype, device=dev)
        inverse = [order.index(d) for d in range(t.dim())]
        out = dense.permute(*inverse) if t.dim() else dense
        fill = dense
    with torch.no_grad():
        if t.dtype.is_floating_point:
            ref = t.detach().float()
            finite = ref[torch.isfinite(ref)] if ref.numel() else ref
            std = float(finite.std()) if finite.numel() > 1 else 1.0
            mean = float(finite.mean()) if finite.numel() else 0.0
            if not math.isfinite(std) or std == 0.0:
                std = max(abs(mean), 1.0)
            cpu = torch.randn(fill.shape, generator=gen, dtype=torch.float32) * std + mean
            fill.copy_(cpu.to(t.dtype))
        elif t.dtype == torch.bool:
            fill.copy_(torch.randint(0, 2, fill.shape, generator=gen).bool())
        elif t.dtype.is_complex:
            fill.copy_(torch.randn(fill.shape, generator=gen, dtype=t.dtype))
        else:
            lo = int(t.min()) if t.numel() else 0
            hi = int(t.max()) if t.numel() else 1
            fill.copy_(torch.randint(lo, hi + 1, fill.shape, generator=gen).to(t.dtype))
    return out


def regenerate(value, gen, mapping: dict | None):
    """Same structure and layout as `value`, fresh random data; `mapping` rescales sizes."""
    if isinstance(value, torch.Tensor):
        shape = [mapping.get(int(d), int(d)) for d in value.shape] if mapping else list(value.shape)
        return _random_like(value, shape, gen, exact_layout=not mapping)
    if isinstance(value, tuple):
        return tuple(regenerate(v, gen, mapping) for v in value)
    if isinstance(value, list):
        return [regenerate(v, gen, mapping) for v in value]
    if isinstance(value, dict):
        return {k: regenerate(v, gen, mapping) for k, v in value.items()}
    if mapping and isinstance(value, int) and not isinstance(value, bool) and value in mapping:
        return mapping[value]
    return value


def clone_tree(value):
    if isinstance(value, torch.Tensor):
        if value.numel() == 0:
            return value.clone()
        # keep the layout (strides, storage offset); guard zones around it catch out-of-bounds access
        base, off = guarded_empty(span_of(value), value.dtype, value.device)
        out = base.as_strided(value.shape, value.stride(), off + value.storage_offset())
        with torch.no_grad():
            out.copy_(value)
        return out
    if isinstance(value, tuple):
        return tuple(clone_tree(v) for v in value)
    if isinstance(value, list):
        return [clone_tree(v) for v in value]
    if isinstance(value, dict):
        return {k: clone_tree(v) for k, v in value.items()}
    return value


def describe_shapes(args, kwargs) -> str:
    shapes = ["×".join(str(d) for d in t.shape) or "scalar" for _, t in flatten((args, kwargs), [])]
    return ", ".join(shapes[:6])


# -- comparing ---------------------------------------------------------------------------------
def tolerance(dtype: torch.dtype, uses_dot: bool) -> tuple[float, float]:
    """(relative-norm tolerance, max elementwise error relative to the reference's RMS)."""
    if dtype in (torch.float16, torch.bfloat16):
        return 1e-2, 6e-2
    if dtype == torch.float32:
        return (1e-3, 1e-2) if uses_dot else (1e-5, 1e-4)
    if dtype == torch.float64:
        return 1e-9, 1e-8
    if dtype.is_floating_point:  # fp8 and friends
        return 1e-1, 5e-1
    return 0.0, 0.0


def compare(ref: torch.Tensor, out: torch.Tensor, uses_dot: bool, mask: torch.Tensor | None = None,
            tols: tuple[float, float] | None = None) -> dict:
    """Is `out` the original's `ref`? Only the elements `mask` selects count (all, without one);
    `tols` replaces the dtype's (relative-norm, elementwise) tolerances. The original's NaN and
    infinities are part of its result: the candidate must have them in the same places."""
    if not isinstance(out, torch.Tensor):
        return {"ok": False, "reason": f"returned {type(out).__name__} where the original returned a tensor"}
    if tuple(ref.shape) != tuple(out.shape):
        return {"ok": False, "reason": f"shape {list(out.shape)} instead of {list(ref.shape)}"}
    if ref.dtype != out.dtype:
        return {"ok": False, "reason": f"dtype {out.dtype} instead of {ref.dtype}".replace("torch.", "")}
    tol, elem_tol = tols or tolerance(ref.dtype, uses_dot)
    r = ref.detach().to("cpu")
    o = out.detach().to("cpu")
    if mask is not None and bool(mask.all()):
        mask = None
    if mask is not None:
        r, o = r[mask.to("cpu")], o[mask.to("cpu")]
    if not (r.dtype.is_floating_point or r.dtype.is_complex):
        bad = int((r != o).sum())
        return {"ok": bad == 0, "reason": None if bad == 0 else f"{bad} of {r.numel()} elements differ",
                "rel_err": 0.0 if bad == 0 else float(bad) / max(1, r.numel()), "max_err": float(bad), "tol": 0.0}
    r = r.double()
    o = o.double()
    finite_r = torch.isfinite(r)
    out_nan = int((torch.isnan(o) & finite_r).sum())
    if out_nan:
        return {"ok": False, "reason": f"{out_nan} of {o.numel()} elements are NaN (unwritten or invalid) where "
                                       "the original's are finite",
                "rel_err": float("inf"), "max_err": float("inf"), "tol": tol, "nan": out_nan}
    if r.numel() == 0:
        return {"ok": True, "rel_err": 0.0, "max_err": 0.0, "tol": tol}
    same_special = torch.equal(torch.isnan(r), torch.isnan(o)) and torch.equal(r[torch.isinf(r)], o[torch.isinf(r)])
    if not torch.equal(finite_r, torch.isfinite(o)) or not same_special:
        return {"ok": False, "reason": "NaN or infinities differ from the original's", "rel_err": float("inf"),
                "max_err": float("inf"), "tol": tol}
    diff = (o[finite_r] - r[finite_r])
    rf = r[finite_r]
    norm = float(rf.norm())
    rms = norm / math.sqrt(max(1, rf.numel()))
    abs_diff = float(diff.norm())
    rel = abs_diff / norm if norm > 0 else abs_diff
    max_err = float(diff.abs().max()) if diff.numel() else 0.0
    max_rel = max_err / rms if rms > 0 else max_err
    ok = rel <= tol and max_rel <= elem_tol
    reason = None
    if not ok:
        worst = int(diff.abs().argmax()) if diff.numel() else 0
        reason = (f"relative error {rel:.3g} (tolerance {tol:g})" if rel > tol else
                  f"an element is off by {max_rel:.3g}× the output's RMS (tolerance {elem_tol:g})")
        reason += f", worst at flat index {worst}" + (" of the compared elements" if mask is not None else "")
    return {"ok": ok, "reason": reason, "rel_err": rel, "max_err": max_err, "tol": tol}


def agreeing(a: torch.Tensor, b: torch.Tensor, uses_dot: bool, rounding_moves: bool) -> torch.Tensor:
    """Elementwise: do two runs agree? Same NaN and infinities, integers exactly, floats within a
    share of the elementwise tolerance compare() allows. `rounding_moves` (a GPU): float atomics and
    split reductions move a result's last digits between runs; that is rounding, which the
    comparison tolerates anyway, so the whole tolerance counts as agreement. Elsewhere (the
    interpreter runs programs in order) 1% of it: any real difference is then a random draw, and two
    draws rarely come that close."""
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        return a == b
    x, y = a.detach().double(), b.detach().double()
    finite = torch.isfinite(x)
    rms = float(x[finite].norm()) / math.sqrt(max(1, int(finite.sum())))
    share = 1.0 if rounding_moves else 0.01
    close = (x - y).abs() <= share * tolerance(a.dtype, uses_dot)[1] * max(rms, 1e-300)
    same_special = (torch.isnan(x) & torch.isnan(y)) | (torch.isinf(x) & (x == y))
    return torch.where(finite & torch.isfinite(y), close, same_special)


def outputs_of(ret, args, kwargs) -> list:
    """[(name, tensor)]: what the call returned, then every tensor argument after the call."""
    out = flatten(ret, [], "out")
    out += [("arg" + p, t) for p, t in flatten((args, kwargs), [])]
    return out


# -- running -----------------------------------------------------------------------------------


def outputs_diff(outs_a, outs_b, uses_dot, masks=None) -> float:
    """The largest relative error between two runs' outputs (over the elements `masks` select)."""
    worst = 0.0
    for i, ((_, a), (_, b)) in enumerate(zip(outs_a, outs_b)):
        if a.dtype.is_floating_point and a.shape == b.shape:
            r = compare(a, b, uses_dot, mask=masks[i] if masks else None)
            worst = max(worst, r.get("rel_err", 0.0) if r.get("rel_err") is not None else 0.0)
    return worst
