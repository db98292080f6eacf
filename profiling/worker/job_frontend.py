"""Worker job "frontend": does Triton's front end accept a kernel, configuration by configuration?

The job is a messages.FrontendJob, the result a frontend_report.FrontendResult. Each kernel
arrives as its standalone module (analysis/standalone.py: the Triton imports, the kernel, its
jit helpers and literal constants, each on its original line), never as the user's file: nothing
the file runs at import runs here. Its statements are executed one by one, the functions wrapped
with `triton.jit`, and each configuration is bound by Triton's own binder (compile_configs.py)
and lowered to TTIR: the first step of `triton.compile`, where every language-level refusal
(unknown names and arguments, shapes, constexpr rules) is raised. The later stages (layouts,
PTX) are not run: they cost seconds and refuse resources, not language.

While lowering, the lines the code generator visits are recorded: a configuration whose
constexpr branch skips a line says nothing about that line.
"""

from __future__ import annotations

import builtins
import hashlib
import linecache
import os
import re
import time

from compile_configs import build_args, specialise
from compile_loading import JobError, _compile_mode
from frontend_report import (
    ACCEPTED,
    NOT_BUILT,
    REFUSED,
    FrontendKernelResult,
    FrontendOutcome,
    FrontendResult,
)
from job_compile import make_target

# The code generator reports a Python exception raised while lowering as repr(exc).
_WRAPPED = re.compile(r"^([A-Z]\w*(?:Error|Exception|Failure))\(")


class _Visits:
    """Records the file lines Triton's code generator visits while lowering one configuration."""

    def __init__(self):
        self.file: str | None = None
        self.lines: set[int] = set()
        self._saved = None

    def __enter__(self):
        from triton.compiler import code_generator

        cls = getattr(code_generator, "CodeGenerator", None)
        original = getattr(cls, "visit", None)
        if original is None:
            return self  # another Triton: no visited lines, so no line counts as compiled
        visits = self

        def visit(gen, node):
            line = getattr(node, "lineno", None)
            if line is not None and visits.file is not None and getattr(gen, "file_name", None) == visits.file:
                visits.lines.add(getattr(gen, "begin_line", 0) + line)
            return original(gen, node)

        self._saved = (cls, original)
        cls.visit = visit
        return self

    def __exit__(self, *exc):
        if self._saved is not None:
            cls, original = self._saved
            cls.visit = original


def _load(kernel, digest: str):
    """(globals, failures) of the standalone module: each statement executed on its own, so one
    import this Triton lacks leaves only its own names undefined."""
    filename = f"{kernel.path or kernel.name}::tritonlens-standalone-{digest}.py"
    lines = kernel.text.split("\n")
    # inspect.getsourcelines (which the JIT reads a function's source with) finds the text here.
    linecache.cache[filename] = (len(kernel.text), None, [ln + "\n" for ln in lines], filename)
    scope = {"__name__": f"_tritonlens_standalone_{digest}", "__file__": filename, "__builtins__": builtins}
    failures = []
    for span in kernel.statements:
        first, last = int(span[0]), int(span[1])
        piece = "\n" * (first - 1) + "\n".join(lines[first - 1:last]) + "\n"
        try:
            exec(compile(piece, filename, "exec"), scope)  # noqa: S102 - imports, literals and defs only
        except Exception as exc:  # noqa: BLE001 - a missing name shows up as a NameError when lowering
            failures.append(f"line {first}: {type(exc).__name__}: {exc}")
    return filename, scope, failures


def _where(exc, functions) -> tuple[int | None, int | None, str, str]:
    """(first and last file line of the refused node, exception type, message) of a refusal."""
    name, message = type(exc).__name__, str(exc).strip()
    if hasattr(exc, "error_message"):
        # A refusal inside Triton's own jit functions (tl.zeros) comes back as the cause of the
        # error at the user's call: the message is the innermost one that has text.
        inner, cause = exc.error_message, exc.__cause__
        while not inner and cause is not None:
            inner, cause = getattr(cause, "error_message", None) or None, cause.__cause__
        m = _WRAPPED.match(inner or "")
        if m and name == "CompilationError":
            name = m.group(1)  # the code generator wraps the real exception in repr()
        message = inner or message.splitlines()[-1]
        node, src = getattr(exc, "node", None), getattr(exc, "src", None)
        rel = getattr(node, "lineno", None)
        if rel is not None:
            for fn in functions:
                if getattr(fn, "src", None) == src:
                    base = fn.def_file_line_number - 1
                    return base + rel, base + (getattr(node, "end_lineno", None) or rel), name, message
    return None, None, name, message


def _lower(fn, backend, target, signature, constexprs, attrs, options) -> None:
    from triton._C.libtriton import ir
    from triton.compiler import ASTSource

    src = ASTSource(fn, signature, constexprs, attrs)
    opts = backend.parse_options(dict(options.__dict__))
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    src.make_ir(target, opts, backend.get_codegen_implementation(opts), backend.get_module_map(), context)


def _kernel(kernel, backend, target, visits: _Visits) -> FrontendKernelResult:
    import triton

    out = FrontendKernelResult(name=kernel.name)
    digest = hashlib.sha1(kernel.text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    filename, scope, failures = _load(kernel, digest)
    functions = []
    for name in kernel.functions:
        obj = scope.get(name)
        if obj is None or not callable(obj):
            out.error = f"{name} is not defined by the standalone module" + (f" ({failures[0]})" if failures else "")
            return out
        scope[name] = obj if isinstance(obj, triton.runtime.jit.JITFunction) else triton.jit(obj)
        functions.append(scope[name])
    fn = functions[0]
    for cfg in kernel.configs:
        label = str(cfg.get("label") or "configuration")
        t0 = time.perf_counter()
        try:
            values = build_args(fn, {"args": cfg.get("args") or {}, "heuristics": {}})
            options, signature, constexprs, attrs = specialise(fn, backend, values, cfg.get("options") or {})
        except Exception as exc:  # noqa: BLE001 - arguments the binder refuses: nothing was lowered
            out.configs.append(FrontendOutcome(label=label, status=NOT_BUILT, type=type(exc).__name__,
                                               message=str(exc)[:500]))
            continue
        visits.file, visits.lines = filename, set()
        try:
            _lower(fn, backend, target, signature, constexprs, attrs, options)
        except Exception as exc:  # noqa: BLE001 - every refusal is an answer
            line, end, etype, message = _where(exc, functions)
            out.configs.append(FrontendOutcome(label=label, status=REFUSED, line=line, end_line=end, type=etype,
                                               message=message[:1000], seconds=round(time.perf_counter() - t0, 3)))
            continue
        finally:
            visits.file = None
        out.configs.append(FrontendOutcome(label=label, status=ACCEPTED, visited=sorted(visits.lines),
                                           seconds=round(time.perf_counter() - t0, 3)))
    return out


def handle(job) -> dict:
    import triton
    from triton.compiler import make_backend

    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # 3.9 warns when unset; 1 is the JIT's default
    target = make_target(job.target)
    backend = make_backend(target)
    result = FrontendResult(triton_version=triton.__version__)
    with _compile_mode(target), _Visits() as visits:
        for kernel in job.kernels:
            cached = set(linecache.cache)
            try:
                result.kernels.append(_kernel(kernel, backend, target, visits))
            except JobError as exc:
                result.kernels.append(FrontendKernelResult(name=kernel.name, error=str(exc)))
            finally:
                # A long-lived worker sees every edit's text: its sources go once they are lowered.
                for name in set(linecache.cache) - cached:
                    if "::tritonlens-standalone-" in name:
                        linecache.cache.pop(name, None)
    return result.to_json()
