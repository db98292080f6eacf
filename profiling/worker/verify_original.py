"""The original's own check: it must run before any candidate is verified against it. Standalone
(stdlib; the verify session's modules), beside job_verify.py."""

from __future__ import annotations

import os
import traceback

import cuda_on_cpu
from verify_tracking import GUARDS


class OriginalFails(Exception):
    """The original itself fails on the harness's first check: no candidate can be verified against
    it. Its text is one line for a person, shown as it is."""

    worker_error_type = "harness"


def original_runs(session) -> None:
    """Run the original on the first check (its reference, kept for the candidates' checks), or
    raise OriginalFails saying why in one line: what Triton's interpreter cannot run, else the
    innermost error's own words and the user's line it came from."""
    plan = session.plan()
    if not plan:
        return
    seed, case = plan[0]
    try:
        session.reference(seed, case, 0)
    except Exception as exc:
        GUARDS.clear()
        session.tracker.local.depth = 0
        limit = cuda_on_cpu.shims().interpreter_limit_of(exc)
        raise OriginalFails(f"it fails on case {case}, seed {seed}: "
                            + (limit.line() if limit else _in_words(exc))) from exc


def _in_words(exc: BaseException) -> str:
    """`'float' object has no attribute 'to' (rms.py:12)`: the innermost cause's message (the
    interpreter wraps a kernel's error in one of its own) and the last line of user code it passed."""
    root = exc
    while root.__cause__ is not None or (root.__context__ is not None and not root.__suppress_context__):
        root = root.__cause__ or root.__context__
    words = " ".join(str(root).split()) or type(root).__name__
    worker = os.path.dirname(os.path.abspath(__file__))
    frames = [f for f in traceback.extract_tb(exc.__traceback__) + traceback.extract_tb(root.__traceback__)
              if "site-packages" not in f.filename and os.path.dirname(os.path.abspath(f.filename)) != worker]
    where = f" ({os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
    return (words[:300] + where).strip()
