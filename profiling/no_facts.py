"""Why a kernel has no compile facts, in one line a kernel author reads: the `reason` of a
compile report's kernel that no configuration of compiled, which the JSON, the hover and the
coverage bench show as it is.

`reason_line` is the one place a raw message (a compiler error, a worker's failure, a note)
becomes such a line: the traceback and the exception's repr dropped, cut at a word boundary to
REASON_WIDTH. Whoever forms a reason puts its text through it (a Triton refusal is worded for its
author in the worker first: worker/compile_refusals.py).
"""

from __future__ import annotations

import re

from tritonlens.analysis.message_text import clip_words
from tritonlens.profiling.worker.compile_refusals import beyond_values
from tritonlens.profiling.worker.compile_report import CompileReport, KernelCompile

REASON_WIDTH = 120
_REPR = re.compile(r"^(\w+)\((['\"])(.*)\2\)$")  # NameError('x is not defined')
# A newer Triton ends a ptxas failure with the command that reproduces it: the cause is above it.
_FRAME = ("Traceback", "File ", "^", "~", "Repro command:")
_BINDER = re.compile(r"^Triton's binder refused this configuration: (?:\w+Error: )?")
_WORDY = {"AssertionError", "Exception"}  # types whose name says nothing the message does not


def reason_line(message: str, width: int = REASON_WIDTH) -> str:
    """`message` as one line: its last line that is not a traceback frame or quoted code, an
    exception repr unwrapped, within `width` characters cut between words."""
    lines = [ln.strip() for ln in str(message).splitlines() if ln.strip()]
    useful = [ln for ln in lines if not ln.startswith(_FRAME)]
    line = " ".join((useful or lines or [""])[-1].split())
    m = _REPR.match(line)
    if m:
        line = m.group(3) if m.group(1) in _WORDY or "Error" not in m.group(1) else f"{m.group(1)}: {m.group(3)}"
    line = _BINDER.sub("Triton refused the configuration: ", line)
    return clip_words(line, width)


def reason_for(k: KernelCompile) -> str | None:
    """Why `k` has no facts (None when a configuration compiled): the reason already given (the
    budget's), else the first configuration's compile error, the kernel's own error, its note."""
    if any(c.compiled for c in k.configs):
        return None
    if k.reason:
        return reason_line(k.reason)
    failed = [c for c in k.configs if c.error is not None]
    if failed:
        c = failed[0]
        message = c.error.message
        if k.note and _missing_name(message) and _missing_name(message) in k.note:
            return reason_line(k.note)  # the failed import that should have bound it, and what to set
        if k.note and "is None here" in k.note:
            return reason_line(k.note)  # the import the file replaced by None
        where = f" at line {c.error.line}" if c.error.line else ""
        guessed = " with assumed values" if c.source == "assumed" and not beyond_values(message) else ""
        head = f"Triton refused it{where}{guessed}: "
        return clip_words(head + reason_line(message, REASON_WIDTH), REASON_WIDTH)
    if k.error is not None:
        return reason_line(k.error.message)
    if k.note:
        return reason_line(k.note)
    if k.configs:
        return "its configurations compiled without registers or shared memory"
    return "no configuration to compile: no captured launch, launch site, autotune config or pin gives its values"


def fill_reasons(report: CompileReport) -> None:
    """Give every kernel of `report` without facts its reason."""
    for k in report.kernels:
        k.reason = reason_for(k)
        if report.error is not None and not k.configs and k.error is None and not k.note:
            k.reason = reason_line(f"the file does not compile: {report.error.message}")


def _missing_name(message: str) -> str | None:
    m = re.search(r"(\w+)'? is not defined", message)
    return m.group(1) if m else None
