"""The compile engine as the language server loads it (server/engines.py names this module).

Everything lives in compile_job; this module only fixes the import path the server uses.
"""

from tritonlens.profiling.compile_job import (
    CompileCancelled,
    CompileError,
    compile_file,
    findings_from,
    show_ir,
    shutdown,
    warm_up,
)

__all__ = ["CompileCancelled", "CompileError", "compile_file", "findings_from", "show_ir", "shutdown", "warm_up"]
