"""What MLIR said when Triton's own message does not: "PassManager::run failed" and "error
encountered during parsing" are all Triton raises, while the pass that failed, or the op the
verifier refused, goes to the process's stderr as MLIR diagnostics. The compile's stderr (fd 2) is
read while it runs, passed on unchanged, and its cause added to the message.

Standalone (stdlib only): shipped as a plain file beside job_compile.py.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

_VAGUE = ("PassManager::run failed", "error encountered during parsing")
_PIPELINE = re.compile(r"note: Pipeline failed while executing \[`(\w+)`")
_ERROR = re.compile(r":\d+:\d+: error: (.+)")
_GENERIC = "Failures have been detected while processing an MLIR pass pipeline"


def diagnosed(compile_one):
    """`compile_one` whose result's vague error says the MLIR diagnostic behind it."""

    def run(cfg: dict) -> dict:
        result, said = _reading_stderr(compile_one, cfg)
        error = result.get("error")
        if error and str(error.get("message", "")).strip() in _VAGUE:
            cause = cause_of(said)
            if cause:
                error["message"] = f"{error['message'].strip()}: {cause}"
        return result

    return run


def cause_of(said: str) -> str | None:
    """The diagnostic that says why: the pass a pipeline failed in, else the first specific error."""
    m = _PIPELINE.search(said)
    if m:
        return f"Triton's {m.group(1)} pass failed on this kernel"
    errors = [e.strip() for e in _ERROR.findall(said) if _GENERIC not in e]
    return errors[0] if errors else None


def _reading_stderr(compile_one, cfg: dict) -> tuple[dict, str]:
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            result = compile_one(cfg)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        raw = tmp.read()
    if raw:
        os.write(2, raw)  # what the compile printed still reaches whoever reads the worker's stderr
    return result, raw.decode("utf-8", errors="replace")
