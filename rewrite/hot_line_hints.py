"""What a kernel's hottest lines say to try first: the proposer families its stalls point at, and why.

    hints = hints_for(text, "scale_rows_kernel", lines)   # LineProfile on the text's lines
    # [Hint(families=("coarsening", "block size"), line=23,
    #       reason="line 23 (`x = tl.load(...)`, 61% of the samples) waits on global memory: ...")]

Each hot line is read against the kernel's source (a `tl.load`, a `tl.dot`, a reduction on it)
and its top stall reason:
- global memory (long scoreboard) at a load, or where a load's data is first used (`waits_on`),
  in a kernel without `tl.dot`: each program has too little in flight; coarsening and larger blocks
  give it more; the global or shared-memory queue full there: many narrow requests, larger blocks
  (wider loads) and coarsening;
- the same in a `tl.dot` kernel: the pipeline is too shallow, num_stages and tiles first;
- a `tl.dot` line with the tensor pipe under half busy, or waiting on shared memory or its queue:
  the tiles do not feed the tensor cores, tile sizes and num_stages first;
- a reduction waiting at a barrier: warps wait for one another to combine, num_warps first.
A matmul whose tensor pipe is at least half busy gets no hint: it does its work; nor does a launch
at AT_CEILING_PCT of its roofline or more: its lines say where the time goes, no proposer moves it much.

`favour` orders candidates by these (the hint of the hottest line first); it never drops one, and
a candidate moved ahead carries the hint's reason in `meta["favoured"]`. `favour_configs` orders
a config search's variants alike, so the timing that the budget may cut starts with them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tritonlens.analysis.python_ast import parse as parse_python
from tritonlens.profiling.worker.line_profile import (
    LineProfile,
    LineSamples,
    stall_text,
)

from .candidate import Candidate
from .edits import dotted, kernel_named, tl_calls

COARSEN, BLOCK, TILE, STAGES, WARPS = "coarsening", "block size", "tile size", "num_stages", "num_warps"

HOT_LINES = 5  # the lines a hint or a prompt reads: the rest hold too little to act on
MIN_SHARE = 0.05
LOW_TENSOR_PCT = 50.0  # a matmul whose tensor pipe is busier than this is doing its work
AT_CEILING_PCT = 80.0  # of the roofline (LaunchProfile.pct_of_peak): little is left to win
MEMORY_WAITS = ("long_sb", "lg", "mio")
OPERAND_WAITS = ("short_sb", "mio")
REDUCTIONS = ("sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum", "cumsum", "cumprod",
              "associative_scan")
# a rule fix's code → the family its fix belongs to (TL009: num_warps for the tile; TL015: a larger block)
_FIX_FAMILY = {"TL009": WARPS, "TL015": BLOCK}


@dataclass(frozen=True)
class Hint:
    families: tuple[str, ...]  # the proposer families to try first, the likeliest first
    line: int
    reason: str  # one sentence a report shows: the line, its share, what it waits on, what that suggests


def hints_for(text: str, kernel: str, lines: LineProfile, tensor_pipe_pct: float | None = None,
              roofline_pct: float | None = None) -> list[Hint]:
    """The hints of `kernel`'s hottest lines (numbered as in `text`), the hottest first; [] when
    the lines point at nothing the proposers can move, or the launch runs near its roofline."""
    if roofline_pct is not None and roofline_pct >= AT_CEILING_PCT:
        return []
    try:
        fn = kernel_named(parse_python(text), kernel)
    except SyntaxError:
        return []
    if fn is None:
        return []
    source = text.splitlines()
    uses_dot = bool(tl_calls(fn, "dot"))
    out: list[Hint] = []
    for hot in lines.hottest(HOT_LINES, MIN_SHARE):
        hint = _hint(hot, _line_calls(fn, hot.line), uses_dot, tensor_pipe_pct, source)
        if hint is not None:
            out.append(hint)
    return out


def _hint(hot: LineSamples, calls: set[str], uses_dot: bool, tensor_pct: float | None,
          source: list[str]) -> Hint | None:
    kinds = {i.kind for i in hot.instructions[:2]}
    top = hot.top_reason
    if top is None:
        return None
    where = f"line {hot.line} (`{_code(source, hot.line)}`, {hot.share:.0%} of the samples)"
    words = stall_text(top)
    waits = f"waits {words[len('waiting '):]}" if words.startswith("waiting ") else f"stalls ({words})"
    is_dot = "dot" in calls or (not calls and "tensor core" in kinds)
    is_load = "load" in calls or (not calls and bool(kinds & {"global load", "TMA load", "async copy to shared memory"}))
    is_reduction = bool(calls & set(REDUCTIONS)) or (not calls and bool(kinds & {"warp reduction", "warp shuffle"}))
    # a load's latency shows where its data is first used: `waits_on` names the loads' lines
    memory = top in MEMORY_WAITS and (is_load or bool(hot.waits_on))
    if hot.waits_on and top == "long_sb":
        waits += f" (the load on line {hot.waits_on[0]})"
    if uses_dot and tensor_pct is not None and tensor_pct >= LOW_TENSOR_PCT:
        return None  # the tensor cores are busy: the matmul does its work
    pipe = f", the tensor pipe {tensor_pct:.0f}% busy" if tensor_pct is not None else ""
    if is_dot and (tensor_pct is not None or top in OPERAND_WAITS):
        return Hint((TILE, STAGES), hot.line,
                    f"{where} {waits}{pipe}: the tiles do not keep the tensor cores fed; tile sizes and "
                    "num_stages first")
    if memory and uses_dot:
        return Hint((STAGES, TILE), hot.line,
                    f"{where} {waits}{pipe}: the loads feeding tl.dot are not prefetched far enough; num_stages "
                    "and tile sizes first")
    if memory and top == "long_sb":
        return Hint((COARSEN, BLOCK), hot.line,
                    f"{where} {waits}: each program has too few loads in flight; coarsening and larger "
                    "blocks first")
    if memory:
        return Hint((BLOCK, COARSEN), hot.line,
                    f"{where} {waits}: many narrow requests fill the queue; larger blocks (wider loads) and "
                    "coarsening first")
    if is_reduction and top == "barrier":
        return Hint((WARPS,), hot.line,
                    f"{where} {waits}: warps wait for one another to combine the reduction; num_warps first")
    return None


def _line_calls(fn: ast.FunctionDef, line: int) -> set[str]:
    """The tl calls written on `line` ("load", "dot", "sum", ...), a call spanning it included."""
    return {(dotted(n.func) or "").split(".")[-1] for n in ast.walk(fn)
            if isinstance(n, ast.Call) and n.lineno <= line <= (n.end_lineno or n.lineno)
            and (dotted(n.func) or "").count(".") >= 1}


def _code(source: list[str], line: int, width: int = 72) -> str:
    text = source[line - 1].strip() if 0 < line <= len(source) else "?"
    return text if len(text) <= width else text[:width - 1] + "…"


# -- the order of candidates -------------------------------------------------------------------
def families_of(c: Candidate) -> set[str]:
    """The families a candidate belongs to, from what its proposer recorded in `meta`."""
    meta = c.meta or {}
    if c.proposer == "config":
        cfgs = [meta["config"]] if "config" in meta else list(meta.get("configs") or [])
        keys = {k for cfg in cfgs for k in cfg}
        out = {f for key, f in (("num_warps", WARPS), ("num_stages", STAGES)) if key in keys}
        if keys - {"num_warps", "num_stages"}:
            out |= {TILE, BLOCK}
        return out
    if meta.get("transform") == "coarsen":
        return {COARSEN}
    return {_FIX_FAMILY[code] for code in meta.get("codes") or () if code in _FIX_FAMILY}


def favour(cands: list[Candidate], hints: dict[str, list[Hint]]) -> list[Candidate]:
    """`cands` with those that the hints of their kernel name first (the hottest line's first),
    the rest after them; ties keep their proposer's order, and each one moved ahead says why in
    `meta["favoured"]`."""
    if not any(hints.values()):
        return list(cands)

    def rank(c: Candidate) -> tuple[float, Hint | None]:
        families = families_of(c)
        for i, hint in enumerate(hints.get(c.kernel or "", ())):
            if families & set(hint.families):
                return i, hint
        return float("inf"), None

    ranked = [(rank(c), n, c) for n, c in enumerate(cands)]
    ranked.sort(key=lambda r: (r[0][0], r[1]))
    for (_, hint), _, c in ranked:
        if hint is not None:
            c.meta = {**c.meta, "favoured": hint.reason}
    return [c for _, _, c in ranked]


def favour_configs(space: list[dict], current: dict, families: list[str], roles: dict[str, str]) -> list[dict]:
    """A config search's variants, those that move the hinted knobs the hinted way first (more
    stages, a larger block, another num_warps), each group in the search's own order. `current`
    holds the launch's values; `roles` each knob's role ("block", "M", "warps", ...)."""
    def moves(cfg: dict, family: str) -> bool:
        if family == STAGES:
            return cfg.get("num_stages", 0) > current.get("num_stages", 3)
        if family == WARPS:
            return cfg.get("num_warps", 0) not in (0, current.get("num_warps", 4))
        if family == BLOCK:
            return any(roles.get(k) == "block" and k not in ("num_warps", "num_stages") and isinstance(v, int)
                       and v > (current.get(k) or v) for k, v in cfg.items())
        return False

    moving = [f for f in families if f in (STAGES, WARPS, BLOCK)]
    if not moving:
        return list(space)

    def key(cfg: dict) -> tuple:
        return tuple(0 if moves(cfg, f) else 1 for f in moving)

    return sorted(space, key=key)


def families(hints: list[Hint]) -> list[str]:
    """The hinted families in the order of the hints (each once)."""
    return list(dict.fromkeys(f for h in hints for f in h.families))


def note(kernel: str, hints: list[Hint], lines: LineProfile, roofline_pct: float | None = None) -> str:
    """The report's line: what the hot lines favour and the hottest's reason, or why they favour nothing."""
    if hints:
        return f"hot lines of {kernel} put {', '.join(families(hints))} candidates first: {hints[0].reason}"
    top = lines.hottest(1, MIN_SHARE)
    hottest = f"hottest: line {top[0].line}, {top[0].label()}" if top else "no line holds 5% of the samples"
    if roofline_pct is not None and roofline_pct >= AT_CEILING_PCT:
        return f"hot lines of {kernel} read, no proposer put first: it runs at {roofline_pct:.0f}% of its roofline ({hottest})"
    return f"hot lines of {kernel} read; none points at a proposer to try first ({hottest})"
