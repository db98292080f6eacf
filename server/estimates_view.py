"""Static estimates (tritonlens.analysis.estimates) as hover markdown, placed on the target GPU's
roofline (tritonlens.analysis.gpus: the H100 figures are the ones measured in shared/gpu/h100.md)."""

from __future__ import annotations

import logging
from collections import OrderedDict

from tritonlens.analysis import estimates, gpus

from .markup import escape

log = logging.getLogger(__name__)

# (id(kernel), gpu) -> (kernel, [Estimate]); kernels are reused while unchanged. Unlocked: read
# and written on the analysis thread only (hover renders there), like the kernels' own caches.
_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 256


def kernel_estimates(module, kernel, gpu: str) -> list:
    key = (id(kernel), gpu)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is kernel:
        _CACHE.move_to_end(key)
        return hit[1]
    try:
        ests = estimates.estimates_for(kernel, module, gpu=gpu)
    except Exception:  # an estimator bug must not take the hover down
        log.exception("estimates failed for %s", kernel.name)
        ests = []
    _CACHE[key] = (kernel, ests)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return ests


def _target(settings) -> gpus.Gpu:
    # Settings refuse a name the table lacks, so the name is always known here.
    return gpus.get(settings.target_gpu)


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "unknown"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def fmt_count(n: float | None) -> str:
    if n is None:
        return "unknown"
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.2f}{unit}"
    return f"{n:g}"


def fmt_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    return f"{s * 1e3:.2f} ms"


def roofline_line(gpu: gpus.Gpu) -> str:
    kind = "measured" if gpu.measured else "datasheet"
    return (f"{gpu.name} ({kind}): {gpu.bandwidth / 1e12:.2f} TB/s, {gpu.fp16_flops / 1e12:.0f} TFLOP/s fp16 "
            f"→ ridge point {gpu.ridge:.0f} FLOP/byte")


def _position(e, gpu: gpus.Gpu) -> str:
    if e.intensity is None:
        return "compute-bound (no bytes moved)" if e.bound_hint == "compute" else "unknown"
    side = "below" if e.intensity < gpu.ridge else "above"
    return f"{e.intensity:.2f} FLOP/B, {side} the ridge: {e.bound_hint}-bound"


def _floor(e, gpu: gpus.Gpu) -> str:
    """The fastest the launch can be on this GPU: its bytes at copy bandwidth or its FLOPs at peak."""
    if e.per_launch_bytes is None:
        return "unknown"
    t = max(e.per_launch_bytes / gpu.bandwidth, (e.per_launch_flops or 0) / gpu.fp16_flops)
    return fmt_seconds(t)


def kernel_section(module, kernel, settings) -> str:
    gpu = _target(settings)
    ests = kernel_estimates(module, kernel, gpu.name)
    if not ests:
        return ""
    # Only tl.dot is counted: a kernel without one gets no FLOPs columns rather than a 0 that
    # reads as "computes nothing", and an unknown count is shown as unknown.
    dots = any(e.flops != 0 for e in ests)
    rows = []
    for e in ests[:8]:
        per_prog = f"{fmt_bytes(e.bytes_loaded)} / {fmt_bytes(e.bytes_stored)}"
        if e.per_iteration:
            per_prog += " per iteration"
        cells = [escape(e.config), per_prog]
        if dots:
            cells.append(fmt_count(e.flops))
        cells += [str(e.programs) if e.programs is not None else "unknown", fmt_bytes(e.per_launch_bytes)]
        if dots:
            cells.append(fmt_count(e.per_launch_flops))
        cells += [_position(e, gpu), _floor(e, gpu), fmt_bytes(e.shared_bytes)]
        row = "| " + " | ".join(cells) + " |"
        if row not in rows:
            rows.append(row)
    cols = ["configuration", "loaded / stored per program"] + (["tl.dot FLOPs per program"] if dots else []) + [
        "programs", "bytes per launch"] + (["tl.dot FLOPs per launch"] if dots else []) + [
        "arithmetic intensity", "roofline floor", "shared memory"]
    head = "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols)
    notes = []
    for e in ests:
        for n in e.notes:
            if n not in notes:
                notes.append(n)
    text = f"**Static estimates** — {roofline_line(gpu)}\n\n{head}\n" + "\n".join(rows)
    if notes:
        text += "\n\nAssumptions: " + escape("; ".join(notes)) + "."
    if not dots:
        text += "\n\nFLOPs: only tl.dot is counted, and this kernel has none."
    return text


def call_lines(module, kernel, call, settings) -> list[str]:
    """What the call under the cursor moves (or computes, for tl.dot), one line per configuration:
    a static estimate, masks ignored."""
    gpu = _target(settings)
    ests = kernel_estimates(module, kernel, gpu.name)
    lines = []
    for e in ests[:4]:
        a = e.access_at(call.range.start.line, call.range.start.column)
        if a is None:
            continue
        if a.kind == "dot":
            if a.shape is not None:
                (sa, sb) = a.shape
                what = f"{'×'.join(map(str, sa))} @ {'×'.join(map(str, sb))}"
            else:
                what = "operand tiles of unknown shape"
            flops = fmt_count(a.flops) + " FLOPs" if a.flops is not None else "FLOPs unknown"
            lines.append(f"{escape(e.config)}: {what} → {flops} per program"
                         + (" per iteration" if a.per_iteration else "")
                         + (f" ({a.trips} iterations)" if a.trips and a.trips > 1 else ""))
        else:
            verb = "reads" if a.kind == "load" else "writes" if a.kind == "store" else "reads and writes"
            tile = f"a {'×'.join(map(str, a.shape))} tile" if a.shape else "a tile of unknown shape"
            where = f" of {escape(a.base)}" if a.base else ""
            trips = f" × {a.trips} iterations" if a.trips and a.trips > 1 else (" per iteration" if a.per_iteration else "")
            line = f"{escape(e.config)}: {verb} {tile}{where}"
            if a.bytes is not None:
                line += (f" ({a.elements} elements × {a.elem_bytes} B{', ' + escape(a.note) if a.note else ''})"
                         f"{trips} = **{fmt_bytes(a.bytes)} per program**")
                if e.programs is not None and not a.per_iteration:
                    line += f", {fmt_bytes(a.bytes * e.programs)} per launch ({e.programs} programs)"
            lines.append(line)
    return list(dict.fromkeys(lines))
