"""TL101–TL106: diagnostics from what the compiler actually produced (compile_job's CompileReport).

Each finding sits on the line it concerns (the spilling line, the `tl.dot`, the load, the
compiler's error position) and falls back to the kernel's `def` line when nothing narrower is known.
One finding per (rule, line) per kernel: when several configurations agree, the message names the
worst and `data["configs"]` lists them all. Messages state the fact and its numbers within
MESSAGE_LIMIT; the configuration's label is added when it fits, and the advice is on the rule's page.
"""

from __future__ import annotations

import re
from pathlib import Path

from tritonlens.analysis import message_text as mt
from tritonlens.analysis.findings import (
    MESSAGE_LIMIT,
    Finding,
    Range,
    Related,
    Severity,
)
from tritonlens.profiling.compile_hints import hint_if_assumed
from tritonlens.profiling.no_facts import reason_line
from tritonlens.profiling.occupancy import TARGET_LIMITS, limits_for
from tritonlens.profiling.worker.compile_report import (
    CompileReport,
    ConfigFacts,
    DotFacts,
)

SPILL_WARNING = 256  # bytes: below, info
LOW_OCCUPANCY = 25.0  # percent
LABEL_WIDTH = 40  # characters of a configuration's label a message quotes


class _Lines:
    def __init__(self, text: str):
        self.lines = text.splitlines()

    def range(self, line: int | None, column: int | None = None) -> Range:
        """0-based range for a 1-based line: from `column` (or the first non-blank) to the line end."""
        if not line or line < 1 or line > len(self.lines):
            return Range.of(0, 0, 0, 0)
        text = self.lines[line - 1]
        start = len(text) - len(text.lstrip()) if column is None else min(column, len(text))
        end = len(text.rstrip())
        return Range.of(line - 1, start, line - 1, max(end, start))

    def def_range(self, line: int | None, name: str) -> Range:
        if line and 0 < line <= len(self.lines):
            col = self.lines[line - 1].find(name)
            if col >= 0:
                return Range.of(line - 1, col, line - 1, col + len(name))
        return self.range(line)

    def token_range(self, line: int | None, column: int | None) -> Range:
        """The expression starting at `column`: up to the end of its call parentheses if any."""
        if not line or line < 1 or line > len(self.lines) or column is None:
            return self.range(line)
        text = self.lines[line - 1]
        i, depth = column, 0
        while i < len(text):
            ch = text[i]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
                if depth <= 0:
                    i += 1
                    break
            elif depth == 0 and (ch.isspace() or ch in ",=:"):
                break
            i += 1
        return Range.of(line - 1, column, line - 1, max(i, column + 1))


def _fmt(n) -> str:
    return f"{n:,}"


def _label(c: ConfigFacts, others: int = 0) -> str:
    """' (launch of case 0, grid 64)': the configuration a message speaks of, and how many more."""
    more = f" and {others} more" if others else ""
    return f" ({mt.clip(c.label or 'configuration', LABEL_WIDTH)}{more})"


def findings_from(result: CompileReport, text: str | None = None) -> list[Finding]:
    if text is None:
        try:
            text = Path(result.path).read_text(encoding="utf-8")
        except OSError:
            text = ""
    src = _Lines(text)
    target = result.target
    out: list[Finding] = []
    for k in result.kernels:
        name = k.name
        defr = src.def_range(k.line, name)
        configs = k.configs
        found = _tl105(src, name, defr, configs)
        ok = [c for c in configs if c.compiled]
        found += _tl104(name, defr, ok, target)
        found += _tl101(src, name, defr, ok)
        found += _tl102(name, defr, ok, target)
        found += _tl103(src, name, ok, target)
        found += _tl106(src, name, ok)
        out += [hint_if_assumed(f, configs, src.lines, k.line) for f in found]
    return out


def _worst(configs, key):
    return max(configs, key=key)


def _tl105(src, name, defr, configs) -> list[Finding]:
    seen, assumed = {}, {}
    for c in configs:
        e = c.error
        if e is None or e.type == "JobError":
            continue  # a configuration the binder refused (num_warps=3) says nothing about the kernel's code
        seen.setdefault((e.line, e.column, e.message), []).append(c.label)
        assumed[(e.line, e.column, e.message)] = assumed.get((e.line, e.column, e.message), True) and c.source == "assumed"
    out = []
    for (line, col, msg), labels in seen.items():
        rng = src.token_range(line, col) if line else defr
        more = f" ({mt.clip(labels[0], LABEL_WIDTH)}" + (f" and {len(labels) - 1} more" if len(labels) > 1 else "") + ")"
        # Values we assumed, not the user's: the compiler refused our guess, not necessarily their code.
        sev = Severity.WARNING if assumed[(line, col, msg)] else Severity.ERROR
        # Triton's own text quotes the source above its message ("at 20:4:\n<code>\n^\nwhat"): the message
        text = f"Triton compile error: {reason_line(msg, MESSAGE_LIMIT)}"
        text = text + more if len(text) + len(more) <= MESSAGE_LIMIT else mt.clip(text, MESSAGE_LIMIT)
        out.append(Finding("TL105", sev, text, rng, kernel=name,
                           data={"configs": labels, "line": line, "column": col, "error": msg}))
    return out


def _tl104(name, defr, ok, target) -> list[Finding]:
    limit = limits_for(target).smem_per_block
    over = [c for c in ok if c.shared_bytes > limit]
    if not over:
        return []
    w = _worst(over, lambda c: c.shared_bytes)
    stages = f"num_stages={w.num_stages}" if w.num_stages else ""
    base = f"needs {_fmt(w.shared_bytes)} B of shared memory; {target} allows {_fmt(limit)} B: the launch fails"
    msg = mt.shortest_needed(base + _label(w)[:-1] + (f", {stages})" if stages else ")"),
                             base + (f" ({stages})" if stages else ""), base)
    sev = Severity.WARNING if all(c.source == "assumed" for c in over) else Severity.ERROR  # as TL105
    return [Finding("TL104", sev, msg, defr, kernel=name,
                    data={"configs": [c.label for c in over], "shared_bytes": w.shared_bytes, "limit": limit})]


def _tl101(src, name, defr, ok) -> list[Finding]:
    spilling = [c for c in ok if (c.spill_bytes or 0) > 0]
    if not spilling:
        return []
    w = _worst(spilling, lambda c: c.spill_bytes)
    sb = w.spill_bytes
    severity = Severity.INFO if sb < SPILL_WARNING else Severity.WARNING  # spills slow a kernel; Triton runs it
    hot = sorted((ln for ln in w.lines if ln.spill_bytes > 0 and ln.line != _line_of(defr)),
                 key=lambda ln: -ln.spill_bytes)
    rng = src.range(hot[0].line) if hot else defr
    related = tuple(Related(src.range(ln.line), f"{ln.spill_bytes} B of spill loads/stores on this line")
                    for ln in hot[:5])
    where = f"; most spill traffic on line {hot[0].line}" if hot else ""
    msg = mt.fit(f"{w.registers} registers and {_fmt(sb)} B of spills to local memory per thread", where, _label(w))
    return [Finding("TL101", severity, msg, rng, kernel=name, related=related,
                    data={"configs": [c.label for c in spilling], "spill_bytes": sb,
                          "lines": [ln.line for ln in hot]})]


def _line_of(r: Range) -> int:
    return r.start.line + 1


def _tl102(name, defr, ok, target) -> list[Finding]:
    low = [c for c in ok if c.occupancy is not None and c.occupancy <= LOW_OCCUPANCY
           and c.shared_bytes <= limits_for(target).smem_per_block]
    if not low:
        return []
    w = min(low, key=lambda c: c.occupancy)
    lim = limits_for(target)
    warps = w.num_warps or 4
    cause = {"registers": f"{w.registers} registers/thread × {warps * 32} threads",
             "shared memory": f"{_fmt(w.shared_bytes)} B of shared memory per program",
             "warps": f"{warps} warps per program",
             "blocks": f"at most {lim.max_blocks} programs per SM"}.get(w.limiter, w.limiter)
    msg = mt.fit(f"theoretical occupancy {w.occupancy:g}% on {target}: {w.blocks_per_sm} program(s) × "
                 f"{w.num_warps} warps of {lim.max_warps} per SM, limited by {w.limiter}", f" ({cause})", _label(w))
    return [Finding("TL102", Severity.INFO, msg, defr, kernel=name,
                    data={"configs": [c.label for c in low], "occupancy": w.occupancy, "limiter": w.limiter})]


def dot_reason(d: DotFacts, cfg: ConfigFacts, target: str) -> str | None:
    """Why a dot missed the target's tensor-core path, when we can tell."""
    a = (d.a_dtype or "").lower()
    if a in ("f32", "fp32") and d.input_precision == "ieee":
        return "fp32 operands with input_precision=\"ieee\" have no tensor-core instruction"
    if a in ("f64", "fp64"):
        return "fp64 operands"
    if d.m is not None and (d.m < 16 or (d.n or 16) < 16 or (d.k or 16) < 16):
        return f"a {d.m}×{d.n}×{d.k} tile is below the 16×16×16 tensor-core minimum"
    if target in TARGET_LIMITS and limits_for(target).tensor_core_path == "wgmma":
        if (cfg.num_warps or 4) < 4:
            return f"wgmma needs a warpgroup of 4 warps; num_warps={cfg.num_warps}"
        if d.m is not None and d.m < 64:
            return f"the tile has {d.m} rows; wgmma needs at least 64 (BLOCK_M ≥ 64)"
    return None


def _tl103(src, name, ok, target) -> list[Finding]:
    if target not in TARGET_LIMITS:
        return []
    want = limits_for(target).tensor_core_path
    per_site: dict = {}
    for c in ok:
        for d in c.dots:
            if d.lowering != want:
                per_site.setdefault((d.line, d.column), []).append((c, d))
    out = []
    for (line, col), hits in per_site.items():
        c, d = hits[0]
        reason = dot_reason(d, c, target)
        because = f": {reason}" if reason else ""
        msg = mt.fit(f"tl.dot lowered to {d.lowering}, not {target}'s {want}", because, _label(c, len(hits) - 1))
        out.append(Finding("TL103", Severity.WARNING, msg, src.token_range(line, col), kernel=name,
                           data={"configs": [h[0].label for h in hits], "lowering": d.lowering,
                                 "expected": want, "reason": reason}))
    return out


# How compile_worker labels a configuration captured from a harness case, and its grid.
_CASE = re.compile(r"^launch of case (\d+)\b")
_GRID = re.compile(r"\bgrid (\d+(?:×\d+)*)")


def _case(label: str | None) -> int | None:
    m = _CASE.match(label or "")
    return int(m.group(1)) if m else None


def _grid_size(label: str | None) -> int:
    m = _GRID.search(label or "")
    size = 1
    for g in m.group(1).split("×") if m else ():
        size *= int(g)
    return size if m else 0


def performance_configs(configs: list[ConfigFacts]) -> list[ConfigFacts]:
    """The configurations of the performance shape: a harness's first case (its later cases check
    correctness, ragged sizes among them), else the launches with the largest grid (all of them
    when no label names a grid: static and assumed configurations). A speed rule
    judges these; a ragged size that defeats vectorization is a correctness case, not the workload."""
    labelled = [(c, c.labels or [c.label]) for c in configs]
    cases = [n for _, labels in labelled for lb in labels if (n := _case(lb)) is not None]
    if cases:  # the first case that launched this kernel and compiled
        return [c for c, labels in labelled if any(_case(lb) == min(cases) for lb in labels)]
    sizes = {id(c): max((_grid_size(lb) for lb in labels), default=0) for c, labels in labelled}
    largest = max(sizes.values(), default=0)
    return [c for c in configs if sizes[id(c)] == largest] if largest else list(configs)


def _tl106(src, name, ok) -> list[Finding]:
    out, done = [], set()
    for c in performance_configs(ok):
        w = c.vector_whatif
        if w is None:
            continue
        args = mt.names(w.arguments, 40)
        for item in w.lines:
            if item.line in done:
                continue
            done.add(item.line)
            msg = mt.fit(f"loads move {item.bytes} B per instruction, {item.could_be} B with {args} divisible by 16",
                         _label(c))
            out.append(Finding("TL106", Severity.WARNING, msg, src.range(item.line), kernel=name,
                               data={"arguments": w.arguments, "bytes": item.bytes, "could_be": item.could_be,
                                     "config": c.label}))
    return out
