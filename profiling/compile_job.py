"""Compile-backed insight without a GPU: the API the server and the CLI use.

    result = compile_file("kernels.py", target="sm_90")     # a CompileReport (to_json / from_json)
    findings = findings_from(result)                         # TL101…TL106
    ir = show_ir("kernels.py", "matmul_kernel", "ptx", source_line=42)

Where configurations come from: the launches the capture job records while the file's harness
(`tritonlens_cases()`, tests or `__main__` block) runs in the interpreter on the CPU — real dtypes,
alignments and scalar values — expanded by the worker over a kernel's autotune configs; or explicit
`configs` from the caller. A kernel no captured launch reached (no harness, or a harness that raised
first) falls back to the static model's configurations (static_configs.py: literal launch sites,
autotune configs, assumed argument types), marked "source": "static" with an "assumed" list.
The cross-compile itself runs in a worker process, never here.

Caching: a whole-file answer is kept under ${XDG_CACHE_HOME:-~/.cache}/tritonlens/compile keyed by the
file's text, the configurations, the target and the Triton version, so an unchanged file costs a
file read; below it the worker keeps one entry per compiled kernel configuration keyed by (kernel
source hash incl. its helpers, signature + specialisation, constexprs, options, target, Triton
version), so editing one kernel recompiles only that kernel.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tritonlens.analysis.python_ast import parse as parse_python
from tritonlens.profiling import ir_line_map
from tritonlens.profiling.compile_budget import compile_within
from tritonlens.profiling.compile_notes import (
    explain_missing_names,
    explain_none_imports,
)
from tritonlens.profiling.compile_worker import (
    STATS,
    CompileCancelled,
    CompileError,
    capture_launches,
    client_for,
    configs_from_launches,
    run,
    shutdown,
    triton_version,
    warm_up,
)
from tritonlens.profiling.compiled_facts import (
    add_vector_whatifs,
    kernel_facts,
    write_text,
)
from tritonlens.profiling.config_pins import pyproject_fingerprint
from tritonlens.profiling.config_sources import mark_sources, static_fallback
from tritonlens.profiling.factory_kernels import factory_configs, factory_kernels
from tritonlens.profiling.factory_kernels import reason as factory_reason
from tritonlens.profiling.launch_records import records_for
from tritonlens.profiling.no_facts import fill_reasons
from tritonlens.profiling.occupancy import limits_for
from tritonlens.profiling.worker.compile_report import (
    CompileReport,
    ConfigFacts,
    KernelCompile,
)
from tritonlens.profiling.worker.messages import (
    CaptureResult,
    CompileJob,
    CompileResult,
)

__all__ = ["STATS", "CompileCancelled", "CompileError", "IrView", "cache_root", "compile_file", "findings_from",
           "ir_text", "ir_view",
           "show_ir", "shutdown", "triton_version", "warm_up"]

RESULT_FORMAT = 5  # the cached answer is a CompileReport's JSON
STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")
# What a compile brings back: SASS only for spilling kernels (per-line spill traffic); Show IR
# disassembles the cubin on demand for the others.
ARTIFACTS = ("ttir", "ttgir", "llir", "ptx", "sass?", "cubin")
LANGUAGES = {"ttir": "mlir", "ttgir": "mlir", "llir": "llvm", "ptx": "ptx", "sass": "sass"}


def cache_root() -> Path:
    env = os.environ.get("TRITONLENS_COMPILE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tritonlens" / "compile"


# ---------------------------------------------------------------------------------------------
# Workers: one long-lived compile worker per interpreter (importing triton costs ~1 s).

# ---------------------------------------------------------------------------------------------
# The API


def compile_file(path, text: str | None = None, kernel: str | None = None, target: str = "sm_90",
                 python: str | None = None, cancel: threading.Event | None = None,
                 configs: dict[str, list[dict]] | None = None, use_cache: bool = True,
                 timeout: float = 600, max_cases: int | None = None, static=None) -> CompileReport:
    """Cross-compile the file's kernels for `target` (worker/compile_report.py describes the answer).

    configs: {kernel name: [CONFIG]} (job_compile's format) instead of capturing launches.
    cancel: a threading.Event; setting it kills the worker and raises CompileCancelled.
    max_cases: capture only the first N harness cases (the first is the performance shape).
    timeout: the seconds the whole compile may take: each kernel is compiled within its share of
    what is left (compile_budget.py), and a kernel past it is named in its `reason`.
    static: `static_configs.static_configs` of the file's model, when the caller has one (the
    server, from the analysis it already ran); else the fallback analyses `text` cold.
    """
    started = time.monotonic()
    path = os.path.abspath(str(path))
    if text is None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CompileError(f"cannot read {path}: {exc}") from exc
    limits_for(target)  # unknown targets fail here, before any work
    version = triton_version(python)
    if version == "none":
        raise CompileError(f"triton is not installed in {python or sys.executable}")
    records = [] if configs is not None else records_for(path, kernel)
    key_src = json.dumps([RESULT_FORMAT, path, text, kernel, target, version, configs, max_cases,
                          python or sys.executable, [r.to_json() for r in records], pyproject_fingerprint(path),
                          _code_fingerprint()],
                         sort_keys=True, default=str)
    file_key = hashlib.sha256(key_src.encode()).hexdigest()[:32]
    root = cache_root()
    cached_path = root / "files" / file_key[:2] / f"{file_key}.json"
    if use_cache:
        try:
            result = CompileReport.from_json(json.loads(cached_path.read_text(encoding="utf-8")), "cached compile report")
            result.cached = True
            STATS["file_cache_hits"] += 1
            return result
        except (OSError, ValueError):  # MessageError is a ValueError: a stale or torn entry recompiles
            pass

    source = "configs"
    capture_errors: list = []
    static_info: dict = {}  # {kernel: static_configs.StaticKernel}
    if configs is None:
        # Recorded launches first (a test run, `tritonlens capture`, a GPU host, a trace): they cost
        # nothing to read. The file's own harness runs only when it has one, and only for the
        # kernels no record reached.
        configs = configs_from_launches(records)
        source = "recorded launches" if configs else "static model"
        if has_harness(text):
            try:
                captured = capture_launches(path, kernel, python, cancel, timeout=min(timeout, 300),
                                            max_cases=max_cases)
            except CompileCancelled:
                raise
            except CompileError as exc:  # the harness run itself broke: the static model still has configs
                captured = CaptureResult(mode="interpreter", errors=[f"capturing launches failed: {exc}"])
            fresh = {n: c for n, c in configs_from_launches(captured.launches).items() if n not in configs}
            configs.update(fresh)
            if fresh:
                source = f"captured launches ({captured.source})"
            capture_errors = list(captured.errors) + [case.error for case in captured.cases if case.error]
        # Kernels no captured launch reached: configurations from literal launch sites and
        # autotune configs, with conservative stand-ins for the arguments nobody captured.
        extra, static_info = static_fallback(text, kernel, set(configs), capture_errors, static, path)
        configs.update(extra)
        built, built_info = factory_configs(text, set(configs), kernel, capture_errors, path)
        configs.update(built)
        static_info.update(built_info)
        extra.update(built)
        if extra and configs.keys() == extra.keys():
            source = "static model"
    if kernel:
        configs = {k: v for k, v in configs.items() if k == kernel}

    job = CompileJob("compile", path=path, text=text, target=target, artifacts=list(ARTIFACTS),
                     cache_dir=str(root / "configs"),
                     kernels=[{"name": name, "configs": cfgs} for name, cfgs in configs.items()])
    stopped: dict[str, str] = {}
    if job.kernels:
        budgeted = compile_within(job, python, cancel, max(timeout - (time.monotonic() - started), 1.0))
        reply, stopped = budgeted.result, budgeted.stopped
    else:
        reply = CompileResult(target=target)

    result = CompileReport(path=path, target=target, triton_version=reply.triton_version or version,
                           kernels=[kernel_facts(k, path, target, root) for k in reply.kernels],
                           error=reply.error, module_failures=list(reply.module_failures),
                           source=source, capture_errors=[str(e)[:500] for e in capture_errors][:5])
    mark_sources(result, job, static_info, capture_errors, "configs" if source == "configs" else "captured")
    explain_missing_names(result, text, python)
    explain_none_imports(result, text)
    for k in result.kernels:
        k.reason = stopped.get(k.name)
    fill_reasons(result)
    present = {k.name for k in result.kernels}
    result.kernels += [KernelCompile(name=f.name, line=f.line, source="static", reason=factory_reason(f))
                       for f in factory_kernels(text) if not f.helper and f.name not in present
                       and (kernel is None or f.name == kernel)]
    left = timeout - (time.monotonic() - started)
    if left > 5:  # TL106's evidence is optional: never worth going past the budget
        add_vector_whatifs(result, job, python, cancel, left, root)
    if use_cache and not stopped:  # a kernel the budget stopped may finish next time
        _write_json(cached_path, result.to_json())
    return result


@functools.lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """The analysis and profiling code's files as they are installed: an answer cached by another
    version of the static model (its assumptions, its configurations) is not this version's."""
    here = Path(__file__).resolve().parent
    stamps = []
    for folder in (here, here / "worker", here.parent / "analysis"):
        for f in sorted(folder.glob("*.py")):
            st = f.stat()
            stamps.append(f"{f.name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(stamps).encode()).hexdigest()[:16]


def has_harness(text: str) -> bool:
    """Whether the file defines `tritonlens_cases()`, the harness a compile may run to capture
    launches. Test functions and `__main__` blocks are not run here: they may benchmark at full
    size under the interpreter for minutes. `tritonlens capture` runs them once and records the
    launches, which every later compile reads."""
    try:
        tree = parse_python(text)
    except SyntaxError:
        return False
    return any(isinstance(stmt, ast.FunctionDef) and stmt.name == "tritonlens_cases" for stmt in tree.body)


def _write_json(path: Path, obj) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(obj), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


# ---------------------------------------------------------------------------------------------
# Show IR


def ir_text(result: CompileReport, kernel: str, stage: str, config: int = 0, python: str | None = None,
            cancel: threading.Event | None = None) -> tuple[str, ConfigFacts]:
    if stage not in STAGES:
        raise CompileError(f"unknown IR stage {stage!r}; choose from {', '.join(STAGES)}")
    k = result.kernel(kernel)
    if k is None:
        names = ", ".join(k.name for k in result.kernels) or "none"
        raise CompileError(f"no compiled kernel {kernel!r} (compiled: {names})")
    ok = [c for c in k.configs if c.error is None and c.key]
    if not ok:
        errs = [c.error.message for c in k.configs if c.error is not None]
        raise CompileError(f"{kernel} did not compile" + (f": {errs[0]}" if errs else ""))
    facts = ok[min(config, len(ok) - 1)]
    folder = cache_root() / "ir" / facts.key[:2] / facts.key
    p = folder / stage
    if stage == "sass" and not p.exists() and (folder / "cubin").exists():
        reply = run(client_for(python), CompileJob("compile", disassemble=(folder / "cubin").read_text()), cancel, 120)
        write_text(p, reply["sass"])
    try:
        return p.read_text(encoding="utf-8"), facts
    except OSError as exc:
        raise CompileError(f"{stage} of {kernel} is not in the cache ({exc})") from exc


@dataclass(frozen=True)
class IrView:
    """The IR of one compiled configuration: `marked_lines` are the 0-based IR lines that belong to
    the source line asked about, `line_map` the source line (1-based or None) of every IR line."""

    text: str
    marked_lines: list[int]
    language: str
    line_map: list
    config: str | None
    facts: ConfigFacts | None = None  # the specialisation shown: its values and where they came from
    target: str | None = None
    triton_version: str | None = None


def ir_view(result: CompileReport, kernel: str, stage: str, source_line: int | None, config: int = 0,
            python: str | None = None, cancel: threading.Event | None = None) -> IrView:
    """The IR of `kernel`'s `config`-th compiled configuration in `result`, marked for `source_line` (1-based)."""
    ir, facts = ir_text(result, kernel, stage, config, python, cancel)
    ptx = None
    if stage == "sass":
        try:
            ptx = ir_text(result, kernel, "ptx", config)[0]
        except CompileError:
            ptx = None
    lmap = ir_line_map.line_map(stage, ir, result.path, ptx)
    marked = [i for i, ln in enumerate(lmap) if source_line is not None and ln == source_line]
    return IrView(ir, marked, LANGUAGES[stage], lmap, facts.label, facts, result.target, result.triton_version)


def show_ir(path, kernel: str, stage: str, source_line: int | None = None, text: str | None = None,
            target: str = "sm_90", python: str | None = None, config: int = 0,
            cancel: threading.Event | None = None, configs: dict | None = None, line: int | None = None) -> IrView:
    """Compile the file (or take the cached answer) and show one configuration's IR; `line` is
    `source_line` as the server's showIr command names it."""
    if source_line is None:
        source_line = line
    result = compile_file(path, text=text, kernel=kernel, target=target, python=python, cancel=cancel,
                          configs=configs)
    try:
        return ir_view(result, kernel, stage, source_line, config, python, cancel)
    except CompileError:
        if not result.cached:
            raise
        result = compile_file(path, text=text, kernel=kernel, target=target, python=python, cancel=cancel,
                              configs=configs, use_cache=False)  # the IR files were removed under the cached answer
        return ir_view(result, kernel, stage, source_line, config, python, cancel)


def findings_from(result: CompileReport, text: str | None = None):
    from tritonlens.profiling.compile_findings import findings_from as _ff

    return _ff(result, text)

