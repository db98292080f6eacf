"""textDocument/signatureHelp: the signature of the Triton function or @triton.jit kernel being
called, its active parameter, and the values of a kernel's constexpr parameters."""

from __future__ import annotations

from lsprotocol import types
from tritonlens.analysis import tlapi
from tritonlens.analysis.findings import Position
from tritonlens.analysis.values import fmt

from .analyzed import analyzed, module_of
from .markup import content
from .triton_names import (
    enclosing_call,
    libdevice_aliases,
    param_values,
    resolve_name,
    text_offset,
    version_note,
)


def signature_help(snap, module, pos: Position, api: tlapi.ApiIndex,
                   markup: types.MarkupKind) -> types.SignatureHelp | None:
    call = enclosing_call(snap.text, text_offset(snap.lines, pos))
    if call is None or call.keyword == "{":
        return None
    params: list[tuple[str, str, str | None]] = []  # (name, label text, doc)
    label_head = call.callee
    k = module.kernel(call.callee) if module is not None else None
    if k is not None:
        for p in k.params:
            text = p.name + (f": {p.annotation}" if p.annotation else "") + (f"={fmt(p.default)}" if p.has_default else "")
            vals = ", ".join(param_values(k, p.name)) if p.is_constexpr else None
            params.append((p.name, text, f"values: {vals}" if vals else None))
        doc = ("launch of " if call.launch else "call of ") + f"@triton.jit `{k.name}`"
    else:
        resolved = resolve_name(call.callee, module, libdevice_aliases(snap.text))
        if resolved is None:
            return None
        entry = api.get(*resolved)
        if entry is None or entry.params is None:
            return None
        for p in entry.params:
            star = "*" if p.kind == "*" else "**" if p.kind == "**" else ""
            params.append((p.name, star + p.name + (f"={p.default}" if p.default is not None else ""), None))
        doc = (entry.doc + "\n\n" if entry.doc else "") + version_note(api)
    label = label_head + "(" + ", ".join(t for _, t, _ in params) + ")"
    infos = []
    cursor = len(label_head) + 1
    for _name, text, pdoc in params:
        infos.append(types.ParameterInformation(label=(cursor, cursor + len(text)), documentation=pdoc))
        cursor += len(text) + 2
    active = call.index
    if call.keyword is not None:
        active = next((i for i, (n, _, _) in enumerate(params) if n == call.keyword), call.index)
    star = next((i for i, (_, t, _) in enumerate(params) if t.startswith("*") and not t.startswith("**")), None)
    if star is not None and active > star and call.keyword is None:
        active = star
    if params:
        active = min(active, len(params) - 1)
    sig = types.SignatureInformation(label=label, documentation=content(doc, markup) if doc else None,
                                     parameters=infos, active_parameter=active if params else None)
    return types.SignatureHelp(signatures=[sig], active_signature=0, active_parameter=active if params else None)


def register(ls) -> None:
    @ls.feature(types.TEXT_DOCUMENT_SIGNATURE_HELP, types.SignatureHelpOptions(trigger_characters=["(", ","],
                                                                                retrigger_characters=["="]))
    async def _signature_help(params: types.SignatureHelpParams):
        uri = params.text_document.uri
        snap, result = await analyzed(ls, uri)
        if snap is None:
            return None
        return await ls.analysis.run(signature_help, snap, module_of(result), snap.engine_position(params.position),
                                     ls.api_index.for_uri(uri), ls.client_support.signature_markup)
