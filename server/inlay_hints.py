"""textDocument/inlayHint: the inferred shape and dtype after each assignment in a kernel, and
the values of each constexpr parameter per configuration (the `inlayHints` setting); and the
stall samples of a profiled kernel's hottest lines (line_hints)."""

from __future__ import annotations

from lsprotocol import types
from tritonlens.analysis.shapes import Abs, assignment_targets, describe, infer_kernel

from . import line_hints
from .analyzed import analyzed, module_of
from .compile_facts import CompileFacts
from .triton_names import param_values


def inlay_hints(snap, module, rng: types.Range, facts: CompileFacts) -> list[types.InlayHint]:
    """Runs shape inference: on the analysis thread only."""
    first, last = rng.start.line, rng.end.line
    hints: list[types.InlayHint] = []
    for k in module.kernels:
        if k.range.end.line < first or k.range.start.line > last or k.src is None:
            continue
        for p in k.params:
            if not p.is_constexpr or not (first <= p.range.end.line <= last):
                continue
            vals = param_values(k, p.name)
            if not vals or vals == ["?"]:
                continue
            hints.append(types.InlayHint(position=snap.position(p.range.end), label=" = " + " | ".join(vals[:6]),
                                         kind=types.InlayHintKind.Parameter, padding_left=False,
                                         tooltip=f"{p.name} per configuration: " + ", ".join(vals)))
        shapes = infer_kernel(module, k, arg_dtypes=facts.arg_dtypes(k.name))
        for stmt, target, name in assignment_targets(k):
            if stmt.type != "assignment":
                continue  # augmented assignments and loop variables keep the type shown where it began
            if stmt.child_by_field_name("type") is not None:
                continue  # `K: tl.constexpr = 4` says it already, and a hint there splits name and annotation
            line = target.start_point[0]
            if not (first <= line <= last):
                continue
            label, tip = _target_label(shapes, target, name)
            if label is None:
                continue
            end = k.src.range(target).end
            hints.append(types.InlayHint(position=snap.position(end), label=": " + label, kind=types.InlayHintKind.Type,
                                         tooltip=tip))
    hints.sort(key=lambda h: (h.position.line, h.position.character))
    return hints


def merge_configs(sym, values):
    """One value for all configurations: a dimension (or dtype) every configuration agrees on is
    shown as its number, the others by their symbolic expression."""
    vals = [v for v in values if v is not None]
    if not vals or sym.shape is None or sym.kind != "tensor" or any(v.shape is None or len(v.shape) != len(sym.shape) for v in vals):
        return sym
    dims = []
    for i, d in enumerate(sym.shape):
        seen = {v.shape[i] for v in vals}
        dims.append(seen.pop() if len(seen) == 1 and None not in seen else d)
    dts = {v.dtype for v in vals}
    return Abs(tuple(dims), dts.pop() if len(dts) == 1 and None not in dts else sym.dtype, sym.kind, sym.value, sym.weak)


def _target_label(shapes, target, name):
    key = (target.start_byte, name)
    per = []
    for run in shapes.per_config:
        a = run.targets.get(key)
        if a is not None:
            per.append((run.label, describe(a)))
    distinct = {d for _, d in per}
    if len(distinct) == 1:
        label = per[0][1]
    else:
        sym = shapes.symbolic.targets.get(key)
        label = describe(merge_configs(sym, [run.targets.get(key) for run in shapes.per_config])) if sym is not None else None
    if label is None or label in ("?", "scalar ?"):
        return None, None
    tip = "\n".join(f"{l}: {d}" for l, d in per) if len(per) > 1 else None
    return label, tip


def register(ls) -> None:
    @ls.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
    async def _inlay(params: types.InlayHintParams):
        uri = params.text_document.uri
        snap, result = await analyzed(ls, uri)
        module = module_of(result)
        if module is None:
            return []
        # Stall samples show whatever `inlayHints` says: they come only from a profile asked for lines.
        rng = params.range
        hot = line_hints.hot_lines(ls.measurements, uri, module)
        hints = line_hints.inlay_hints(snap, hot, rng.start.line, rng.end.line, ls.client_support.hover_markup)
        if ls.settings.for_uri(uri).inlay_hints:
            # A hot line keeps its stall hint alone: VS Code cuts a line's hints to 43 characters in
            # all, and the shape before it would cut the samples; the shape stays in the variable hover.
            taken = {h.line for h in hot}
            shapes = await ls.analysis.run(inlay_hints, snap, module, rng, ls.compiles.facts(uri))
            hints = sorted(hints + [h for h in shapes if h.position.line not in taken],
                           key=lambda h: (h.position.line, h.position.character))
        return hints
