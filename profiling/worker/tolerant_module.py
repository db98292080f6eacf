"""The user's file as a module the compile job can take kernels from, whatever its top level does.

Importing a real project's kernel file fails for reasons that have nothing to do with its
kernels: a test that runs on "cuda" at import, a driver query on a machine with no GPU, a
package `__init__` that needs CUDA, a relative import that only works inside its package. A
failed import used to cost every compile fact of the file. Here the file's top-level statements
are executed one at a time, each failure noted and skipped:

- the module gets its package (`__package__` from the chain of `__init__.py` folders, the folder
  above the top package on sys.path), so `from .utils import helper` and `import pkg.ops` resolve
  the way the project's own imports do (a src layout included);
- a module-level `if` whose condition is false here (`if has_triton():`, `if
  torch.cuda.is_available():`) but whose branch defines kernels is run anyway, as a GPU host would;
  one whose condition cannot be evaluated (it names what did not import) runs every branch, a name
  keeping the first binding that worked;
- torch's `has_triton()` answers True, as on the GPU host the kernels are compiled for;
- bare calls at the top level (`print(...)`, `benchmark.run(...)`, `test_add()`), a test's result
  kept (`result_gold = test_add()`) and the `if __name__ == "__main__":` block are never run: they are what a script does, not what defines
  its kernels;
- a kernel whose definition failed (a decorator from a package that did not import) is defined
  again from its own `def`, with each decorator applied on its own from the innermost and the ones
  that raise left out, so `@triton.autotune(configs=...)` survives a failed `@libentry()`; the
  `def` of a kernel inside a module-level `if`/`else` or `try` is found there too.

Standalone (stdlib + triton): shipped as a plain file to the worker's interpreter.
"""

from __future__ import annotations

import ast
import hashlib
import linecache
import os
import re
import sys
import types
from dataclasses import dataclass, field

try:
    from host_answers import triton_is_here, undecidable
    from kernel_aliases import kept_under_alias
except ImportError:  # imported as part of the tritonlens package
    from .host_answers import triton_is_here, undecidable
    from .kernel_aliases import kept_under_alias


@dataclass
class LoadedModule:
    """`module` holds whatever the file's top level managed to define; `failures` say what did not
    run ("line 12: ModuleNotFoundError: No module named 'fla'"), `skipped` the top-level calls and
    `__main__` block left out on purpose."""

    module: types.ModuleType
    text: str
    tree: ast.Module
    failures: list[str] = field(default_factory=list)
    skipped: int = 0
    left_out: dict[str, list[str]] = field(default_factory=dict)  # kernel → decorators it is compiled without


def package_of(path: str) -> tuple[str, str | None]:
    """(the folder to put on sys.path, the dotted package of `path` or None outside a package)."""
    folder = os.path.dirname(os.path.abspath(path))
    parts = []
    top = folder
    while os.path.isfile(os.path.join(top, "__init__.py")):
        parts.append(os.path.basename(top))
        parent = os.path.dirname(top)
        if parent == top:
            break
        top = parent
    if not parts:
        return folder, None
    return top, ".".join(reversed(parts))


def _is_main_block(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.If):
        return False
    test = ast.unparse(stmt.test).replace("'", '"')
    return test in ('__name__ == "__main__"', '"__main__" == __name__')


# A test or benchmark the file runs at import, its result kept (TritonBench's `result_gold = test_x()`): it
# launches the kernels on "cuda" with full-size tensors, what a script does, not what defines its kernels.
_TEST_CALL = re.compile(r"^_*(test|bench)", re.IGNORECASE)


def _skipped(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Call):
        callee = stmt.value.func
        name = callee.id if isinstance(callee, ast.Name) else callee.attr if isinstance(callee, ast.Attribute) else ""
        if _TEST_CALL.match(name):
            return True
    return _is_main_block(stmt) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Call, ast.Await)))


def _exec(node: ast.AST, path: str, scope: dict) -> None:
    code = compile(ast.Module(body=[node], type_ignores=[]), path, "exec")
    exec(code, scope)  # noqa: S102 - the user's module, in the worker only


def load_tolerant(path: str, text: str | None, depth: int = 0) -> LoadedModule:
    """Execute `path` (or the unsaved `text` in its place) statement by statement, as described
    above. Raises SyntaxError only: a file that does not parse has no kernels to take."""
    path = os.path.abspath(path)
    if text is None:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    tree = ast.parse(text, path)
    if depth == 0:
        triton_is_here(text)
    digest = hashlib.sha1((path + "\0" + text).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    root, package = package_of(path)
    # inspect.getsource, which the JIT reads a kernel's source with, finds the buffer here.
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)
    module = types.ModuleType(f"_tritonlens_compile_{digest}")
    module.__file__ = path
    if package:
        module.__package__ = package
    sys.modules[module.__name__] = module
    loaded = LoadedModule(module, text, tree)
    added = [p for p in dict.fromkeys([os.path.dirname(path), root]) if p not in sys.path]
    sys.path[:0] = added
    try:
        _run(tree.body, path, loaded, package, root, depth)
        # Jit functions whose statement failed (a decorator from a package that did not import):
        # defined again from their own `def`, so the kernels calling them still compile.
        for name in _jit_names(tree):
            if name not in module.__dict__:
                obj, left_out = define_again(loaded, name, path)
                if obj is not None and left_out:
                    loaded.left_out[name] = left_out
    finally:
        for p in added:
            if p in sys.path:
                sys.path.remove(p)
    return loaded


def _run(stmts: list[ast.stmt], path: str, loaded: LoadedModule, package: str | None, root: str,
         depth: int) -> None:
    scope = loaded.module.__dict__
    for stmt in stmts:
        if _skipped(stmt):
            loaded.skipped += 1
            continue
        try:
            _exec(stmt, path, scope)
        except Exception as exc:  # noqa: BLE001 - one statement's failure costs only its own names
            if not (isinstance(stmt, ast.ImportFrom) and _from_project_files(stmt, package, root, scope, depth,
                                                                            os.path.dirname(path))):
                loaded.failures.append(f"line {stmt.lineno}: {type(exc).__name__}: {str(exc)[:200]}")
            if isinstance(stmt, ast.If) and undecidable(stmt.test, path, scope):
                # The condition names what did not import here (`if Version(triton.__version__) >= ...`
                # with Version from a missing package, `if DEVICE_TYPE == "xpu"`): every branch runs, a
                # name keeping the first binding that worked (version checks put the current Triton
                # first; a branch for another vendor's library fails here and leaves its names to the next).
                before = dict(scope)
                _run(stmt.body, path, loaded, package, root, depth)
                first = {n: v for n, v in scope.items() if n not in before or before[n] is not v}
                _run(stmt.orelse, path, loaded, package, root, depth)
                scope.update(first)
                continue
        if isinstance(stmt, ast.If) and any(n not in scope for n in _jit_names(ast.Module(stmt.body, []))):
            # Kernels behind a condition this machine answers "no" (`if has_triton():`,
            # `if torch.cuda.is_available():`): their branch is what a GPU host runs, so it is
            # what they are compiled from.
            _run(stmt.body, path, loaded, package, root, depth)


_PROJECT_MODULES: dict[str, LoadedModule] = {}
MAX_IMPORT_DEPTH = 3
MAX_PARENTS = 12  # folders above a file searched for the package an absolute import names


def _from_project_files(stmt: ast.ImportFrom, package: str | None, root: str, scope: dict, depth: int,
                        folder: str) -> bool:
    """`from .helpers import twice` (or `from pkg.ops.helpers import twice`) whose import raised
    because a package `__init__` on the way needs what this machine lacks: the module's own file,
    loaded the same tolerant way without its packages' `__init__`s; the names it holds are bound
    (one name a GPU-only statement failed to define costs only that name). True when every name bound.
    A folder without `__init__.py` (a namespace package) is still a package here: a relative
    import is found from the importing file's `folder`, an absolute one from the folder above
    the enclosing folder of the package's name."""
    if depth >= MAX_IMPORT_DEPTH:
        return False
    if stmt.level and not package:
        root = folder
        for _ in range(stmt.level - 1):
            root = os.path.dirname(root)
        dotted = stmt.module or ""
    elif stmt.level:
        parts = package.split(".")
        if stmt.level > len(parts):
            return False
        base = parts[:len(parts) - stmt.level + 1]
        dotted = ".".join(base + ([stmt.module] if stmt.module else []))
    else:
        dotted = stmt.module or ""
        if not package or dotted.split(".")[0] != package.split(".")[0]:
            root = _enclosing_root(folder, dotted.split(".")[0])
            if root is None:
                return False  # another project's package: its own import is the only honest way
    bound, complete = {}, True
    for alias in stmt.names:
        if alias.name == "*":
            got = _project_file_module(dotted, root, depth)
            if got is None:
                complete = False
                continue
            names = got.module.__dict__.get("__all__") or [n for n in got.module.__dict__ if not n.startswith("_")]
            bound.update({n: got.module.__dict__[n] for n in names if n in got.module.__dict__})
            continue
        value = _project_attr(dotted, alias.name, root, depth)
        if value is None:
            complete = False  # the statement's failure is still reported; the names found are bound
            continue
        bound[alias.asname or alias.name] = value
    scope.update(bound)
    return complete


def _enclosing_root(folder: str, top: str) -> str | None:
    """The folder holding the package folder `top` that encloses `folder`, or None."""
    here = folder
    for _ in range(MAX_PARENTS):
        if os.path.basename(here) == top:
            return os.path.dirname(here)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return None


def _project_file_module(dotted: str, root: str, depth: int) -> LoadedModule | None:
    base = os.path.join(root, *[p for p in dotted.split(".") if p])
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return _project_module(candidate, depth)
    return None


def _project_attr(dotted: str, name: str, root: str, depth: int):
    got = _project_file_module(dotted, root, depth)
    if got is not None and name in got.module.__dict__:
        return got.module.__dict__[name]
    base = os.path.join(root, *[p for p in dotted.split(".") if p])
    sub = os.path.join(base, name)
    for candidate in (sub + ".py", os.path.join(sub, "__init__.py")):  # `from . import submodule`
        if os.path.isfile(candidate):
            got = _project_module(candidate, depth)
            return got.module if got is not None else None
    return None


def _project_module(path: str, depth: int) -> LoadedModule | None:
    path = os.path.abspath(path)
    try:
        stamp = f"{path}:{os.stat(path).st_mtime_ns}"
    except OSError:
        return None
    if stamp not in _PROJECT_MODULES:
        try:
            _PROJECT_MODULES[stamp] = load_tolerant(path, None, depth + 1)
        except (OSError, SyntaxError, UnicodeDecodeError):
            return None
    return _PROJECT_MODULES[stamp]


def _jit_names(tree: ast.Module) -> list[str]:
    names = []
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in stmt.decorator_list):
            names.append(stmt.name)
    return list(dict.fromkeys(names))


def _definitions(tree: ast.Module, name: str) -> list[ast.FunctionDef]:
    """Top-level `def name` statements, those inside module-level if/else/try blocks included."""
    out, todo = [], list(tree.body)
    while todo:
        stmt = todo.pop(0)
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            out.append(stmt)
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)) and not _is_main_block(stmt):
            for part in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(stmt, part, []) or []:
                    todo.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
    return out


def _unwraps_to_jit(obj) -> bool:
    from triton.runtime.jit import JITFunction

    for _ in range(8):
        if isinstance(obj, JITFunction):
            return True
        obj = getattr(obj, "fn", None)
        if obj is None:
            return False
    return False


def define_again(loaded: LoadedModule, name: str, path: str) -> tuple[object | None, list[str]]:
    """Kernel `name` defined from its own `def` (the last one in the file), decorators applied one
    by one from the innermost, those that raise left out. (object or None, what was left out)."""
    import triton

    alias = kept_under_alias(loaded.module.__dict__, name)
    if alias is not None:
        return alias, []
    defs = _definitions(loaded.tree, name)
    if not defs:
        return _from_factory(loaded, name)
    node = next((d for d in reversed(defs) if d.decorator_list), defs[-1])  # not a wrapper reusing its name
    bare = ast.FunctionDef(name=node.name, args=node.args, body=node.body, decorator_list=[],
                           returns=node.returns, type_comment=node.type_comment,
                           type_params=getattr(node, "type_params", []))
    ast.copy_location(bare, node)
    scope = loaded.module.__dict__
    left_out = []
    try:
        _exec(bare, path, scope)
    except Exception as exc:  # noqa: BLE001 - e.g. an annotation naming what did not import
        return None, [f"defining {name}: {type(exc).__name__}: {exc}"]
    plain = obj = scope[name]
    try:
        for i, dec in enumerate(reversed(node.decorator_list)):
            try:
                obj = eval(compile(ast.Expression(dec), path, "eval"), scope)(obj)
            except Exception as exc:  # noqa: BLE001
                left_out.append(f"@{ast.unparse(dec)[:80]}: {type(exc).__name__}: {str(exc)[:120]}")
                if i == 0:
                    obj = triton.jit(plain)  # the innermost decorator of a kernel is its jit
        if not _unwraps_to_jit(obj):
            obj = triton.jit(plain)
    except Exception as exc:  # noqa: BLE001 - not a function Triton can jit (`**kwargs`, another DSL's jit)
        scope[name] = plain
        return None, [*left_out, f"{name} is not a Triton kernel here: {type(exc).__name__}: {str(exc)[:120]}"]
    scope[name] = obj
    return obj, left_out


def _from_factory(loaded: LoadedModule, name: str) -> tuple[object | None, list[str]]:
    """Kernel `name` built by a top-level function of the file (a factory such as `_kernels()`
    that imports Triton lazily and returns its kernels): the factory called, when it needs no
    argument, and the kernel taken from what it returns (a namespace, a dict, a tuple, the kernel
    itself) or from the module globals it set."""
    factory = next((top for top in loaded.tree.body if isinstance(top, ast.FunctionDef) and any(
        isinstance(n, ast.FunctionDef) and n is not top and n.name == name for n in ast.walk(top))), None)
    if factory is None:
        return None, [f"no `def {name}` in the file"]
    a = factory.args
    if len(a.posonlyargs) + len(a.args) > len(a.defaults) or any(d is None for d in a.kw_defaults):
        return None, [f"{name} is built by {factory.name}(), which needs arguments only its callers give"]
    build = loaded.module.__dict__.get(factory.name)
    if build is None:
        return None, [f"{factory.name}, which builds {name}, was not defined"]
    try:
        built = build()
    except Exception as exc:  # noqa: BLE001 - the factory's own checks (a GPU, a Triton version)
        return None, [f"calling {factory.name}() to build {name}: {type(exc).__name__}: {str(exc)[:120]}"]
    obj = _named_jit(built, name, 0) or _named_jit(loaded.module.__dict__, name, 0)
    if obj is None:
        return None, [f"{factory.name}() returned no kernel named {name}"]
    return obj, []


def _named_jit(value, name: str, depth: int):
    """A jit kernel whose function is called `name` in `value` or in its members (a namespace's,
    a container's, a launcher's closure), two levels deep."""
    if _unwraps_to_jit(value):
        fn = value
        while not hasattr(fn, "__name__") or hasattr(fn, "fn"):
            fn = getattr(fn, "fn", None)
            if fn is None:
                return None
        return value if fn.__name__ == name else None
    if depth >= 2:
        return None
    if isinstance(value, dict):
        members = list(value.values())
    elif isinstance(value, (list, tuple)):
        members = list(value)
    elif isinstance(value, types.FunctionType):  # a launcher closing over its kernel
        members = [c.cell_contents for c in value.__closure__ or () if c.cell_contents is not value]
    elif isinstance(value, (types.ModuleType, type)) or not hasattr(value, "__dict__"):
        return None
    else:  # a namespace, a dataclass of kernels
        members = list(vars(value).values())
    return next((hit for m in members if (hit := _named_jit(m, name, depth + 1)) is not None), None)
