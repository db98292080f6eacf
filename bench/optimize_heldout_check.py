"""What bench/optimize_heldout.py checks a best rewrite with, independently of the product's own
verifier: the rewrite's text loaded as a module beside the original, put in the original's place
in a harness case (the product's own substitution, profiling/worker/harness.py: counterpart), and
its outputs on the full input compared with the original's (the original run twice first: a kernel
whose outputs differ from run to run is not judged).
"""

from __future__ import annotations

import os
import sys
import tempfile

import realworld_style_support as rw
import tritonbench_harness as tb


def load_best(source: str, kernel: str, name: str):
    """The best rewrite's text as a module beside the original (so its sibling imports work), in
    the original's package when it has one (liger's ops import `liger_kernel.ops.utils`)."""
    folder = os.path.dirname(kernel)
    fd, path = tempfile.mkstemp(suffix=".py", prefix=f"tl_best_{name}_", dir=tempfile.gettempdir())
    with os.fdopen(fd, "w") as fh:
        fh.write(source)
    if folder not in sys.path:
        sys.path.append(folder)
    package = "liger_kernel.ops" if "liger_kernel" in kernel else None
    mod = tb.load_definitions(path, f"{package}.tl_best_{name}" if package else f"tl_best_{name}")
    if package:
        mod.__package__ = package
    return mod


def counterpart(fn, best_mod, kernel: str):
    try:
        from tritonlens.profiling.worker.harness import (
            counterpart as product_counterpart,
        )
    except ImportError:  # the worker's folder as the worker itself imports it
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                        "profiling", "worker"))
        from harness import counterpart as product_counterpart

    new = product_counterpart(fn, best_mod, [kernel])
    if new is None:
        raise RuntimeError(f"the best rewrite has no counterpart of {getattr(fn, '__name__', fn)}")
    return new


def clone(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(clone(v) for v in value) if not hasattr(value, "_fields") else value
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    return value


def outputs(fn, args, kwargs):
    """What a run produces: its return value and its tensor arguments afterwards (on clones)."""
    a, k = clone(args), clone(kwargs)
    out = fn(*a, **k)
    return tb.tensors(out, numbers=True) + tb.tensors((a, k))


def tolerance(kernel: str, out) -> float:
    """tl.dot or half-precision outputs round at about 1e-3 of the largest value; fp32 at 1e-6."""
    import torch

    half = any(t.dtype in (torch.float16, torch.bfloat16) for t in tb.tensors(out))
    with open(kernel, encoding="utf-8", errors="replace") as fh:
        dot = "tl.dot" in fh.read()
    return 2e-2 if dot or half else 5e-3


def compare(case, best_fn, kernel: str) -> dict:
    fn, args, kwargs = case
    ref = outputs(fn, args, kwargs)
    again = rw.max_error(ref, outputs(fn, args, kwargs))
    res = {"orig_vs_orig": again}
    if best_fn is not None:
        tol = tolerance(kernel, ref)
        res["best_vs_orig"] = err = rw.max_error(ref, outputs(best_fn, args, kwargs))
        res["tolerance"] = tol
        if err <= tol:
            res["wrong_accept"] = False
        elif again > tol:
            res["wrong_accept"] = None
            res["note"] = "the original differs from itself: not judged"
        else:
            res["wrong_accept"] = True
    return res
