"""Hover where there is no kernel or memory-access card: a Triton API name anywhere (its
signature and doc in the Triton in use), or a variable in a kernel (its inferred shape and dtype
per configuration)."""

from __future__ import annotations

from tritonlens.analysis import tlapi
from tritonlens.analysis.findings import Position
from tritonlens.analysis.shapes import describe, infer_kernel

from .compile_facts import CompileFacts
from .markup import escape
from .triton_names import (
    api_markdown,
    dotted_at,
    libdevice_aliases,
    module_of_prefix,
    param_values,
    resolve_name,
    version_note,
)

MAX_ROWS = 6  # rows a variable's card lists: with its title, header and note, twelve lines at most


def api_hover_text(snap, module, pos: Position, api: tlapi.ApiIndex) -> str | None:
    if pos.line >= len(snap.lines):
        return None
    found = dotted_at(snap.lines[pos.line], pos.column)
    if found is None:
        return None
    dotted, start, end = found
    if not (start <= pos.column <= end):
        return None
    libdevice = libdevice_aliases(snap.text)
    resolved = resolve_name(dotted, module, libdevice)
    if resolved is None:
        return None
    entry = api.get(*resolved)
    if entry is None:
        # A submodule spelled out (`tl.math`), or a name this Triton lacks.
        mod_key = module_of_prefix(dotted, module, libdevice)
        if mod_key is not None:
            return f"```python\n{dotted}\n```\n\nmodule `{mod_key}` · {len(api.names(mod_key))} names · {version_note(api)}"
        return (f"```python\n{dotted}\n```\n\n`{resolved[0]}.{resolved[1]}` does not exist in Triton {api.version}."
                + _history_note(*resolved))
    return api_markdown(entry, dotted, api)


def _history_note(module: str, name: str) -> str:
    seen = [v for v, present in tlapi.history(module, name) if present]
    return f" It exists in Triton {', '.join(seen)}." if seen else ""


def _byte_col(src, line: int, column: int) -> int:
    text = src.line_text(line)
    return len(text[:column].encode("utf-8", errors="surrogatepass"))


def node_at(kernel, pos: Position):
    """The syntax node under `pos` in the kernel's tree, preferring the identifier just before it."""
    src = kernel.src
    col = _byte_col(src, pos.line, pos.column)
    node = src.root.descendant_for_point_range((pos.line, col), (pos.line, col))
    if node is not None and node.type != "identifier" and col > 0:
        prev = src.root.descendant_for_point_range((pos.line, col - 1), (pos.line, col - 1))
        if prev is not None and prev.type == "identifier":
            node = prev
    return node


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
    shown = rows[:MAX_ROWS]
    table = "| configuration | shape · dtype |\n|---|---|\n" + "\n".join(f"| {escape(l)} | `{d}` |" for l, d in shown)
    more = f" {len(rows) - len(shown)} more configurations not shown." if len(rows) > len(shown) else ""
    return (f"**{escape(name)}** in **{escape(kernel.name)}**\n\n{table}\n\n"
            f"_Inferred by tritonlens; `?` = not knowable statically._{more}")


def variable_hover_text(module, pos: Position, facts: CompileFacts) -> str | None:
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
        vals = ["unknown" if v == "?" else v for v in param_values(k, name)]
        shown = ", ".join(f"`{v}`" for v in vals[:MAX_ROWS]) + (", …" if len(vals) > MAX_ROWS else "")
        return f"**{escape(name)}**: tl.constexpr in **{escape(k.name)}**\n\nvalues: {shown}"
    return variable_markdown(module, k, node, facts.arg_dtypes(k.name))
