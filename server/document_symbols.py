"""textDocument/documentSymbol: kernels with their launches, and the Python wrappers that launch
them; hierarchical for clients that take it, flat otherwise."""

from __future__ import annotations

from dataclasses import dataclass, field

from lsprotocol import types

from .analyzed import analyzed, module_of


@dataclass
class _Wrapper:
    """A Python function that launches kernels."""

    name: str
    range: object
    selection: object
    launches: list = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)


def document_symbols(snap, module, hierarchical: bool):
    kernels = []
    wrappers: dict[tuple, _Wrapper] = {}
    for k in module.kernels:
        src = k.src or module.src
        launches = []
        for l in k.launches:
            launches.append(types.DocumentSymbol(
                name=f"{k.name}[…](…)", detail=f"launch of {k.name} at line {l.line}", kind=types.SymbolKind.Event,
                range=snap.range(l.range), selection_range=snap.range(l.range)))
            if l.wrapper is not None:
                name_node = l.wrapper.child_by_field_name("name")
                wname = src.text_of(name_node) if name_node is not None else "?"
                w = wrappers.get((wname, l.wrapper.start_point[0]))
                if w is None:
                    w = wrappers[(wname, l.wrapper.start_point[0])] = _Wrapper(
                        wname, src.range(l.wrapper), src.range(name_node if name_node is not None else l.wrapper))
                w.launches.append(l)
                if k.name not in w.kernels:
                    w.kernels.append(k.name)
        detail = "@triton.jit" + (" · autotuned" if k.autotuned else "") + f" · {len(k.configs)} configuration(s)"
        kernels.append(types.DocumentSymbol(name=k.name, detail=detail, kind=types.SymbolKind.Function,
                                            range=snap.range(k.range), selection_range=snap.range(k.name_range),
                                            children=launches))
    wrapper_syms = []
    for w in wrappers.values():
        children = [types.DocumentSymbol(name=f"{l.kernel}[…](…)", detail=f"launch at line {l.line}",
                                         kind=types.SymbolKind.Event, range=snap.range(l.range),
                                         selection_range=snap.range(l.range)) for l in w.launches]
        wrapper_syms.append(types.DocumentSymbol(name=w.name, detail="launches " + ", ".join(w.kernels),
                                                 kind=types.SymbolKind.Function, range=snap.range(w.range),
                                                 selection_range=snap.range(w.selection), children=children))
    symbols = sorted(kernels + wrapper_syms, key=lambda s: (s.range.start.line, s.range.start.character))
    if hierarchical:
        return symbols
    flat = []

    def add(sym, container=None):
        flat.append(types.SymbolInformation(name=sym.name, kind=sym.kind, container_name=container,
                                            location=types.Location(uri=snap.uri, range=sym.range)))
        for c in sym.children or []:
            add(c, sym.name)

    for s in symbols:
        add(s)
    return flat


def register(ls) -> None:
    @ls.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def _symbols(params: types.DocumentSymbolParams):
        snap, result = await analyzed(ls, params.text_document.uri)
        module = module_of(result)
        if module is None:
            return []
        return await ls.analysis.run(document_symbols, snap, module, ls.client_support.hierarchical_symbols)
