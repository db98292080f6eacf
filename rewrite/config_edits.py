"""Writing a configuration into the user's file: as literals at the launch sites, or as an
@triton.autotune over the candidate configurations (the launch's keywords and grid made to read
the tuned meta-parameters)."""

from __future__ import annotations

import ast
import copy
from typing import TYPE_CHECKING

from tritonlens.analysis.python_ast import parse as parse_python

from .config_autotune import autotune_decorator, existing_configs
from .config_grid import grid_locals
from .config_heuristics import heuristics_keys
from .config_inplace import in_place_params
from .config_sites import CONFIG_OPTIONS
from .edits import (
    Edit,
    Lines,
    apply,
    kernel_named,
    launch_sites,
    local_assignment,
)

if TYPE_CHECKING:
    from .propose_config import Plan


class NotAutotunable(ValueError):
    """The configuration lives where an autotune list cannot take it over (no crash: no candidate)."""


def with_literals(text: str, plan: Plan, cfg: dict) -> str:
    """The file with `cfg` written where each value lives (adding num_warps/num_stages to a launch
    that passes none, capping a computed block size)."""
    tree = parse_python(text)
    lines = Lines(text)
    edits: list[Edit] = []
    done_spans = set()
    for name, value in cfg.items():
        knob = plan.knobs.get(name)
        if knob is None:
            raise ValueError(f"{name} cannot be set at the launch")
        for site in knob.sites:
            if site.kind in ("lit", "cap"):
                if site.span in done_spans:
                    continue
                done_spans.add(site.span)
                s, e = site.span
                edits.append(Edit(s, e, str(value) if site.kind == "lit" else f"min({text[s:e]}, {value})"))
            else:  # add the keyword after the launch's last argument
                call = _same_call(tree, site.call)
                args = list(call.args) + [k.value for k in call.keywords]
                end = max(lines.span(a)[1] for a in args)
                edits.append(Edit(end, end, f", {name}={value}"))
        for divisor in knob.grid:  # the grid's copy of the block size moves with it
            for node, offset in divisor.parts:
                span = lines.span(node)
                if span not in done_spans:
                    done_spans.add(span)
                    edits.append(Edit(*span, str(value + offset)))
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
    """The file with an @triton.autotune over `configs` (or the existing list replaced). A Config
    sets num_warps, num_stages, num_ctas and maxnreg whether it names them or not, so a launch
    loses those keywords (their literal values move into every config), and no config sets what the
    launch still passes or a @triton.heuristics computes."""
    tree = parse_python(text)
    fn = kernel_named(tree, plan.kernel)
    lines = Lines(text)
    edits: list[Edit] = []
    computed = heuristics_keys(fn)
    if plan.kind == "autotuned":
        dec = autotune_decorator(fn)
        kw = next((k for k in dec.keywords if k.arg == "configs"), None)
        node = kw.value if kw is not None else (dec.args[0] if dec.args else None)
        if node is None:
            raise ValueError("autotune decorator without configs")
        # what the old configs set and the new ones do not (a GROUP_SIZE_M, num_stages) stays set
        kept = (existing_configs(fn) or [{}])[0]
        configs = [{k: v for k, v in {**kept, **c}.items() if k not in computed} for c in configs]
        indent = lines.indent_of(node.lineno) + "    "
        s, e = lines.span(node)
        edits.append(Edit(s, e, "[\n" + "".join(_config_text(c, indent) for c in configs) + lines.indent_of(node.lineno) + "]"))
        return apply(text, edits)
    for knob in (plan.knobs.get(k) for c in configs for k in c):
        if knob is not None and not knob.autotunable:
            what = "a cap on a computed size" if knob.capped else "set by a triton.Config object"
            raise NotAutotunable(f"{knob.param} is {what}: an autotune list cannot take it over")
        argument = next((d.argument for d in (knob.grid if knob else ()) if d.argument), None)
        if argument:
            raise NotAutotunable(f"{knob.param} also sizes the launch argument {argument}, which a config "
                                 "cannot reach")
    sites = launch_sites(tree, plan.kernel)
    if any(k.arg is None for site in sites for k in site.call.keywords):
        raise NotAutotunable("the launch unpacks keywords (**...) an autotune config would set twice")
    configs = [{k: v for k, v in c.items() if k not in computed} for c in configs]
    for opt in CONFIG_OPTIONS:  # a launch's own option survives as every config's
        knob = plan.knobs.get(opt)
        if knob is not None and knob.current is not None:
            configs = [{**c, opt: c.get(opt, knob.current)} for c in configs]
    tuned = sorted({k for c in configs for k in c} | set(CONFIG_OPTIONS))
    missing = {k for c in configs for k in c if any(k not in c2 for c2 in configs)} - set(CONFIG_OPTIONS)
    if missing:
        raise ValueError(f"not every config sets {', '.join(sorted(missing))}")
    dec_line = min(d.lineno for d in fn.decorator_list)
    indent = lines.indent_of(dec_line)
    key = plan.size_params
    restore = in_place_params(tree, fn)
    block = (f"{indent}@triton.autotune(\n{indent}    configs=[\n"
             + "".join(_config_text(c, indent + "        ") for c in configs)
             + f"{indent}    ],\n{indent}    key={key!r},\n"
             + (f"{indent}    restore_value={restore!r},\n" if restore else "")
             + f"{indent})\n").replace("'", '"')
    edits.append(Edit(lines.line_start(dec_line), lines.line_start(dec_line), block))
    # the launch no longer passes what the autotuner now picks; the grid reads it from META
    # grid literals that copy a tuned block size read it from META too
    literals = {(node.lineno, node.col_offset): (knob.param, offset)
                for knob in plan.knobs.values() if knob.param in tuned
                for d in knob.grid for node, offset in d.parts}
    params = [a.arg for a in fn.args.args]
    for site in sites:
        passed = {kw.arg: kw for kw in site.call.keywords if kw.arg in tuned}
        positional = {params[i]: arg for i, arg in enumerate(site.call.args) if i < len(params) and params[i] in tuned}
        if positional and min(params.index(p) for p in positional) + len(positional) != len(site.call.args):
            raise NotAutotunable(f"{', '.join(positional)} passed by position before arguments that stay")
        locals_map = {kw.value.id: kw.arg for kw in passed.values() if isinstance(kw.value, ast.Name)}
        locals_map.update({arg.id: p for p, arg in positional.items() if isinstance(arg, ast.Name)})
        edits.append(_strip_args(text, lines, site.call, list(passed.values()) + list(positional.values())))
        edits += _grid_to_meta(text, lines, site, locals_map, literals)
    return apply(text, edits)


def _strip_args(text: str, lines: Lines, call: ast.Call, drop: list) -> Edit:
    """One edit over the call's argument list dropping the `drop` arguments (keywords, trailing
    positionals); lines left empty go."""
    if not drop:
        return Edit(0, 0, "")
    args = list(call.args) + list(call.keywords)
    start = lines.offset(args[0].lineno, args[0].col_offset)
    end = lines.offset(call.end_lineno, call.end_col_offset) - 1  # before ")"
    region = text[start:end]
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
    """Names of tuned values, and grid literals copying them ({(line, col): (name, offset)}), become
    META lookups; `meta` is the name the grid function calls its argument."""

    def __init__(self, mapping: dict, literals: dict, meta: str = "META", inline: dict | None = None):
        self.mapping = mapping
        self.literals = literals
        self.meta = meta
        self.inline = inline or {}  # {local: its value}: a local the grid reads, written out when it reads a tuned value
        self.changed = False

    def _lookup(self, name):
        self.changed = True
        return ast.Subscript(value=ast.Name(self.meta, ast.Load()), slice=ast.Constant(name), ctx=ast.Load())

    def visit_Name(self, node):
        if node.id in self.mapping:
            return self._lookup(self.mapping[node.id])
        if node.id in self.inline:
            inner = _MetaRewriter(self.mapping, self.literals, self.meta,
                                  {k: v for k, v in self.inline.items() if k != node.id})
            value = inner.visit(copy.deepcopy(self.inline[node.id]))
            if inner.changed:
                self.changed = True
                return value
        return node

    def visit_Constant(self, node):
        hit = self.literals.get((getattr(node, "lineno", None), getattr(node, "col_offset", None)))
        if hit is None:
            return node
        name, offset = hit
        lookup = self._lookup(name)
        return lookup if not offset else ast.BinOp(lookup, ast.Sub() if offset < 0 else ast.Add(),
                                                   ast.Constant(abs(offset)))


def _grid_to_meta(text, lines, site, locals_map: dict, literals: dict) -> list[Edit]:
    grid = site.grid
    target = grid
    if isinstance(grid, ast.Name):
        assign = local_assignment(site.function, grid.id, site.call.lineno)
        if assign is None:
            return []
        target = assign.value
    if isinstance(target, ast.Lambda):  # already reads the meta-parameters: only copied literals change
        if not target.args.args:
            return []
        rewriter = _MetaRewriter({}, literals, target.args.args[0].arg)
        new = rewriter.visit(copy.deepcopy(target.body))
        if not rewriter.changed:
            return []
        s, e = lines.span(target.body)
        return [Edit(s, e, ast.unparse(new).replace("'", '"'))]
    rewriter = _MetaRewriter(locals_map, literals, inline=grid_locals(site))
    # the copy keeps the literals' positions, which is how they are recognised
    new = rewriter.visit(copy.deepcopy(target))
    if not rewriter.changed:
        return []
    s, e = lines.span(target)
    return [Edit(s, e, f"lambda META: {ast.unparse(new)}".replace("'", '"'))]
