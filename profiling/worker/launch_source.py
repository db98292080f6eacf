"""What a kernel's source says about its launches, read once per kernel: the parameters it stores
or loads through (for a launch record's written tensors and bytes), its source hash and the line of
its `def`. Standalone (standard library), beside capture.py in the worker folder."""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap

_STORE_FUNCS = {"store", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
                "atomic_xchg", "atomic_cas"}


def _python_fn(kernel):
    return getattr(kernel, "fn", None)


def _pointer_names(fn, is_access) -> set[str] | None:
    """Names feeding the pointer argument of the tl calls `is_access(attr)` selects, in the
    source of `fn`, through local aliasing (`ptrs = out_ptr + offs` then tl.store(ptrs, ...)).
    None when the source cannot be read."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    aliases: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            used = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            for target in node.targets:
                if isinstance(target, ast.Name):
                    aliases.setdefault(target.id, set()).update(used)
    names: set[str] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and is_access(node.func.attr) and node.args):
            used = {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name)}
            for _ in range(3):
                used |= {a for u in list(used) for a in aliases.get(u, ())}
            names |= used
    return names


_static_cache: dict = {}


def static_written(kernel) -> set[str]:
    """Parameter names used in the pointer argument of tl.store / tl.atomic_* (source scan)."""
    fn = _python_fn(kernel)
    if fn not in _static_cache:
        used = _pointer_names(fn, lambda attr: attr in _STORE_FUNCS)
        try:
            params = set(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            params = set()
        _static_cache[fn] = (used or set()) & params
    return _static_cache[fn]


_loads_cache: dict = {}


def loaded_names(kernel, name: str) -> set[str]:
    """{"load"} if the kernel source loads through parameter `name` (for read-byte counting)."""
    fn = _python_fn(kernel)
    if fn not in _loads_cache:
        _loads_cache[fn] = _pointer_names(fn, lambda attr: attr == "load" or attr.startswith("atomic_"))
    loaded = _loads_cache[fn]
    return {"load"} if loaded is None or name in loaded else set()


def source_hash(fn) -> str | None:
    """Hash of the kernel's own source text: results stay valid while it is unchanged."""
    try:
        return text_hash(inspect.getsource(fn))
    except (OSError, TypeError):
        return None


def text_hash(source: str) -> str:
    """The hash of a kernel's source as `inspect.getsource` reads it (its first decorator to its last
    line): what the editor and the rewriters compute from a file's text to match a profile's."""
    return hashlib.sha256(textwrap.dedent(source).encode()).hexdigest()[:16]


def def_line(fn) -> int | None:
    """1-based line of the `def` (co_firstlineno points at the first decorator)."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    for offset, line in enumerate(lines):
        if line.lstrip().startswith(("def ", "async def ")):
            return start + offset
    return start
