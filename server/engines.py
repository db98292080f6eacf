"""The profiling, rewrite and compile engines, as the server reaches them.

Each is imported on first use, not when the server starts: they pull in the worker client, ssh and
Ray support, and an installation may lack their optional dependencies. A missing one becomes an
`EngineUnavailable` with a clear message instead of a result nobody measured.
"""

from __future__ import annotations


class EngineUnavailable(Exception):
    pass


def _missing(what: str, exc: ImportError) -> EngineUnavailable:
    name = getattr(exc, "name", None)
    if name:
        return EngineUnavailable(f"{what} is not available in this installation ({name} is missing)")
    return EngineUnavailable(f"{what} cannot start: {exc}")


def profiling(what: str = "Profiling"):
    """tritonlens.profiling.api: profile_file, ProfileError."""
    try:
        from tritonlens.profiling import api
    except ImportError as exc:
        raise _missing(what, exc) from exc
    return api


def rewrite(what: str = "Optimization"):
    """tritonlens.rewrite.api: optimize_file, OptimizeError."""
    try:
        from tritonlens.rewrite import api
    except ImportError as exc:
        raise _missing(what, exc) from exc
    return api


def compiling(what: str = "Compiling"):
    """tritonlens.profiling.compile_job: compile_file, show_ir, warm_up, shutdown, CompileError."""
    try:
        from tritonlens.profiling import compile_job
    except ImportError as exc:
        raise _missing(what, exc) from exc
    return compile_job
