"""`tritonlens compile FILE`: what the compiler makes of each kernel for a GPU that need not be here."""

from __future__ import annotations

import argparse
import json
import sys

from tritonlens.analysis.report import to_text
from tritonlens.profiling.occupancy import TARGET_LIMITS, occupancy_text
from tritonlens.profiling.worker.compile_report import CompileReport

# The CLI's JSON contract: exactly these keys, in this order (README, "Where configurations come from").
CONFIG_KEYS = ("constexprs", "num_warps", "num_stages", "registers", "spill_bytes", "shared_bytes", "occupancy",
               "limiter", "mma", "pipelined", "vectorized", "error", "source", "value_sources", "assumed")
# `reason`: why the kernel has no facts (null when a configuration compiled), one line (no_facts.py).
KERNEL_KEYS = ("name", "line", "configs", "lines", "pin_messages", "error", "note", "reason")
# A file's keys: `error` when nothing of it could be read (a syntax error), `module_failures` the
# top-level statements that raised in the worker and were skipped, `capture_errors` why a harness
# stopped early: a file with no compiled kernel always says why.
REPORT_KEYS = ("target", "triton_version", "source", "error", "module_failures", "capture_errors", "kernels")
SHOWN_SOURCES = ("pinned", "assumed")  # the text marks these values; the others are read, not chosen
# The whole compile's seconds: each kernel gets its share, so a file with one slow kernel still ends
# in time (a kernel past its share is named in its reason); an editor's save allows the engine's own.
DEFAULT_BUDGET_S = 60.0


def register(subparsers) -> None:
    p = subparsers.add_parser("compile", help="cross-compile a file's kernels and report registers, spills, "
                                              "shared memory, occupancy, MMA lowering (no GPU needed)")
    p.add_argument("file")
    p.add_argument("--kernel", help="only this kernel")
    p.add_argument("--target", default="sm_90", choices=sorted(TARGET_LIMITS), help="GPU to compile for")
    p.add_argument("--emit", choices=("ttir", "ttgir", "llir", "ptx", "sass"),
                   help="print this IR of each kernel's first configuration instead of the report")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--python", help="interpreter with torch + triton to run the worker (default: this one)")
    p.add_argument("--no-cache", action="store_true", help="recompile even if the answer is cached")
    p.add_argument("--budget", type=_seconds, default=DEFAULT_BUDGET_S, metavar="SECONDS",
                   help=f"seconds the compile may take in all, shared by the kernels (default {DEFAULT_BUDGET_S:g})")
    p.set_defaults(func=run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def to_json(result: CompileReport) -> dict:
    kernels = []
    for k in result.kernels:
        configs = []
        for c in k.configs:
            entry = {key: getattr(c, key) for key in CONFIG_KEYS}
            entry["error"] = _error(c.error)
            entry["value_sources"] = dict(c.value_sources)
            entry["assumed"] = list(c.assumed)
            configs.append(entry)
        kernels.append({"name": k.name, "line": k.line, "configs": configs,
                        "lines": [ln.to_json() for ln in k.lines], "pin_messages": list(k.pin_messages),
                        "error": _error(k.error), "note": k.note, "reason": k.reason})
    return {"target": result.target, "triton_version": result.triton_version, "source": result.source,
            "error": _error(result.error), "module_failures": list(result.module_failures),
            "capture_errors": list(result.capture_errors), "kernels": kernels}


def _error(e) -> dict | None:
    if e is None:
        return None
    return {"message": e.message, "line": e.line, "column": None if e.column is None else e.column + 1}


def _text(result: CompileReport, findings) -> str:
    out = [f"{result.path}: {result.target}, triton {result.triton_version}" + (" (cached)" if result.cached else "")]
    if result.error is not None:
        out.append(f"  error: {result.error.message} (line {result.error.line})")
    if not result.kernels and result.error is None:
        out.append("  no @triton.jit kernel to compile (device helpers compile inside the kernels calling them)")
    for failure in result.module_failures[:3]:
        out.append(f"  skipped at import: {failure}")
    for k in result.kernels:
        out.append(f"  {k.name} (line {k.line})")
        if k.error is not None:
            out.append(f"    error: {k.error.message}")
        if k.note:
            out.append(f"    note: {k.note}")
        if k.reason and k.reason != k.note:
            out.append(f"    no facts: {k.reason}")
        for m in k.pin_messages:
            out.append(f"    pin: {m}")
        for c in k.configs:
            values = [*c.constexprs.items(), ("num_warps", c.num_warps), ("num_stages", c.num_stages)]
            cx = ", ".join(f"{n}={v}" + (f" ({c.value_sources[n]})" if c.value_sources.get(n) in SHOWN_SOURCES
                                         else "") for n, v in values)
            said = (c.label or "").startswith(f"{c.source}:")  # static configurations' labels name it
            out.append(f"    [{c.label}] " + ("" if said else f"source {c.source}: ") + cx)
            for a in c.assumed:
                out.append(f"      {a}" if a.startswith("assumed ") else f"      assumed: {a}")
            if c.error is not None:
                e = c.error
                out.append(f"      compile error at {e.line}:{(e.column or 0) + 1}: {e.message}")
                continue
            out.append(f"      registers {c.registers}, spills {c.spill_bytes} B, shared {c.shared_bytes:,} B, "
                       f"{occupancy_text(c.occupancy, c.limiter)}")
            out.append(f"      mma {c.mma or '-'}, loads pipelined {c.pipeline or '-'}, vectorised "
                       f"{'-' if c.vectorized is None else 'yes' if c.vectorized else 'no'}")
        hot = sorted((ln for ln in k.lines if ln.line > 0), key=lambda ln: -ln.instructions)[:3]  # 0: no line info
        if hot:
            out.append("    busiest lines: " + ", ".join(f"{ln.line} ({ln.instructions} instr"
                                                          + (f", {ln.spill_bytes} B spills" if ln.spill_bytes
                                                             else "") + ")" for ln in hot))
    if findings:  # the one line format `check` prints
        out.append(to_text([(result.path, findings)]))
    return "\n".join(out)


def run(args) -> int:
    from tritonlens.profiling.compile_job import (
        CompileError,
        compile_file,
        findings_from,
        ir_text,
    )

    try:
        result = compile_file(args.file, kernel=args.kernel, target=args.target, python=args.python,
                              use_cache=not args.no_cache, timeout=args.budget)
    except CompileError as exc:
        print(f"tritonlens compile: {exc}", file=sys.stderr)
        return 1
    if args.emit:
        status = 0
        for k in result.kernels:
            try:
                text, facts = ir_text(result, k.name, args.emit, python=args.python)
            except CompileError as exc:
                print(f"tritonlens compile: {exc}", file=sys.stderr)
                status = 1
                continue
            print(f"// {k.name} [{facts.label}] {args.emit} for {result.target}")
            print(text)
        return status
    findings = findings_from(result)
    if args.format == "json":
        print(json.dumps(to_json(result), indent=2))
    else:
        print(_text(result, findings))
    failed = result.error is not None or any(c.error is not None for k in result.kernels for c in k.configs)
    nothing = not any(c.compiled for k in result.kernels for c in k.configs)
    return 1 if failed or nothing else 0
