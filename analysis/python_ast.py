"""Python's own parser, safe to call from several threads at once.

CPython 3.11 keeps the recursion counter of its AST constructor in interpreter-wide state; two
threads building trees at the same time can interleave there and one of them fails with
`SystemError: AST constructor recursion depth mismatch`. The server and the profiling API parse
from worker threads, so every `ast.parse` of ours goes through this one lock. A parse takes
milliseconds; the lock costs nothing measurable against that.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    with _LOCK:
        return ast.parse(source, filename, mode)
