"""Harness discovery and execution for a user file. Standalone (stdlib + torch + triton).

Order of preference:
1. an explicit harness "other_file.py::func" (job field "harness"),
2. the file's module-level `tritonlens_cases()`,
3. zero-config: the file's own `test_*` functions that take no required arguments,
4. zero-config: the file's `if __name__ == "__main__":` block (the file run as a script).
A case is (fn, args) or (fn, args, kwargs); the first case is the performance shape.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import inspect
import os
import runpy
import sys
import time
import traceback


class HarnessError(Exception):
    """The user's file or harness could not be loaded or has no way to run its kernels."""


def load_module(path: str, name: str | None = None):
    path = os.path.realpath(path)
    if not os.path.isfile(path):
        raise HarnessError(f"no such file: {path}")
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # sibling imports work as with `python file.py`
    if name is None:
        stem = os.path.splitext(os.path.basename(path))[0]
        name = f"tritonlens_user_{stem}_{hashlib.sha1(path.encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise HarnessError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def has_main_block(path: str) -> bool:
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    for node in tree.body:
        if isinstance(node, ast.If):
            text = ast.unparse(node.test).replace("'", '"')
            if text in ('__name__ == "__main__"', '"__main__" == __name__'):
                return True
    return False


def _normalise_case(case, where: str):
    if not isinstance(case, (tuple, list)) or len(case) not in (2, 3):
        raise HarnessError(f"{where}: a case is (fn, args) or (fn, args, kwargs), got {type(case).__name__}")
    fn, args = case[0], case[1]
    kwargs = case[2] if len(case) == 3 else {}
    if not callable(fn):
        raise HarnessError(f"{where}: first element of a case must be callable")
    if not isinstance(args, (tuple, list)):
        args = (args,)
    return fn, tuple(args), dict(kwargs or {})


def entry_points(path: str, harness: str | None = None, module=None):
    """[(label, callable)] to run under capture; the first is the performance case."""
    if harness:
        hfile, sep, func = harness.rpartition("::")
        if not sep or not hfile or not func:
            raise HarnessError(f"--harness must be FILE.py::FUNCTION, got {harness!r}")
        if os.path.realpath(hfile) == os.path.realpath(path) and module is not None:
            hmod = module
        else:
            if module is None:
                module = load_module(path)
            hmod = load_module(hfile)
        factory = getattr(hmod, func, None)
        if factory is None:
            raise HarnessError(f"{hfile} has no function {func!r}")
        return _cases(factory, f"{os.path.basename(hfile)}::{func}"), "harness"
    if module is None:
        module = load_module(path)
    factory = getattr(module, "tritonlens_cases", None)
    if callable(factory):
        return _cases(factory, "tritonlens_cases"), "tritonlens_cases"
    tests = []
    for name, obj in vars(module).items():
        if not name.startswith("test_") or not inspect.isfunction(obj) or obj.__module__ != module.__name__:
            continue
        required = [p for p in inspect.signature(obj).parameters.values()
                    if p.default is inspect.Parameter.empty
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if required:
            continue  # pytest fixtures: cannot be supplied here
        tests.append((name, obj))
    if tests:
        return tests, "tests"
    if has_main_block(path):
        return [("__main__", lambda: runpy.run_path(path, run_name="__main__"))], "main"
    raise HarnessError(
        "nothing to run: define tritonlens_cases(), test_* functions without arguments, "
        "an `if __name__ == \"__main__\":` block, or pass --harness FILE.py::FUNC")


def _cases(factory, where: str):
    try:
        produced = factory()
    except Exception as exc:
        raise HarnessError(f"{where}() raised {type(exc).__name__}: {exc}") from exc
    entries = []
    for index, case in enumerate(produced):
        fn, args, kwargs = _normalise_case(case, f"{where} case {index}")
        entries.append((f"case {index}: {getattr(fn, '__name__', 'fn')}",
                        (lambda fn=fn, args=args, kwargs=kwargs: fn(*args, **kwargs))))
    if not entries:
        raise HarnessError(f"{where}() produced no cases")
    return entries


def run_entries(entries, capture=None, stop_after: int | None = None, synchronize=None) -> list[dict]:
    """Run each entry (under `capture` if given); one failure does not stop the others."""
    results = []
    for index, (label, call) in enumerate(entries):
        if stop_after is not None and index >= stop_after:
            break
        if capture is not None:
            capture.case = index
        t0 = time.perf_counter()
        try:
            call()
            if synchronize:
                synchronize()
            results.append({"index": index, "label": label, "ok": True,
                            "seconds": round(time.perf_counter() - t0, 4)})
        except Exception as exc:
            # CUDA errors poison the context: let the worker classify and restart
            text = str(exc)
            if "CUDA error" in text or type(exc).__name__ in ("AcceleratorError",):
                raise
            results.append({"index": index, "label": label, "ok": False,
                            "error": f"{type(exc).__name__}: {exc}",
                            "traceback": traceback.format_exc(limit=20),
                            "seconds": round(time.perf_counter() - t0, 4)})
    return results
