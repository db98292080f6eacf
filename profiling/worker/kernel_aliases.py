"""A kernel whose name the file gave to something else after keeping the kernel under another name.

Standalone (stdlib): shipped as a plain file to the worker's interpreter.
"""

from __future__ import annotations


def kept_under_alias(scope: dict, name: str):
    """The kernel `name` when the file kept it under another name before a wrapper took its own
    (`cos__kernel = cos_` then `def cos_(*args, **kwargs)`, flag_gems' in-place ops), else None."""
    for value in list(scope.values()):
        fn = value
        for _ in range(4):  # autotune / heuristics wrap the JITFunction
            if fn is None or hasattr(fn, "arg_names"):
                break
            fn = getattr(fn, "fn", None)
        inner = getattr(fn, "fn", None)
        if inner is not None and getattr(inner, "__name__", None) == name and \
                getattr(inner, "__globals__", None) is scope:
            return value
    return None
