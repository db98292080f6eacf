"""A check's inputs and how its outputs are compared: seeded random tensors of the case's layout,
ragged shapes, deep clones, tolerances."""

from __future__ import annotations

import math

import torch
from verify_clock import CLOCK
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


def _randn(shape, gen, device) -> torch.Tensor:
    """Seeded float32 normals, drawn where they are used: on a GPU, 2^27 of them drawn on the host
    would take seconds and cross the bus; the device's own generator is seeded from `gen`."""
    if torch.device(device).type == "cpu":
        return torch.randn(shape, generator=gen, dtype=torch.float32)
    local = torch.Generator(device=device).manual_seed(int(torch.randint(0, 2**62, (1,), generator=gen)))
    return torch.randn(shape, generator=local, dtype=torch.float32, device=device)


def _randint(lo: int, hi: int, shape, gen, device) -> torch.Tensor:
    """Seeded integers in [lo, hi), drawn where they are used, like _randn: a mask or an index
    tensor of 2^27 elements drawn on the host took 20 s of a verification at benchmark size."""
    if torch.device(device).type == "cpu":
        return torch.randint(lo, hi, shape, generator=gen)
    local = torch.Generator(device=device).manual_seed(int(torch.randint(0, 2**62, (1,), generator=gen)))
    return torch.randint(lo, hi, shape, generator=local, device=device)


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
            fill.copy_((_randn(fill.shape, gen, dev) * std + mean).to(t.dtype))
        elif t.dtype == torch.bool:
            fill.copy_(_randint(0, 2, fill.shape, gen, dev).bool())
        elif t.dtype.is_complex:
            fill.copy_(torch.randn(fill.shape, generator=gen, dtype=t.dtype))
        else:
            lo = int(t.min()) if t.numel() else 0
            hi = int(t.max()) if t.numel() else 1
            fill.copy_(_randint(lo, hi + 1, fill.shape, gen, dev).to(t.dtype))
    return out


def regenerate(value, gen, mapping: dict | None):
    """Same structure and layout as `value`, fresh random data; `mapping` rescales sizes."""
    with CLOCK.phase("inputs"):
        return _regenerate(value, gen, mapping)


def _regenerate(value, gen, mapping: dict | None):
    if isinstance(value, torch.Tensor):
        shape = [mapping.get(int(d), int(d)) for d in value.shape] if mapping else list(value.shape)
        return _random_like(value, shape, gen, exact_layout=not mapping)
    if isinstance(value, tuple):
        return tuple(_regenerate(v, gen, mapping) for v in value)
    if isinstance(value, list):
        return [_regenerate(v, gen, mapping) for v in value]
    if isinstance(value, dict):
        return {k: _regenerate(v, gen, mapping) for k, v in value.items()}
    if mapping and isinstance(value, int) and not isinstance(value, bool) and value in mapping:
        return mapping[value]
    return value


def clone_tree(value):
    """A private copy of every tensor in `value`, each with its layout and guard zones around it."""
    with CLOCK.phase("inputs"):
        return _clone_tree(value)


def _clone_tree(value):
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
        return tuple(_clone_tree(v) for v in value)
    if isinstance(value, list):
        return [_clone_tree(v) for v in value]
    if isinstance(value, dict):
        return {k: _clone_tree(v) for k, v in value.items()}
    return value


def describe_shapes(args, kwargs) -> str:
    shapes = ["×".join(str(d) for d in t.shape) or "scalar" for _, t in flatten((args, kwargs), [])]
    return ", ".join(shapes[:6])


# -- comparing ---------------------------------------------------------------------------------
# Comparisons run where the tensors are, a slice at a time: a GPU output of 2^27 elements is never
# copied to the host, and the float64 working copies stay at a few slices' size.
CHUNK = 1 << 22


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


def _slices(ref: torch.Tensor, out: torch.Tensor, mask, chunk: int, skip: int = 0):
    """(ref, out, selected) slices of the flattened tensors, in logical (row-major) order, so a
    flat index over the selected elements means what `ref[mask]` would."""
    dev = work_device(ref, out)
    r, o = ref.detach().reshape(-1), out.detach().reshape(-1)
    m = mask.detach().reshape(-1) if mask is not None else None
    for start in range(skip * chunk, r.numel(), chunk):
        end = start + chunk
        yield r[start:end].to(dev), o[start:end].to(dev), (m[start:end].to(dev) if m is not None else None)


def work_device(ref: torch.Tensor, out: torch.Tensor):
    """Where a comparison runs: on the GPU if either side is there (one side may have been moved
    to the host to make room), a slice at a time."""
    return ref.device if ref.device.type != "cpu" else out.device


def compare(ref: torch.Tensor, out: torch.Tensor, uses_dot: bool, mask: torch.Tensor | None = None,
            tols: tuple[float, float] | None = None, chunk: int | None = None) -> dict:
    """Is `out` the original's `ref`? Only the elements `mask` selects count (all, without one);
    `tols` replaces the dtype's (relative-norm, elementwise) tolerances. The original's NaN and
    infinities are part of its result: the candidate must have them in the same places. Runs on
    the tensors' device, `chunk` elements at a time; the norms are sums of squares over all of them."""
    with CLOCK.phase("compare"):
        return _compare(ref, out, uses_dot, mask, tols, chunk)


def _compare(ref, out, uses_dot, mask, tols, chunk) -> dict:
    if not isinstance(out, torch.Tensor):
        return {"ok": False, "reason": f"returned {type(out).__name__} where the original returned a tensor"}
    if tuple(ref.shape) != tuple(out.shape):
        return {"ok": False, "reason": f"shape {list(out.shape)} instead of {list(ref.shape)}"}
    if ref.dtype != out.dtype:
        return {"ok": False, "reason": f"dtype {out.dtype} instead of {ref.dtype}".replace("torch.", "")}
    tol, elem_tol = tols or tolerance(ref.dtype, uses_dot)
    if mask is not None and bool(mask.all()):
        mask = None
    step = max(1, int(chunk or CHUNK))
    dev = work_device(ref, out)
    zero = torch.zeros((), dtype=torch.float64, device=dev)
    count = torch.zeros((), dtype=torch.int64, device=dev)
    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        bad = torch.zeros((), dtype=torch.int64, device=dev)
        for r, o, m in _slices(ref, out, mask, step):
            differ = r != o
            bad += (differ & m).sum() if m is not None else differ.sum()
            count += m.sum() if m is not None else r.numel()
        bad, n = int(bad), int(count)
        return {"ok": bad == 0, "reason": None if bad == 0 else f"{bad} of {n} elements differ",
                "rel_err": 0.0 if bad == 0 else float(bad) / max(1, n), "max_err": float(bad), "tol": 0.0}
    out_nan = torch.zeros((), dtype=torch.int64, device=dev)
    special = torch.zeros((), dtype=torch.bool, device=dev)
    n_finite = torch.zeros((), dtype=torch.int64, device=dev)
    ref_sq, diff_sq = zero.clone(), zero.clone()
    peaks, where = [], []  # per slice: its largest |difference|, and that element's flat index
    for r, o, m in _slices(ref, out, mask, step):
        r, o = r.double(), o.double()
        sel = m if m is not None else torch.ones(r.shape, dtype=torch.bool, device=dev)
        count += sel.sum()
        finite_r, finite_o = torch.isfinite(r), torch.isfinite(o)
        nan_r, nan_o = torch.isnan(r), torch.isnan(o)
        out_nan += (nan_o & finite_r & sel).sum()
        special |= (sel & ((nan_r != nan_o) | (finite_r != finite_o) | (torch.isinf(r) & (r != o)))).any()
        used = finite_r & sel
        d = torch.where(used, o - r, 0.0)
        rr = torch.where(used, r, 0.0)
        ref_sq += (rr * rr).sum()
        diff_sq += (d * d).sum()
        size = d.abs()
        peaks.append(size.max())
        where.append((n_finite.clone(), size.argmax()))  # the flat index is counted only for a refusal
        n_finite += used.sum()
    n, bad_nan = int(count), int(out_nan)
    if bad_nan:
        return {"ok": False, "reason": f"{bad_nan} of {n} elements are NaN (unwritten or invalid) where "
                                       "the original's are finite",
                "rel_err": float("inf"), "max_err": float("inf"), "tol": tol, "nan": bad_nan}
    if n == 0:
        return {"ok": True, "rel_err": 0.0, "max_err": 0.0, "tol": tol}
    if bool(special):
        return {"ok": False, "reason": "NaN or infinities differ from the original's", "rel_err": float("inf"),
                "max_err": float("inf"), "tol": tol}
    norm = math.sqrt(float(ref_sq))
    rms = norm / math.sqrt(max(1, int(n_finite)))
    abs_diff = math.sqrt(float(diff_sq))
    rel = abs_diff / norm if norm > 0 else abs_diff
    peak = torch.stack(peaks)
    first = int(peak.argmax())
    max_err = float(peak[first])
    max_rel = max_err / rms if rms > 0 else max_err
    ok = rel <= tol and max_rel <= elem_tol
    reason = None
    if not ok:
        before, at = where[first]
        r, o, m = next(_slices(ref, out, mask, step, skip=first))
        used = torch.isfinite(r.double()) if m is None else torch.isfinite(r.double()) & m
        worst = int(before) + int(used[:int(at)].sum())
        reason = (f"relative error {rel:.3g} (tolerance {tol:g})" if rel > tol else
                  f"an element is off by {max_rel:.3g}× the output's RMS (tolerance {elem_tol:g})")
        reason += f", worst at flat index {worst}" + (" of the compared elements" if mask is not None else "")
    return {"ok": ok, "reason": reason, "rel_err": rel, "max_err": max_err, "tol": tol}


def agreeing(a: torch.Tensor, b: torch.Tensor, uses_dot: bool, rounding_moves: bool,
             chunk: int | None = None) -> torch.Tensor:
    """Elementwise: do two runs agree? Same NaN and infinities, integers exactly, floats within a
    share of the elementwise tolerance compare() allows. `rounding_moves` (a GPU): float atomics and
    split reductions move a result's last digits between runs; that is rounding, which the
    comparison tolerates anyway, so the whole tolerance counts as agreement. Elsewhere (the
    interpreter runs programs in order) 1% of it: any real difference is then a random draw, and two
    draws rarely come that close. On the tensors' device, `chunk` elements at a time."""
    with CLOCK.phase("compare"):
        return _agreeing(a, b, uses_dot, rounding_moves, chunk)


def _agreeing(a, b, uses_dot, rounding_moves, chunk) -> torch.Tensor:
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        return a.to(work_device(a, b)) == b.to(work_device(a, b))
    step = max(1, int(chunk or CHUNK))
    dev = work_device(a, b)
    sq = torch.zeros((), dtype=torch.float64, device=dev)
    n_finite = torch.zeros((), dtype=torch.int64, device=dev)
    for x, _, _ in _slices(a, b, None, step):
        x = x.double()
        finite = torch.isfinite(x)
        sq += torch.where(finite, x * x, 0.0).sum()
        n_finite += finite.sum()
    rms = math.sqrt(float(sq)) / math.sqrt(max(1, int(n_finite)))
    share = 1.0 if rounding_moves else 0.01
    bound = share * tolerance(a.dtype, uses_dot)[1] * max(rms, 1e-300)
    agree = torch.empty(a.numel(), dtype=torch.bool, device=dev)
    start = 0
    for x, y, _ in _slices(a, b, None, step):
        x, y = x.double(), y.double()
        close = (x - y).abs() <= bound
        same_special = (torch.isnan(x) & torch.isnan(y)) | (torch.isinf(x) & (x == y))
        agree[start:start + x.numel()] = torch.where(torch.isfinite(x) & torch.isfinite(y), close, same_special)
        start += x.numel()
    return agree.reshape(a.shape)


def to_host(outs: list) -> list:
    """A run's outputs copied to the host, to make room on the GPU for the next run."""
    return [(name, t.detach().cpu()) for name, t in outs]


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


def nothing_finite(outs_masks: list) -> bool:
    """Every (output, mask) compared holds only NaN or infinities where it is compared: any
    candidate, even one whose kernels do nothing, would match it. False when nothing is compared."""
    if not outs_masks or not any(m is None or bool(m.any()) for _, m in outs_masks):
        return False
    return all(t.dtype.is_floating_point
               and not bool((torch.isfinite(t) if m is None else torch.isfinite(t) & m).any())
               for t, m in outs_masks)
