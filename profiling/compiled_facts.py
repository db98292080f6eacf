"""What one compiled configuration tells, from its artifacts: resource usage, occupancy, dots,
pipelining and vectorisation of the loads, per-line instructions and spills, and TL106's what-if
(would the loads be vectorised if the arguments were divisible by 16?)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from tritonlens.profiling import ir_line_map, ptx_facts
from tritonlens.profiling.compile_worker import (
    CompileCancelled,
    CompileError,
    compile_job,
)
from tritonlens.profiling.occupancy import occupancy
from tritonlens.profiling.worker.compile_report import (
    CompileReport,
    ConfigFacts,
    DotFacts,
    KernelCompile,
    LineFacts,
    LoadFacts,
    VectorWhatIf,
    WiderLoad,
)
from tritonlens.profiling.worker.messages import CompiledConfig, CompiledKernel


def kernel_facts(k: CompiledKernel, path: str, target: str, root: Path) -> KernelCompile:
    out = KernelCompile(name=k.name, line=k.line, error=k.error, note=k.note)
    seen: dict[str, ConfigFacts] = {}
    for cfg in k.configs:
        key = cfg.key
        if key and key in seen:  # the same specialisation launched twice: one compile, two labels
            seen[key].labels.append(cfg.label)
            continue
        facts = _facts(cfg, path, target, root)
        if key:
            seen[key] = facts
        out.configs.append(facts)
    first = next((c for c in out.configs if c.error is None), None)
    if first:
        out.lines = first.lines
    return out


def _facts(cfg: CompiledConfig, path: str, target: str, root: Path) -> ConfigFacts:
    """What the compiler made of one configuration, read off its artifacts."""
    f = ConfigFacts(label=cfg.label, labels=[cfg.label], constexprs=cfg.constexprs, num_warps=cfg.num_warps,
                    num_stages=cfg.num_stages, error=cfg.error, signature=cfg.signature,
                    specialization=cfg.specialization, key=cfg.key, cached=cfg.cached, compile_s=cfg.compile_s,
                    args=cfg.more.get("args"))
    if cfg.error is not None or cfg.registers is None:
        return f
    arts = cfg.artifacts
    # A cached artifact may name another file holding the same kernel source.
    path = ir_line_map.source_path_in(arts.get("ptx") or arts.get("ttgir") or "", path)
    if f.key:
        for stage, text in arts.items():
            p = root / "ir" / f.key[:2] / f.key / stage
            if not p.exists():
                write_text(p, text)
    f.registers = cfg.registers
    f.stack_bytes = cfg.stack_bytes
    # What cuFuncGetAttribute(LOCAL_SIZE_BYTES) reports on the GPU (Triton's n_spills × 4): the
    # per-thread local memory, which for a Triton kernel is its spill stack.
    f.spill_bytes = max(cfg.stack_bytes, cfg.local_bytes)
    f.shared_bytes = cfg.shared_bytes
    occ = occupancy(target, cfg.registers, f.shared_bytes, cfg.num_warps or 4)
    f.occupancy, f.blocks_per_sm, f.warps_per_sm, f.limiter = (occ.occupancy, occ.blocks_per_sm, occ.warps_per_sm,
                                                               occ.limiter)
    if "ttgir" in arts:
        dl = ptx_facts.dots(arts["ttgir"], path)
        f.dots = [DotFacts(**d.as_dict()) for d in dl]
        f.mma = ptx_facts.mma_summary(dl)
    if "ptx" in arts:
        loads = ptx_facts.global_loads(arts["ptx"], path)
        f.pipeline = ptx_facts.pipelining(loads)
        f.pipelined = None if f.pipeline is None else f.pipeline != "none"
        f.vectorized = ptx_facts.vectorized(loads)
        f.loads = [LoadFacts(ln, s["widest"], s["narrowest"], s["instructions"], sorted(s["kinds"]))
                   for ln, s in sorted(loads.items())]
    # Instructions per line from the PTX (.loc); spill traffic per line from the SASS, which exists
    # only when ptxas spilled.
    counts = ptx_facts.ptx_line_stats(arts["ptx"], path) if "ptx" in arts else {}
    spills = {}
    if "sass" in arts:
        phantoms = ir_line_map.inline_asm_phantoms(arts["ptx"], path) if "ptx" in arts else None
        spills = {ln: s["spill_bytes"] for ln, s in ptx_facts.sass_line_stats(arts["sass"], path, phantoms).items()}
    f.lines = [LineFacts(ln, counts.get(ln, 0), spills.get(ln, 0))
               for ln in sorted(set(counts) | {ln for ln, b in spills.items() if b})]
    return f


# -- TL106's evidence ------------------------------------------------------------------------------


def _whatif_args(cfg: dict, facts: ConfigFacts) -> tuple[dict, list[str]] | None:
    spec = facts.specialization or {}
    sig = facts.signature or {}
    args = dict(cfg.get("args") or {})
    changed = []
    for name, flag in spec.items():
        a = args.get(name)
        if flag != "" or a is None:
            continue
        if a.get("kind") in ("tensor", "pointer") and sig.get(name, "").startswith("*"):
            args[name] = {**a, "data_ptr": 0}
            changed.append(name)
        elif a.get("kind") == "int" and sig.get(name, "").startswith(("i", "u")):
            v = int(a["value"])
            args[name] = {**a, "value": max(16, -(-v // 16) * 16)}
            changed.append(name)
    return (args, changed) if changed else None


def add_vector_whatifs(report: CompileReport, job, python, cancel, timeout, root) -> None:
    requests, where = [], []
    for kspec, kfacts in zip(job.kernels, report.kernels):
        by_label = {c.get("label"): c for c in kspec["configs"]}
        for facts in kfacts.configs:
            narrow = [ld for ld in facts.loads if ld.widest <= 4 and "tma" not in ld.kinds]
            if facts.error is not None or not narrow or facts.source == "static":
                continue  # static: the integers are plain by assumption, not evidence of a missed specialisation
            cfg = by_label.get(facts.label)
            if cfg is None:
                # autotune-expanded labels: match the launch they came from
                cfg = next((c for c in kspec["configs"] if facts.label.startswith(c.get("label", "\0"))), None)
            if cfg is None:
                continue
            w = _whatif_args({**cfg, "args": {**(cfg.get("args") or {}), **_constexpr_args(facts)}}, facts)
            if not w:
                continue
            args, changed = w
            requests.append({"name": kfacts.name, "configs": [
                {"label": facts.label + " (what-if: divisible by 16)", "args": args,
                 "options": {"num_warps": facts.num_warps, "num_stages": facts.num_stages}}]})
            where.append((facts, changed, [ld.line for ld in narrow]))
    if not requests:
        return
    job = dataclasses.replace(job, kernels=requests, artifacts=["ptx"])
    try:
        reply = compile_job(job, python, cancel, timeout)
    except CompileCancelled:
        raise
    except CompileError:
        return  # the evidence is optional; the main facts stand
    for (facts, changed, lines), k in zip(where, reply.kernels):
        cfg = (k.configs or [None])[0]
        if cfg is None or cfg.error is not None or "ptx" not in cfg.artifacts:
            continue
        ptx = cfg.artifacts["ptx"]
        loads = ptx_facts.global_loads(ptx, ir_line_map.source_path_in(ptx, report.path))
        better = [WiderLoad(ld.line, ld.widest, loads[ld.line]["widest"]) for ld in facts.loads
                  if ld.line in lines and ld.line in loads and loads[ld.line]["widest"] > ld.widest]
        if better:
            facts.vector_whatif = VectorWhatIf(changed, better)


def _constexpr_args(facts: ConfigFacts) -> dict:
    return {k: {"kind": "constexpr", "value": v} for k, v in facts.constexprs.items()}


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
