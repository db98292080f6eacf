"""Writing a configuration into the user's file: as literals at the launch sites, or as an
@triton.autotune over the candidate configurations (the launch's keywords and grid made to read
the tuned meta-parameters)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .edits import (
    Edit,
    Lines,
    apply,
    dotted,
    kernel_named,
    launch_sites,
    local_assignment,
)

if TYPE_CHECKING:
    from .propose_config import Plan

def with_literals(text: str, plan: Plan, cfg: dict) -> str:
    """The file with `cfg` written into the launch-site literals (adding num_warps/num_stages)."""
    tree = ast.parse(text)
    lines = Lines(text)
    edits: list[Edit] = []
    done_spans = set()
    for name, value in cfg.items():
        knob = plan.knobs.get(name)
        if knob is None:
            raise ValueError(f"{name} cannot be set at the launch")
        for kind, span, ref in knob.sites:
            if kind in ("kw", "local"):
                if span in done_spans:
                    continue
                done_spans.add(span)
                edits.append(Edit(span[0], span[1], str(value)))
            else:  # add the keyword after the launch's last argument
                site = ref
                call = _same_call(tree, site.call)
                args = list(call.args) + [k.value for k in call.keywords]
                end = max(lines.span(a)[1] for a in args)
                edits.append(Edit(end, end, f", {name}={value}"))
    return apply(text, edits)


def _same_call(tree, call):
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and n.lineno == call.lineno and n.col_offset == call.col_offset:
            return n
    return call


def _config_text(cfg: dict, indent: str) -> str:
    consts = {k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages")}
    opts = "".join(f", {k}={cfg[k]}" for k in ("num_warps", "num_stages") if k in cfg)
    body = ", ".join(f'"{k}": {v}' for k, v in consts.items())
    return f"{indent}triton.Config({{{body}}}{opts}),\n"


def with_autotune(text: str, plan: Plan, configs: list[dict]) -> str:
    """The file with an @triton.autotune over `configs` (or the existing list replaced)."""
    tree = ast.parse(text)
    fn = kernel_named(tree, plan.kernel)
    lines = Lines(text)
    edits: list[Edit] = []
    if plan.kind == "autotuned":
        dec = next(d for d in fn.decorator_list if isinstance(d, ast.Call)
                   and (dotted(d.func) or "").split(".")[-1] == "autotune")
        kw = next((k for k in dec.keywords if k.arg == "configs"), None)
        node = kw.value if kw is not None else (dec.args[0] if dec.args else None)
        if node is None:
            raise ValueError("autotune decorator without configs")
        indent = lines.indent_of(node.lineno) + "    "
        s, e = lines.span(node)
        edits.append(Edit(s, e, "[\n" + "".join(_config_text(c, indent) for c in configs) + lines.indent_of(node.lineno) + "]"))
        return apply(text, edits)
    tuned = sorted({k for c in configs for k in c})
    dec_line = min(d.lineno for d in fn.decorator_list)
    indent = lines.indent_of(dec_line)
    key = plan.size_params
    block = (f"{indent}@triton.autotune(\n{indent}    configs=[\n"
             + "".join(_config_text(c, indent + "        ") for c in configs)
             + f"{indent}    ],\n{indent}    key={key!r},\n{indent})\n").replace("'", '"')
    edits.append(Edit(lines.line_start(dec_line), lines.line_start(dec_line), block))
    # the launch no longer passes what the autotuner now picks; the grid reads it from META
    for site in launch_sites(tree, plan.kernel):
        locals_map = {kw.value.id: kw.arg for kw in site.call.keywords
                      if kw.arg in tuned and isinstance(kw.value, ast.Name)}
        edits.append(_strip_keywords(text, lines, site.call, set(tuned)))
        edits += _grid_to_meta(text, lines, site, locals_map, tuned)
    return apply(text, edits)


def _strip_keywords(text: str, lines: Lines, call: ast.Call, names: set) -> Edit:
    """One edit over the call's argument list dropping keywords in `names`; lines left empty go."""
    args = list(call.args) + list(call.keywords)
    keep = [a for a in args if not (isinstance(a, ast.keyword) and a.arg in names)]
    drop = [a for a in args if a not in keep]
    start = lines.span(args[0])[0] if not isinstance(args[0], ast.keyword) else lines.offset(args[0].lineno, args[0].col_offset)
    end = lines.offset(call.end_lineno, call.end_col_offset) - 1  # before ")"
    region = text[start:end]
    if not drop:
        return Edit(start, start, "")
    cuts = []
    for kw in drop:
        s = lines.offset(kw.lineno, kw.col_offset) - start
        e = lines.offset(kw.end_lineno, kw.end_col_offset) - start
        while e < len(region) and region[e] in " \t":
            e += 1
        if e < len(region) and region[e] == ",":
            e += 1
            while e < len(region) and region[e] in " \t":
                e += 1
        cuts.append((s, e))
    out, pos = [], 0
    for s, e in sorted(cuts):
        out.append(region[pos:s])
        pos = e
    out.append(region[pos:])
    new = "".join(out)
    old_lines = region.split("\n")
    new_lines = new.split("\n")
    if len(old_lines) == len(new_lines):
        new = "\n".join(n for o, n in zip(old_lines, new_lines) if n.strip() or not o.strip())
    new = new.rstrip()
    new = new.removesuffix(",")
    if region.rstrip(" \t").endswith("\n"):  # the closing parenthesis sits on its own line
        new += ",\n" + lines.indent_of(call.end_lineno)
    return Edit(start, end, new)


class _MetaRewriter(ast.NodeTransformer):
    def __init__(self, mapping: dict):
        self.mapping = mapping
        self.changed = False

    def visit_Name(self, node):
        if node.id in self.mapping:
            self.changed = True
            return ast.Subscript(value=ast.Name("META", ast.Load()), slice=ast.Constant(self.mapping[node.id]),
                                 ctx=ast.Load())
        return node


def _grid_to_meta(text, lines, site, locals_map: dict, tuned) -> list[Edit]:
    grid = site.grid
    target = grid
    if isinstance(grid, ast.Name):
        assign = local_assignment(site.function, grid.id, site.call.lineno)
        if assign is None:
            return []
        target = assign.value
    if isinstance(target, ast.Lambda):
        return []  # already reads the meta-parameters
    rewriter = _MetaRewriter(locals_map)
    new = rewriter.visit(ast.parse(ast.unparse(target), mode="eval").body)
    if not rewriter.changed:
        return []
    s, e = lines.span(target)
    return [Edit(s, e, f"lambda META: {ast.unparse(new)}".replace("'", '"'))]
