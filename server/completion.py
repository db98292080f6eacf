"""textDocument/completion from the real Triton API: members after `tl.` / `triton.` /
`libdevice.`, keyword arguments inside a call, a kernel's parameters at its launch, the
constexpr keys of `triton.Config({…`, and the constexpr parameters of the kernel being edited."""

from __future__ import annotations

import re

from lsprotocol import types
from tritonlens.analysis import tlapi
from tritonlens.analysis.findings import Position

from .analyzed import analyzed, module_of
from .markup import content
from .triton_names import (
    TRITON_SUBMODULES,
    enclosing_call,
    libdevice_aliases,
    module_of_prefix,
    param_values,
    resolve_name,
    text_offset,
    version_note,
)

_KIND = {
    "function": types.CompletionItemKind.Function, "class": types.CompletionItemKind.Class,
    "dtype": types.CompletionItemKind.TypeParameter, "module": types.CompletionItemKind.Module,
    "constant": types.CompletionItemKind.Constant, "method": types.CompletionItemKind.Method,
    "property": types.CompletionItemKind.Property,
}


def _submodules(mod: str) -> list[str]:
    if mod == "triton":
        return list(TRITON_SUBMODULES)
    if mod == "triton.language":
        return ["math", "extra"]
    return []


def _doc(kind: types.MarkupKind, text: str) -> types.MarkupContent:
    return content(text, kind)


def completions(snap, module, pos: Position, api: tlapi.ApiIndex, markup: types.MarkupKind) -> list[types.CompletionItem]:
    line = snap.lines[pos.line] if pos.line < len(snap.lines) else ""
    before = line[:pos.column]
    libdevice = libdevice_aliases(snap.text)
    note = version_note(api)

    m = re.search(r"([A-Za-z_][\w.]*)\.(\w*)$", before)
    if m is not None:
        prefix = m.group(1)
        mod = module_of_prefix(prefix, module, libdevice)
        if mod is None:
            return []
        items = []
        for e in api.members(mod):
            if e is None:
                continue
            items.append(types.CompletionItem(
                label=e.name, kind=_KIND.get(e.kind, types.CompletionItemKind.Variable),
                detail=(f"{prefix}.{e.name}{e.signature or ''}" if e.kind in ("function", "class") else f"{e.kind} {e.qualname}"),
                documentation=_doc(markup, (e.doc + "\n\n" if e.doc else "") + note)))
        for sub in _submodules(mod):
            items.append(types.CompletionItem(label=sub, kind=types.CompletionItemKind.Module, detail=f"module {mod}.{sub}"))
        return items

    call = enclosing_call(snap.text, text_offset(snap.lines, pos))
    items: list[types.CompletionItem] = []
    word = re.search(r"(\w*)$", before).group(1)
    in_config_dict = call is not None and call.keyword == "{"
    if call is not None and call.keyword in (None, "{"):
        items.extend(_keyword_items(snap, module, api, call, markup, note, pos))
    k = module.kernel_at(pos.line) if module is not None else None
    if k is not None and not in_config_dict:
        for p in k.params:
            if p.is_constexpr and p.name.startswith(word):
                vals = param_values(k, p.name)
                items.append(types.CompletionItem(
                    label=p.name, kind=types.CompletionItemKind.Constant,
                    detail=f"{p.name}: tl.constexpr = {' | '.join(vals)}",
                    documentation=_doc(markup, f"constexpr parameter of `{k.name}`; values per configuration: "
                                               f"{', '.join(vals)}")))
    return items


def _keyword_items(snap, module, api, call, markup, note, pos):
    items = []
    given = call.given
    if call.launch and module is not None:
        k = module.kernel(call.callee)
        if k is not None:
            for p in k.params:
                if p.name not in given:
                    items.append(types.CompletionItem(label=p.name + "=", kind=types.CompletionItemKind.Variable,
                                                      detail=f"{k.name}: {p.name}" + (f": {p.annotation}" if p.annotation else ""),
                                                      insert_text=p.name + "="))
            for opt in ("num_warps", "num_stages"):
                if opt not in given:
                    items.append(types.CompletionItem(label=opt + "=", kind=types.CompletionItemKind.Property,
                                                      detail="launch option", insert_text=opt + "="))
        return items
    resolved = resolve_name(call.callee, module, libdevice_aliases(snap.text))
    if resolved is None:
        return items
    if resolved == ("triton", "Config") and call.keyword == "{" and module is not None:
        # keys of the constexpr dict: the constexprs of the kernel this autotune decorates
        k = next((k for k in module.kernels if k.range.end.line >= pos.line and k.autotuned), None)
        if k is not None:
            for p in k.params:
                if p.is_constexpr and p.name not in given:
                    items.append(types.CompletionItem(label=f'"{p.name}"', kind=types.CompletionItemKind.Constant,
                                                      detail=f"constexpr of {k.name}", insert_text=f'"{p.name}": '))
        return items
    entry = api.get(*resolved)
    if entry is None or not entry.params:
        return items
    for p in entry.params:
        if p.kind in ("*", "**", "p") or p.name in given:
            continue
        items.append(types.CompletionItem(
            label=p.name + "=", kind=types.CompletionItemKind.Variable, insert_text=p.name + "=",
            detail=f"{call.callee}{entry.signature or ''}",
            documentation=_doc(markup, f"parameter `{p.name}`" + (f" (default `{p.default}`)" if p.default is not None
                                                                  else " (required)")
                               + f" of `{entry.qualname}`\n\n{note}")))
    return items


def register(ls) -> None:
    @ls.feature(types.TEXT_DOCUMENT_COMPLETION,
                types.CompletionOptions(trigger_characters=[".", "(", ",", "{"], resolve_provider=False))
    async def _completion(params: types.CompletionParams):
        uri = params.text_document.uri
        snap, result = await analyzed(ls, uri)
        if snap is None:
            return None
        items = await ls.analysis.run(completions, snap, module_of(result), snap.engine_position(params.position),
                                      ls.api_index.for_uri(uri), ls.client_support.completion_markup)
        return types.CompletionList(is_incomplete=False, items=items)
