"""Config search: tile sizes, num_warps, num_stages, GROUP_M, chosen from the kernel's structure and
the device, measured on the GPU when there is one.

Structure decides the search space:
- a tl.dot kernel tunes its M/N/K tiles with warps and stages, bounded by shared memory:
  stages × (BM·BK + BK·BN) × bytes ≤ the device's budget (227 KB on H100);
- a kernel that loops over a row in BLOCK chunks tunes the chunk and warps;
- a 1-D block kernel (element-wise, per-block reductions) tunes BLOCK and warps;
- 2-D tiles without a dot (transpose-like) tune both tile sides and warps;
- a constexpr whose launch value is computed (softmax's next_power_of_2(n_cols)) is a correctness
  requirement, not a knob: only num_warps is tuned then, unless any block is correct (the kernel
  loops over it, or the grid divides by it: then its cap is tuned).
A knob that stays where it is (computed, passed in by the caller, under a grid passed in or built
by another function, pinned by an ambiguous grid literal) is named with its reason in
`Plan.unmovable` ("BLOCK_M: grid passed in as a parameter"), which candidates carry as
`meta["unmovable"]`, and in the plan's notes.
Where each value lives (a literal, a local, the wrapper's default, a module constant, a
triton.Config object, a capped computation) and which constexprs are knobs at all: config_sites.py.

Emits (1) the best config as edited literals at the launch site and (2) an `@triton.autotune`
decorator with the best few configs, `key` = the size parameters, the grid turned into
`lambda META: …` where it used a tuned value. A grid that repeats a block size as a literal
(`triton.cdiv(M, 64)` beside `BLOCK_M=64`) has that literal moved with the block (config_grid.py).
An already autotuned kernel gets its config list replaced. Without a GPU nothing is measured: the candidates are the structure's heuristic picks,
and the verifier can only check their correctness.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from tritonlens.analysis import gpus
from tritonlens.analysis.python_ast import parse as parse_python

from .candidate import Candidate
from .config_autotune import autotuned_params
from .config_edits import NotAutotunable, with_autotune, with_literals
from .config_grid import pair
from .config_sites import Knob, find_knobs, role
from .context import ProposalContext
from .edits import (
    Lines,
    constexpr_params,
    dotted,
    kernel_named,
    kernels,
    launch_sites,
    tl_calls,
)
from .hot_line_hints import families, favour_configs
from .proposal_guard import failed, one_line

__all__ = ["Knob", "Plan", "analyse", "describe", "propose", "role"]

MAX_VARIANTS = 16
TOP_K = 4


@dataclass
class Plan:
    kernel: str
    kind: str  # "dot" | "row_loop" | "block1d" | "tile2d" | "warps_only" | "autotuned"
    knobs: dict
    space: list  # list of dicts {param: value}
    size_params: list
    notes: list = field(default_factory=list)
    unmovable: list = field(default_factory=list)  # "BLOCK_M: why it stays", one per knob left alone


def _smem_budget(device: dict) -> int:
    """Shared memory per block on the device: its entry in the GPU table, the default GPU's when
    no GPU is there, and the smallest architecture's for a GPU the table does not know."""
    name = ((device or {}).get("name") or "").upper()
    for gpu in gpus.GPUS.values():
        if gpu.name in name:
            return gpu.smem_per_block
    if (device or {}).get("mode") != "gpu":
        return gpus.get(None).smem_per_block
    return min(a.smem_per_block for a in gpus.ARCHS.values())


def size_params(fn: ast.FunctionDef) -> list[str]:
    """Runtime parameters that bound the work: compared against, divided by blocks, looped to."""
    params = [a.arg for a in fn.args.args]
    consts = set(constexpr_params(fn))
    found: list[str] = []
    for n in ast.walk(fn):
        cands = []
        if isinstance(n, ast.Compare):
            cands = [n.left] + list(n.comparators)
        elif isinstance(n, ast.Call) and (dotted(n.func) or "").split(".")[-1] in ("cdiv", "range", "static_range"):
            cands = list(n.args)
        for c in cands:
            for x in ast.walk(c):
                if (isinstance(x, ast.Name) and x.id in params and x.id not in consts and "stride" not in x.id
                        and x.id not in found and not x.id.endswith("ptr")):
                    found.append(x.id)
    order = {p: i for i, p in enumerate(params)}
    return sorted(found, key=lambda p: order[p])


def analyse(text: str, kernel: str, device: dict | None = None, elem_bytes: int = 2) -> Plan | None:
    tree = parse_python(text)
    fn = kernel_named(tree, kernel)
    if fn is None:
        return None
    lines = Lines(text)
    consts = constexpr_params(fn)
    autotuned = "autotune" in [(dotted(d.func if isinstance(d, ast.Call) else d) or "").split(".")[-1]
                               for d in fn.decorator_list]
    sites = launch_sites(tree, kernel)
    if not sites:
        return None
    loops_over_block = any(isinstance(n, ast.For) and isinstance(n.iter, ast.Call)
                           and any(isinstance(a, ast.Name) and a.id in consts for a in n.iter.args[2:3])
                           for n in ast.walk(fn))
    knobs, unmovable = find_knobs(tree, fn, sites, consts, lines, loops_over_block)
    pinned: set[str] = set()
    if autotuned:
        unmovable = {}  # the autotuner owns the tile sizes
    else:
        owned, pinned = pair(knobs, sites)
        for name, found in owned.items():
            knobs[name].grid = found
            knobs[name].whole_tiles |= any(d.whole for d in found)
        for name in pinned:
            knobs[name].pinned = True
    uses_dot = bool(tl_calls(fn, "dot"))
    has_atomic = any(isinstance(n, ast.Call) and (dotted(n.func) or "").split(".")[-1].startswith("atomic_")
                     for n in ast.walk(fn))
    budget = _smem_budget(device or {})
    blocks = [k for k in knobs.values() if k.role in ("M", "N", "K", "block")]
    space: list[dict] = []
    if autotuned:
        kind = "autotuned"
        tuned = autotuned_params(tree, fn, sites)
        space = _space_for(fn, tuned, uses_dot, loops_over_block, has_atomic, budget, elem_bytes)
    elif uses_dot and {k.role for k in blocks} >= {"M", "N", "K"}:
        kind = "dot"
        bm = next(k.param for k in blocks if k.role == "M")
        bn = next(k.param for k in blocks if k.role == "N")
        bk = next(k.param for k in blocks if k.role == "K")
        for (m, n, k, w, s) in _DOT_CONFIGS:
            if s * (m * k + k * n) * elem_bytes > budget:
                continue
            space.append({bm: m, bn: n, bk: k, "num_warps": w, "num_stages": s})
        group = next((k.param for k in knobs.values() if k.role == "group"), None)
        if group:
            for cfg in space:
                cfg[group] = 8
    elif blocks:
        tuned = [k.param for k in blocks]
        space = _space_for(fn, tuned, uses_dot, loops_over_block, has_atomic, budget, elem_bytes)
        kind = "row_loop" if loops_over_block else ("tile2d" if len(tuned) >= 2 else "block1d")
    elif "num_warps" in knobs:
        kind = "warps_only"
        space = [{"num_warps": w} for w in (4, 8, 2, 1, 16)]
    else:
        return None
    if kind != "autotuned":
        # a value computed where no edit reaches (num_warps=warps) stays the wrapper's
        space = [{k: _whole(knobs[k], v) for k, v in cfg.items()
                  if k in knobs and k not in pinned and (k != "num_stages" or uses_dot)}
                 for cfg in space]
        space = [cfg for i, cfg in enumerate(space) if cfg and cfg not in space[:i]]
    current = {k.param: k.current for k in knobs.values() if k.current is not None}
    if not (knobs.get("num_warps") and knobs["num_warps"].override):  # computed: any pin is a change
        current.setdefault("num_warps", 4)
    if kind != "autotuned":
        space = [c for c in space if any(current.get(k, None if k != "num_stages" else 3) != v for k, v in c.items())]
    plan = Plan(kernel, kind, knobs, space[:MAX_VARIANTS], size_params(fn))
    unmovable.update({p: "a grid literal may be the size of another knob" for p in sorted(pinned)})
    plan.unmovable = [f"{p}: {why}" for p, why in unmovable.items()]
    for why in dict.fromkeys(unmovable.values()):
        plan.notes.append(f"left alone ({why}): " + ", ".join(p for p, w in unmovable.items() if w == why))
    return plan


def _whole(knob, value: int) -> int:
    """A block the grid floors a size by covers whole tiles only: it may shrink to a divisor of its
    value, which still divides the size, but a larger one could leave the tail uncomputed."""
    if not knob.whole_tiles or not knob.current or not isinstance(value, int):
        return value
    while value > 1 and (value > knob.current or knob.current % value):
        value //= 2
    return max(value, 1)


_DOT_CONFIGS = [  # (BM, BN, BK, warps, stages), best-known first on Hopper
    (128, 256, 64, 8, 3), (128, 256, 64, 8, 4), (256, 128, 64, 8, 3), (128, 128, 64, 8, 3),
    (128, 128, 64, 4, 4), (128, 128, 32, 4, 4), (128, 256, 32, 8, 4), (64, 256, 32, 4, 4),
    (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (64, 64, 64, 4, 3), (256, 64, 32, 4, 4),
]


def _space_for(fn, tuned: list[str], uses_dot, loops, atomic, budget, elem_bytes) -> list[dict]:
    """Candidate configs, the likeliest winners first (that order is the pick when nothing is timed)."""
    if not tuned:
        return [{"num_warps": w} for w in (4, 8, 2, 1, 16)]
    if uses_dot:
        roles = {role(p): p for p in tuned}
        if {"M", "N", "K"} <= set(roles):
            return [{roles["M"]: m, roles["N"]: n, roles["K"]: k, "num_warps": w, "num_stages": s}
                    for (m, n, k, w, s) in _DOT_CONFIGS if s * (m * k + k * n) * elem_bytes <= budget]
        if {"M", "N"} <= set(roles) and len(tuned) == 2:
            # an attention-like loop: the reduction width is the head's, fixed; shared memory that
            # does not fit fails the compile, and the config with it
            return [{roles["M"]: m, roles["N"]: n, "num_warps": w, "num_stages": s} for (m, n, w, s) in _DOT_MN]
    if len(tuned) >= 2:
        return [{tuned[0]: a, tuned[1]: b, "num_warps": w} for a, b, w in _TILE2D]
    p = tuned[0]
    table = _ROW_LOOP if loops else (_ATOMIC if atomic else _BLOCK1D)
    return [{p: b, "num_warps": w} for b, w in table]


_DOT_MN = [(128, 64, 8, 3), (128, 64, 4, 3), (128, 128, 8, 3), (64, 64, 4, 3), (128, 32, 4, 3), (64, 128, 4, 3),
           (128, 64, 8, 2), (64, 32, 4, 2), (128, 128, 8, 2), (64, 64, 4, 2)]
_BLOCK1D = [(1024, 4), (2048, 8), (4096, 8), (512, 4), (1024, 8), (2048, 4), (4096, 16), (256, 2)]
_ATOMIC = [(8192, 16), (4096, 8), (16384, 16), (2048, 8), (8192, 8), (4096, 4)]
_ROW_LOOP = [(4096, 8), (8192, 16), (2048, 8), (1024, 4), (4096, 16), (8192, 8), (2048, 4), (1024, 8)]
_TILE2D = [(64, 64, 4), (64, 64, 8), (32, 128, 4), (128, 32, 4), (64, 128, 8), (128, 64, 8), (32, 32, 4),
           (32, 32, 8)]


def describe(cfg: dict, plan: Plan | None = None) -> str:
    """`BLOCK=1024, num_warps=4`; a cap on a computed size reads `BLOCK<=1024`."""
    def part(k):
        capped = plan is not None and k in plan.knobs and plan.knobs[k].capped
        return f"{k}{'<=' if capped else '='}{cfg[k]}"

    return ", ".join([part(k) for k in cfg if k not in ("num_warps", "num_stages")]
                     + [part(k) for k in ("num_warps", "num_stages") if k in cfg])


def propose(ctx: ProposalContext, tuner=None, base: str | None = None, base_title: str | None = None) -> list[Candidate]:
    """`tuner(sources) -> [{"ok", "ms"}]` measures variants (GPU); None or no times: heuristic picks.

    `base`: the text to tune (e.g. an accepted rule rewrite of the original); default ctx.text.
    A candidate that cannot be written comes back as a FailedCandidate saying why.
    """
    text = base or ctx.text
    tree = parse_python(text)
    names = [k.name for k in kernels(tree)] if ctx.kernel is None else [ctx.kernel]
    out: list[Candidate] = []
    suffix = f" + {base_title}" if base_title else ""
    elem_bytes = _elem_bytes(ctx)
    for name in names:
        try:
            plan = analyse(text, name, ctx.device, elem_bytes)
        except Exception as exc:  # noqa: BLE001 - one kernel's oddity costs only its own search
            out.append(failed("config", f"config search of {name}", text, exc, kernel=name))
            continue
        if plan is None or not plan.space:
            continue
        hinted = families(ctx.hints.get(name, []))
        if hinted:  # the kernel's hot lines: the variants that move their knobs are timed (or picked) first
            current = {k.param: k.current for k in plan.knobs.values() if k.current is not None}
            roles = {p: plan.knobs[p].role if p in plan.knobs else role(p) for cfg in plan.space for p in cfg}
            plan.space = favour_configs(plan.space, current, hinted, roles)
        ranked, measured = _rank(text, plan, tuner)
        how = "measured on the GPU" if measured else "heuristic pick for the kernel's structure (not measured here)"
        meta = {"plan": plan.kind, "space": len(plan.space), "measured_ms": measured, "notes": plan.notes,
                "unmovable": plan.unmovable}
        best = ranked[0]
        if plan.kind != "autotuned":
            title = f"config {describe(best, plan)}{suffix}"
            try:
                out.append(Candidate("config", title, with_literals(text, plan, best),
                                     f"launch {name} with {describe(best, plan)} ({how})", kernel=name,
                                     meta={**meta, "config": best}))
            except Exception as exc:  # noqa: BLE001 - refused with its reason, the others still run
                out.append(failed("config", title, text, exc, kernel=name))
        top = _distinct(ranked, TOP_K)
        if len(top) > 1:
            title = f"autotune {len(top)} configs{suffix}"
            try:
                source = with_autotune(text, plan, top)
            except NotAutotunable:
                continue
            except Exception as exc:  # noqa: BLE001
                out.append(failed("config", title, text, exc, kernel=name))
                continue
            out.append(Candidate("config", title, source,
                                 f"@triton.autotune over {len(top)} configs ({how}), key={plan.size_params}",
                                 kernel=name, meta={**meta, "configs": top}))
    return out


def _rank(text: str, plan: Plan, tuner) -> tuple[list[dict], dict | None]:
    """The plan's configs, fastest first when the tuner timed them (and {config: ms}); else the
    heuristic order. A tuner that fails leaves the heuristic order, with a note."""
    if tuner is None:
        return list(plan.space), None
    variants: list[str | None] = []
    for cfg in plan.space:
        try:
            variants.append(with_literals(text, plan, cfg) if plan.kind != "autotuned"
                            else with_autotune(text, plan, [cfg]))  # each config alone
        except ValueError:
            variants.append(None)
    try:
        results = tuner([v for v in variants if v is not None])
    except Exception as exc:  # noqa: BLE001 - untimed picks are still worth verifying
        plan.notes.append(f"configs not timed: {one_line(exc)}")
        return list(plan.space), None
    it = iter(results)
    scored = []
    for cfg, v in zip(plan.space, variants):
        if v is None:
            continue
        r = next(it, {})
        if r.get("ok") and r.get("ms"):
            scored.append((r["ms"], cfg))
    if not scored:
        return list(plan.space), None
    scored.sort(key=lambda x: x[0])
    return [c for _, c in scored], {describe(c, plan): ms for ms, c in scored}


def _distinct(ranked: list[dict], k: int) -> list[dict]:
    out = []
    for c in ranked:
        if c not in out:
            out.append(c)
        if len(out) == k:
            break
    return out


def _elem_bytes(ctx: ProposalContext) -> int:
    if ctx.elem_bytes:
        return ctx.elem_bytes
    # A launch's signature reads "x_ptr=float16[4096, 4096], n=4096": the first tensor's dtype.
    for kern in ctx.profile.kernels if ctx.profile else []:
        for launch in kern.launches:
            m = re.search(r"=([a-z]+\d+)\[", launch.more.get("signature") or "")
            if m:
                dt = m.group(1)
                return 4 if "32" in dt else (1 if "8" in dt else 2)
    return 2
