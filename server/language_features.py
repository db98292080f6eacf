"""Triton language intelligence in the editor: inlay hints (inferred block shapes and dtypes,
resolved constexprs), completion and signature help from the real Triton API, API and variable
hovers (a fallback/extension of hover.py's cards), and document symbols.

The API comes from tritonlens.analysis.tlapi: the project's own Triton introspected in a
subprocess when its Python has Triton (resolved off the event loop, cached per version), else the
snapshot nearest to its version. Shapes come from tritonlens.analysis.shapes.
"""

from __future__ import annotations

import asyncio
import logging
import re

from lsprotocol import types

from tritonlens.analysis import tlapi
from tritonlens.analysis.findings import Position
from tritonlens.analysis.shapes import assignment_targets, describe, infer_kernel
from tritonlens.analysis.values import UNKNOWN, fmt

from .documents import snapshot_of

log = logging.getLogger(__name__)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LIBDEVICE_IMPORT = re.compile(
    r"^\s*from\s+triton\.language\.extra(?:\.cuda)?\s+import\s+libdevice(?:\s+as\s+(\w+))?", re.M)
_TRITON_SUBMODULES = ("language", "testing")


# ---------------------------------------------------------------------------------------------
# the API in use for a document


class ApiResolver:
    """Per project Python: a snapshot at once, the introspected API when it arrives."""

    def __init__(self):
        self._by_python: dict[str, tlapi.ApiIndex] = {}
        self._pending: set[str] = set()

    def get(self, ls, python: str) -> tlapi.ApiIndex:
        idx = self._by_python.get(python)
        if idx is not None:
            return idx
        if python not in self._pending:
            self._pending.add(python)
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is not None:
                fut = loop.run_in_executor(None, tlapi.resolve, python or None)

                def done(f, python=python):
                    self._pending.discard(python)
                    try:
                        self._by_python[python] = f.result()
                        if not python:
                            tlapi.set_active(self._by_python[python])
                    except Exception as exc:
                        log.warning("Triton API introspection failed for %r: %s", python, exc)
                        self._by_python[python] = tlapi.active()

                fut.add_done_callback(done)
        return tlapi.active()


def api_for(ls, uri: str) -> tlapi.ApiIndex:
    resolver = getattr(ls, "_tritonlens_api", None)
    if resolver is None:
        resolver = ls._tritonlens_api = ApiResolver()
    python = getattr(ls.settings.for_uri(uri), "python", "") or ""
    return resolver.get(ls, python)


def _version_note(api: tlapi.ApiIndex) -> str:
    return f"_Triton {api.version} ({api.source})_"


# ---------------------------------------------------------------------------------------------
# names in the text


def libdevice_aliases(text: str) -> set[str]:
    return {m.group(1) or "libdevice" for m in _LIBDEVICE_IMPORT.finditer(text)}


def module_of_prefix(prefix: str, module, libdevice: set[str]) -> str | None:
    """`tl` → triton.language, `tl.math` → triton.language.math, `triton` → triton, …"""
    if prefix in libdevice:
        return "triton.language.extra.libdevice"
    probe = module.aliases.tl_function(prefix + ".__probe__") if module is not None else None
    if probe is not None:
        mod, _ = tlapi.split_tl(probe)
        return mod
    head, _, rest = prefix.partition(".")
    triton_names = module.aliases.triton if module is not None else {"triton"}
    if head in triton_names | {"triton"}:
        if not rest:
            return "triton"
        if rest in _TRITON_SUBMODULES:
            return "triton." + rest
    return None


def resolve_name(dotted: str, module, libdevice: set[str]) -> tuple[str, str] | None:
    """("triton.language", "load") for `tl.load`; None for anything that is not Triton's."""
    if "." in dotted:
        prefix, _, name = dotted.rpartition(".")
        mod = module_of_prefix(prefix, module, libdevice)
        if mod is not None:
            return mod, name
        return None
    if module is not None:
        tl = module.aliases.tl_function(dotted)
        if tl is not None:
            return tlapi.split_tl(tl)
        ta = module.aliases.triton_attr(dotted)
        if ta is not None:
            return "triton", ta
    return None


def dotted_at(line: str, col: int) -> tuple[str, int, int] | None:
    """The dotted name under the cursor, cut at the end of the word under it."""
    if not line:
        return None
    end = col
    while end < len(line) and (line[end].isalnum() or line[end] == "_"):
        end += 1
    start = col
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] in "_."):
        start -= 1
    text = line[start:end].lstrip(".")
    start = end - len(text)
    if not text or not _IDENT.match(text):
        return None
    return text, start, end


def _md(kind: str, text: str) -> types.MarkupContent:
    return types.MarkupContent(kind=kind, value=text)


def api_markdown(entry: tlapi.ApiEntry, shown: str, api: tlapi.ApiIndex) -> str:
    sig = entry.signature or ""
    head = f"```python\n{shown}{sig}\n```" if entry.kind in ("function", "class", "method") else f"```python\n{shown}\n```"
    parts = [head]
    if entry.doc:
        parts.append(entry.doc)
    parts.append(f"{entry.kind} · `{entry.qualname}` · {_version_note(api)}")
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------------------------
# analysis access


async def _analysis(ls, uri: str):
    snap = snapshot_of(ls, uri)
    if snap is None:
        return None, None
    result = await ls.analysis.analyze(snap, ls.settings.for_uri(uri))
    return snap, getattr(result, "module", None)


def _byte_col(src, line: int, column: int) -> int:
    text = src.line_text(line)
    return len(text[:column].encode("utf-8", errors="surrogatepass"))


def node_at(kernel, pos: Position):
    src = kernel.src
    col = _byte_col(src, pos.line, pos.column)
    node = src.root.descendant_for_point_range((pos.line, col), (pos.line, col))
    if node is not None and node.type != "identifier" and col > 0:
        prev = src.root.descendant_for_point_range((pos.line, col - 1), (pos.line, col - 1))
        if prev is not None and prev.type == "identifier":
            node = prev
    return node


def _arg_dtypes(ls, uri: str | None, kernel) -> dict:
    """Argument dtypes a captured launch told us (through the document's latest compile)."""
    if ls is None or uri is None:
        return {}
    from . import compile_feature

    return compile_feature.arg_dtypes(ls, uri, kernel.name)


def variable_markdown(module, kernel, node, arg_dtypes: dict | None = None) -> str | None:
    """Inferred shape and dtype of the identifier `node` in `kernel`, per configuration."""
    shapes = infer_kernel(module, kernel, arg_dtypes=arg_dtypes)
    name = kernel.src.text_of(node)
    key = (node.start_byte, node.end_byte)
    rows = []
    sym = shapes.symbolic.exprs.get(key)
    if sym is None and not any(r.exprs.get(key) for r in shapes.per_config):
        return None
    if sym is not None:
        rows.append(("symbolic", describe(sym)))
    seen = set()
    for run in shapes.per_config:
        a = run.exprs.get(key)
        if a is None or run.label in seen:
            continue
        seen.add(run.label)
        rows.append((run.label, describe(a)))
    if not rows:
        return None
    table = "| configuration | shape · dtype |\n|---|---|\n" + "\n".join(f"| {l} | `{d}` |" for l, d in rows[:13])
    return f"### `{name}` in `{kernel.name}`\n\n{table}\n\n_Inferred by tritonlens; `?` = not knowable statically._"


def _param_values(kernel, name: str) -> list[str]:
    vals = []
    for c in kernel.configs:
        v = c.get(name)
        s = fmt(v) if v is not UNKNOWN else "?"
        if s not in vals:
            vals.append(s)
    return vals


# ---------------------------------------------------------------------------------------------
# hover (called by hover.py)


def api_hover_text(ls, snap, module, pos: Position) -> str | None:
    if pos.line >= len(snap.lines):
        return None
    line = snap.lines[pos.line]
    found = dotted_at(line, pos.column)
    if found is None:
        return None
    dotted, start, end = found
    if not (start <= pos.column <= end):
        return None
    resolved = resolve_name(dotted, module, libdevice_aliases(snap.text))
    if resolved is None:
        return None
    api = api_for(ls, snap.uri)
    entry = api.get(*resolved)
    if entry is None:
        # A submodule spelled out (`tl.math`), or a name this Triton lacks.
        mod_key = module_of_prefix(dotted, module, libdevice_aliases(snap.text))
        if mod_key is not None:
            return f"```python\n{dotted}\n```\n\nmodule `{mod_key}` · {len(api.names(mod_key))} names · {_version_note(api)}"
        return (f"```python\n{dotted}\n```\n\n`{resolved[0]}.{resolved[1]}` does not exist in Triton {api.version}."
                + _history_note(*resolved))
    return api_markdown(entry, dotted, api)


def _history_note(module: str, name: str) -> str:
    seen = [v for v, present in tlapi.history(module, name) if present]
    return f" It exists in Triton {', '.join(seen)}." if seen else ""


def variable_hover_text(module, snap, pos: Position, ls=None) -> str | None:
    k = module.kernel_at(pos.line)
    if k is None or k.src is None:
        return None
    node = node_at(k, pos)
    if node is None or node.type != "identifier":
        return None
    name = k.src.text_of(node)
    p = k.param(name)
    parent = node.parent
    if p is not None and p.is_constexpr and parent is not None and parent.type in ("typed_parameter", "typed_default_parameter"):
        vals = _param_values(k, name)
        return f"### `{name}: tl.constexpr` in `{k.name}`\n\nvalues: " + ", ".join(f"`{v}`" for v in vals)
    return variable_markdown(module, k, node, _arg_dtypes(ls, getattr(snap, "uri", None), k))


def hover_fallback(ls, snap, module, pos: Position, kind) -> types.Hover | None:
    """Hover where hover.py has no card: a Triton API name, or a variable inside a kernel."""
    text = api_hover_text(ls, snap, module, pos) or variable_hover_text(module, snap, pos, ls)
    if text is None:
        return None
    return types.Hover(contents=_md(kind, text))


# ---------------------------------------------------------------------------------------------
# inlay hints


def inlay_hints(ls, snap, module, rng: types.Range) -> list[types.InlayHint]:
    if not ls.settings.for_uri(snap.uri).inlay_hints:
        return []
    first, last = rng.start.line, rng.end.line
    hints: list[types.InlayHint] = []
    for k in module.kernels:
        if k.range.end.line < first or k.range.start.line > last or k.src is None:
            continue
        for p in k.params:
            if not p.is_constexpr or not (first <= p.range.end.line <= last):
                continue
            vals = _param_values(k, p.name)
            if not vals or vals == ["?"]:
                continue
            hints.append(types.InlayHint(position=snap.position(p.range.end), label=" = " + " | ".join(vals[:6]),
                                         kind=types.InlayHintKind.Parameter, padding_left=False,
                                         tooltip=f"{p.name} per configuration: " + ", ".join(vals)))
        shapes = infer_kernel(module, k, arg_dtypes=_arg_dtypes(ls, snap.uri, k))
        for stmt, target, name in assignment_targets(k):
            if stmt.type != "assignment":
                continue  # augmented assignments and loop variables keep the type shown where it began
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
    from tritonlens.analysis.shapes import Abs

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


# ---------------------------------------------------------------------------------------------
# calls around the cursor


def enclosing_call(text: str, offset: int, limit: int = 4000):
    """(callee text, is_launch, argument index, keyword being typed or None, keywords given,
    offset of the open paren) of the call whose parentheses hold `offset`, or None."""
    depth = 0
    i = offset - 1
    lo = max(0, offset - limit)
    commas = 0
    quote = None
    while i >= lo:
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                if ch != "(":
                    return None if ch == "[" else _dict_context(text, i, offset)
                break
            depth -= 1
        elif ch == "," and depth == 0:
            commas += 1
        i -= 1
    else:
        return None
    if i < lo:
        return None
    before = text[:i].rstrip()
    launch = False
    if before.endswith("]"):
        # kernel[grid](…): skip the grid subscript
        d, j = 0, len(before) - 1
        while j >= 0:
            if before[j] == "]":
                d += 1
            elif before[j] == "[":
                d -= 1
                if d == 0:
                    break
            j -= 1
        before = before[:j].rstrip()
        launch = True
    m = re.search(r"([A-Za-z_][\w.]*)$", before)
    if m is None:
        return None
    inside = text[i + 1:offset]
    given = set(re.findall(r"(?:^|[,(\s])([A-Za-z_]\w*)\s*=(?!=)", inside))
    current = inside.rsplit(",", 1)[-1] if commas else inside
    kw = re.match(r"\s*([A-Za-z_]\w*)\s*=(?!=)", current)
    return m.group(1), launch, commas, kw.group(1) if kw else None, given, i


def _dict_context(text: str, brace: int, offset: int):
    """Inside `triton.Config({` … : report the Config call with a marker for dict keys."""
    before = text[:brace].rstrip()
    if before.endswith("("):
        m = re.search(r"([A-Za-z_][\w.]*)\s*\($", before)
        if m:
            return m.group(1), False, 0, "{", set(re.findall(r"[\"'](\w+)[\"']\s*:", text[brace:offset])), brace
    return None


def _offset(snap, pos: Position) -> int:
    lines = snap.lines
    return sum(len(l) + 1 for l in lines[:pos.line]) + pos.column


# ---------------------------------------------------------------------------------------------
# completion

_KIND = {
    "function": types.CompletionItemKind.Function, "class": types.CompletionItemKind.Class,
    "dtype": types.CompletionItemKind.TypeParameter, "module": types.CompletionItemKind.Module,
    "constant": types.CompletionItemKind.Constant, "method": types.CompletionItemKind.Method,
    "property": types.CompletionItemKind.Property,
}


def _submodules(mod: str, api: tlapi.ApiIndex) -> list[str]:
    if mod == "triton":
        return [m for m in _TRITON_SUBMODULES]
    if mod == "triton.language":
        return ["math", "extra"]
    return []


def completions(ls, snap, module, pos: Position) -> list[types.CompletionItem]:
    line = snap.lines[pos.line] if pos.line < len(snap.lines) else ""
    before = line[:pos.column]
    api = api_for(ls, snap.uri)
    kind = ls.client_support.completion_markup
    libdevice = libdevice_aliases(snap.text)
    note = _version_note(api)

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
                documentation=_md(kind, (e.doc + "\n\n" if e.doc else "") + note)))
        for sub in _submodules(mod, api):
            items.append(types.CompletionItem(label=sub, kind=types.CompletionItemKind.Module, detail=f"module {mod}.{sub}"))
        return items

    call = enclosing_call(snap.text, _offset(snap, pos))
    items: list[types.CompletionItem] = []
    word = re.search(r"(\w*)$", before).group(1)
    if call is not None:
        callee, launch, _, current_kw, given, _ = call
        if current_kw is None or current_kw == "{":
            items.extend(_keyword_items(ls, snap, module, api, callee, launch, given, current_kw == "{", kind, note, pos))
    k = module.kernel_at(pos.line) if module is not None else None
    if k is not None and not (call is not None and call[3] == "{"):
        for p in k.params:
            if p.is_constexpr and p.name.startswith(word):
                vals = _param_values(k, p.name)
                items.append(types.CompletionItem(
                    label=p.name, kind=types.CompletionItemKind.Constant,
                    detail=f"{p.name}: tl.constexpr = {' | '.join(vals)}",
                    documentation=_md(kind, f"constexpr parameter of `{k.name}`; values per configuration: {', '.join(vals)}")))
    return items


def _keyword_items(ls, snap, module, api, callee, launch, given, dict_keys, kind, note, pos):
    items = []
    libdevice = libdevice_aliases(snap.text)
    if launch and module is not None:
        k = module.kernel(callee)
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
    resolved = resolve_name(callee, module, libdevice)
    if resolved is None:
        return items
    if resolved == ("triton", "Config") and dict_keys and module is not None:
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
            detail=f"{callee}{entry.signature or ''}",
            documentation=_md(kind, f"parameter `{p.name}`" + (f" (default `{p.default}`)" if p.default is not None else " (required)")
                              + f" of `{entry.qualname}`\n\n{note}")))
    return items


# ---------------------------------------------------------------------------------------------
# signature help


def signature_help(ls, snap, module, pos: Position) -> types.SignatureHelp | None:
    call = enclosing_call(snap.text, _offset(snap, pos))
    if call is None or call[3] == "{":
        return None
    callee, launch, index, current_kw, given, _ = call
    api = api_for(ls, snap.uri)
    kind = ls.client_support.signature_markup
    params: list[tuple[str, str, str | None]] = []  # (name, label text, doc)
    label_head, doc = callee, ""
    k = module.kernel(callee) if module is not None else None
    if k is not None:
        for p in k.params:
            text = p.name + (f": {p.annotation}" if p.annotation else "") + (f"={fmt(p.default)}" if p.has_default else "")
            vals = ", ".join(_param_values(k, p.name)) if p.is_constexpr else None
            params.append((p.name, text, f"values: {vals}" if vals else None))
        doc = ("launch of " if launch else "call of ") + f"@triton.jit `{k.name}`"
    else:
        resolved = resolve_name(callee, module, libdevice_aliases(snap.text))
        if resolved is None:
            return None
        entry = api.get(*resolved)
        if entry is None or entry.params is None:
            return None
        for p in entry.params:
            text = ("*" if p.kind == "*" else "**" if p.kind == "**" else "") + p.name + (f"={p.default}" if p.default is not None else "")
            params.append((p.name, text, None))
        doc = (entry.doc + "\n\n" if entry.doc else "") + _version_note(api)
    label = label_head + "(" + ", ".join(t for _, t, _ in params) + ")"
    infos = []
    cursor = len(label_head) + 1
    for name, text, pdoc in params:
        infos.append(types.ParameterInformation(label=(cursor, cursor + len(text)), documentation=pdoc))
        cursor += len(text) + 2
    active = index
    if current_kw is not None:
        active = next((i for i, (n, _, _) in enumerate(params) if n == current_kw), index)
    star = next((i for i, (_, t, _) in enumerate(params) if t.startswith("*") and not t.startswith("**")), None)
    if star is not None and active > star and current_kw is None:
        active = star
    if params:
        active = min(active, len(params) - 1)
    sig = types.SignatureInformation(label=label, documentation=_md(kind, doc) if doc else None, parameters=infos,
                                     active_parameter=active if params else None)
    return types.SignatureHelp(signatures=[sig], active_signature=0, active_parameter=active if params else None)


# ---------------------------------------------------------------------------------------------
# document symbols


def document_symbols(ls, snap, module):
    hierarchical = ls.client_support.hierarchical_symbols
    kernels = []
    wrappers: dict[tuple, dict] = {}
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
                key = (wname, l.wrapper.start_point[0])
                w = wrappers.setdefault(key, {"name": wname, "range": src.range(l.wrapper),
                                              "sel": src.range(name_node) if name_node is not None else src.range(l.wrapper),
                                              "launches": [], "kernels": []})
                w["launches"].append(l)
                if k.name not in w["kernels"]:
                    w["kernels"].append(k.name)
        detail = "@triton.jit" + (" · autotuned" if k.autotuned else "") + f" · {len(k.configs)} configuration(s)"
        kernels.append(types.DocumentSymbol(name=k.name, detail=detail, kind=types.SymbolKind.Function,
                                            range=snap.range(k.range), selection_range=snap.range(k.name_range),
                                            children=launches))
    wrapper_syms = []
    for w in wrappers.values():
        children = [types.DocumentSymbol(name=f"{l.kernel}[…](…)", detail=f"launch at line {l.line}", kind=types.SymbolKind.Event,
                                         range=snap.range(l.range), selection_range=snap.range(l.range)) for l in w["launches"]]
        wrapper_syms.append(types.DocumentSymbol(name=w["name"], detail="launches " + ", ".join(w["kernels"]),
                                                 kind=types.SymbolKind.Function, range=snap.range(w["range"]),
                                                 selection_range=snap.range(w["sel"]), children=children))
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


# ---------------------------------------------------------------------------------------------
# registration


def register(ls) -> None:
    @ls.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
    async def _inlay(params: types.InlayHintParams):
        snap, module = await _analysis(ls, params.text_document.uri)
        if module is None:
            return []
        return inlay_hints(ls, snap, module, params.range)

    @ls.feature(types.TEXT_DOCUMENT_COMPLETION,
                types.CompletionOptions(trigger_characters=[".", "(", ",", "{"], resolve_provider=False))
    async def _completion(params: types.CompletionParams):
        snap, module = await _analysis(ls, params.text_document.uri)
        if snap is None:
            return None
        items = completions(ls, snap, module, snap.engine_position(params.position))
        return types.CompletionList(is_incomplete=False, items=items)

    @ls.feature(types.TEXT_DOCUMENT_SIGNATURE_HELP, types.SignatureHelpOptions(trigger_characters=["(", ","],
                                                                                retrigger_characters=["="]))
    async def _signature_help(params: types.SignatureHelpParams):
        snap, module = await _analysis(ls, params.text_document.uri)
        if snap is None:
            return None
        return signature_help(ls, snap, module, snap.engine_position(params.position))

    @ls.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def _symbols(params: types.DocumentSymbolParams):
        snap, module = await _analysis(ls, params.text_document.uri)
        if module is None:
            return []
        return document_symbols(ls, snap, module)
