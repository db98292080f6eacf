"""Harness discovery and execution for a user file. Standalone (stdlib + torch + triton).

Order of preference:
1. an explicit harness "other_file.py::func" (job field "harness"),
2. the file's module-level `tritonlens_cases()`,
3. the file's launch records, shipped in the job (record_cases.py: one case per recorded launch,
   the largest first),
4. zero-config: the file's own `test_*` functions that take no required arguments,
5. zero-config: the file's `if __name__ == "__main__":` block (the file run as a script).
A case is (fn, args) or (fn, args, kwargs); the first case is the performance shape.

A file inside a package (its folder holds `__init__.py`) is imported as part of that package, as
the project imports it: the project's import folders (the job's `sys_path`, which the client
takes from project_tests.layout: `src`, setuptools' `where`, the root) and the folder above
the package's top go on sys.path, and the module is named from its path
(`src/normpkg/ops/rmsnorm.py` -> `normpkg.ops.rmsnorm`), so its relative imports work. A file
outside any package is imported by file name, its folder on sys.path. Namespace packages (no
`__init__.py`) are imported by file name too.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import inspect
import os
import runpy
import sys
import time
import traceback
import types

NO_CASES = ("nothing to run and no launch records: run `tritonlens capture FILE` (records the launches of "
            "the tests that reach it), define tritonlens_cases(), or pass --harness FILE.py::FUNC")


class HarnessError(Exception):
    """The user's file or harness could not be loaded or has no way to run its kernels. Its text is
    written for a person: the reply carries it as it is, under its own error type."""

    worker_error_type = "harness"


def package_of(path: str, import_folders=()) -> tuple[str, str] | None:
    """(import root, package) of a file inside a package: relative to the first of the project's
    `import_folders` that holds it (namespace folders included), else the folder above the top of
    its `__init__.py` chain. None when neither names a package."""
    folder = os.path.dirname(os.path.realpath(path))
    for root in import_folders or ():
        rel = os.path.relpath(folder, os.path.realpath(root))
        parts = rel.split(os.sep)
        if rel != "." and not rel.startswith("..") and all(p.isidentifier() for p in parts):
            return os.path.realpath(root), ".".join(parts)
    parts = []
    while os.path.isfile(os.path.join(folder, "__init__.py")) and os.path.basename(folder).isidentifier():
        parts.insert(0, os.path.basename(folder))
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return (folder, ".".join(parts)) if parts else None


_WORKER_DIR = os.path.dirname(os.path.abspath(__file__))


def add_sys_path(folders) -> None:
    """Put `folders` on sys.path, in their order, ahead of everything but the worker's own folder
    (a project's `timing.py` must not replace the worker's)."""
    for folder in reversed([os.path.realpath(f) for f in folders or () if os.path.isdir(f)]):
        if folder in sys.path:
            sys.path.remove(folder)
        at = sys.path.index(_WORKER_DIR) + 1 if _WORKER_DIR in sys.path else 0
        sys.path.insert(at, folder)


def _execute(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise HarnessError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        code = _definitions_code(path)
        if code is None:
            spec.loader.exec_module(module)
        else:
            exec(code, module.__dict__)  # noqa: S102 - the user's module, in the worker only
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _definitions_code(path: str):
    """The file's code without the top-level calls of the functions it defines (`test_add()`,
    `benchmark.run(...)`, `print(add(x, y))`): what a script does when run, not what importing it
    should do (tolerant_module's rule for the compile job). Any other call (`torch.manual_seed(0)`,
    `sys.path.insert(...)`, `spec.loader.exec_module(mod)`) still runs: what the file defines may
    depend on it. None: nothing to leave out."""
    try:
        import tolerant_module
    except ImportError:  # imported as part of the tritonlens package
        from . import tolerant_module

    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None  # the import itself reports it
    defined = {stmt.name for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}

    def runs_the_file(stmt) -> bool:
        if not tolerant_module._skipped(stmt) or tolerant_module._is_main_block(stmt):
            return False
        return any(isinstance(n, ast.Name) and n.id in defined for n in ast.walk(stmt))

    body = [stmt for stmt in tree.body if not runs_the_file(stmt)]
    if len(body) == len(tree.body):
        return None
    return compile(ast.Module(body=body, type_ignores=[]), path, "exec")


def load_module(path: str, name: str | None = None, package_path: str | None = None, import_folders=()):
    """Execute the file at `path` as a fresh module. `package_path`: the file whose package the
    module belongs to (default: `path` itself); the module is then named `<package>.<name>`
    (`name` default: the file's stem) and its relative imports resolve in that package. When
    the package cannot be imported (its __init__ needs a GPU or a missing dependency), the file
    is imported by file name instead; if that fails too, the package's error is raised."""
    path = os.path.realpath(path)
    if not os.path.isfile(path):
        raise HarnessError(f"no such file: {path}")
    stem = os.path.splitext(os.path.basename(path))[0]
    package = package_of(package_path or path, import_folders) if stem.isidentifier() or package_path else None
    first_error = None
    if package is not None:
        root, dotted = package
        if root not in sys.path:
            add_sys_path([root])  # the project's copy of the package, before an installed one
        try:
            # the package first, on its own: its __init__ may import this very module, which must
            # not find the half-executed copy in sys.modules
            importlib.import_module(dotted)
            return _execute(path, f"{dotted}.{name or stem}")
        except Exception as exc:  # noqa: BLE001 - the user's package may raise anything
            first_error = exc
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # sibling imports work as with `python file.py`
    try:
        return _execute(path, name or f"tritonlens_user_{stem}_{hashlib.sha1(path.encode()).hexdigest()[:8]}")
    except Exception:
        if first_error is not None:
            raise first_error from None
        raise


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


def cannot_import(path: str, exc: ImportError) -> str:
    """What to do when the user's file cannot be imported here: the project's dependencies are
    not in this interpreter."""
    return (f"cannot import {os.path.basename(path)}: {exc}; run the worker with the project's interpreter "
            "(--python, or the tritonlens.python setting)")


def _load_user_file(path: str, sys_path):
    try:
        return load_module(path, import_folders=sys_path)
    except ImportError as exc:
        raise HarnessError(cannot_import(path, exc)) from exc


def entry_points(path: str, harness: str | None = None, module=None, records=None, sys_path=()):
    """[(label, callable)] to run under capture; the first is the performance case. `records`:
    the file's recorded launches (messages.LaunchDescriptor), used when it has no harness;
    `sys_path`: the project's import folders."""
    add_sys_path(sys_path)
    if harness:
        hfile, sep, func = harness.rpartition("::")
        if not sep or not hfile or not func:
            raise HarnessError(f"--harness must be FILE.py::FUNCTION, got {harness!r}")
        if os.path.realpath(hfile) == os.path.realpath(path) and module is not None:
            hmod = module
        else:
            if module is None:
                module = _load_user_file(path, sys_path)
            hmod = load_module(hfile)
        factory = getattr(hmod, func, None)
        if factory is None:
            raise HarnessError(f"{hfile} has no function {func!r}")
        return _cases(factory, f"{os.path.basename(hfile)}::{func}"), "harness"
    if module is None:
        module = _load_user_file(path, sys_path)
    factory = getattr(module, "tritonlens_cases", None)
    if callable(factory):
        return _cases(factory, "tritonlens_cases"), "tritonlens_cases"
    if records:
        import record_cases

        return record_cases.entries(module, records), "records"
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
    raise HarnessError(NO_CASES)


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


# -- the candidate in the harness's place of the original ----------------------------------------
def _defined_in(obj, files: set[str]) -> bool:
    """`obj` (a function, a jit kernel, an autotuner, a wrapped function) was defined in one of `files`."""
    try:
        for _ in range(4):
            obj = inspect.unwrap(obj) if callable(obj) else obj
            code = getattr(obj, "__code__", None)
            if code is not None:
                return os.path.realpath(code.co_filename) in files
            obj = getattr(obj, "fn", None)  # JITFunction, Autotuner, Heuristics
            if obj is None:
                return False
    except Exception:  # noqa: BLE001 - an object whose attributes raise is none of the file's
        return False
    return False


def _method_of_own_class(obj, files: set[str]) -> tuple[str, str] | None:
    """(class name, method name) when `obj` is a method bound to a class the file defines, as in
    `scale = Scale.apply` for an autograd.Function; the method itself may be torch's."""
    owner = getattr(obj, "__self__", None)
    if not isinstance(obj, types.MethodType) or not isinstance(owner, type):
        return None
    own = any(_defined_in(getattr(m, "__func__", m), files) for m in vars(owner).values()
              if callable(getattr(m, "__func__", m)))
    return (owner.__name__, obj.__name__) if own else None


def _candidate_method(candidate, cls_name: str, method: str):
    target = getattr(getattr(candidate, cls_name, None), method, None)
    return target if callable(target) else None


def _is_copy(module, files: set[str]) -> bool:
    where = getattr(module, "__file__", None)
    return isinstance(module, types.ModuleType) and bool(where) and os.path.realpath(where) in files


def counterpart(fn, candidate: types.ModuleType, originals):
    """`fn`, a harness case's callable, made to run `candidate` in place of the user's file, however
    the harness imported that file (by module name, by its package path, by importlib from its path;
    `originals`: the paths its copies were loaded from). A function of the file is the candidate's
    of that name; a function the harness defines runs with the file's module, and what it took from
    it, replaced by the candidate's in its globals and closure. None: the candidate lacks it."""
    files = {os.path.realpath(p) for p in originals if p}
    method = _method_of_own_class(fn, files)
    if method is not None:
        return _candidate_method(candidate, *method)
    if _defined_in(fn, files):
        target = getattr(candidate, getattr(fn, "__name__", ""), None)
        return target if callable(target) else None
    if not isinstance(fn, types.FunctionType):
        return None
    return _Rebinder(candidate, files).function(fn)


class _Rebinder:
    def __init__(self, candidate, files):
        self.candidate, self.files = candidate, files
        self.globals: dict[int, dict] = {}
        self.functions: dict[int, types.FunctionType] = {}

    def value(self, name: str, v):
        if _is_copy(v, self.files):
            return self.candidate
        method = _method_of_own_class(v, self.files)
        if method is not None:
            return _candidate_method(self.candidate, *method) or v
        if _defined_in(v, self.files):
            return getattr(self.candidate, getattr(v, "__name__", name), None) or getattr(self.candidate, name, v)
        if isinstance(v, types.FunctionType) and not _is_copy(sys.modules.get(v.__module__), self.files):
            harness_file = getattr(sys.modules.get(v.__module__), "__file__", None)
            if harness_file and os.path.realpath(v.__code__.co_filename) == os.path.realpath(harness_file):
                return self.function(v)  # another function of the harness: it may call the file too
        return v

    def function(self, fn: types.FunctionType) -> types.FunctionType:
        if id(fn) in self.functions:
            return self.functions[id(fn)]
        key = id(fn.__globals__)
        if key not in self.globals:
            self.globals[key] = dict(fn.__globals__)  # its values swapped below, once `fn` is registered
        closure = None
        if fn.__closure__:
            closure = tuple(self.cell(name, c) for name, c in zip(fn.__code__.co_freevars, fn.__closure__))
        new = types.FunctionType(fn.__code__, self.globals[key], fn.__name__, fn.__defaults__, closure)
        new.__kwdefaults__, new.__qualname__, new.__module__ = fn.__kwdefaults__, fn.__qualname__, fn.__module__
        new.__dict__.update(fn.__dict__)
        self.functions[id(fn)] = new
        table = self.globals[key]
        for name, v in fn.__globals__.items():
            if not name.startswith("__") and table.get(name) is v:
                table[name] = self.value(name, v)
        return new

    def cell(self, name: str, cell):
        try:
            value = cell.cell_contents
        except ValueError:  # not bound yet: nothing to swap
            return cell
        swapped = self.value(name, value)
        return cell if swapped is value else types.CellType(swapped)
