"""Dump the public API of an importable Triton as JSON: names, signatures, first doc paragraphs.

Run as a script in a separate process (never imported by the analysis, which must not import
triton): `python api_introspect.py [--path DIR]` prints one JSON document on stdout. `--path`
puts an extracted wheel first on sys.path, so any Triton version can be introspected with the
Python that matches its binaries. Standalone: stdlib and triton only.
"""

from __future__ import annotations

import inspect
import json
import sys

# Parameters Triton injects into builtins; users never pass them.
HIDDEN_PARAMS = {"_builder", "_semantic", "_generator", "_non_constexpr_attrs", "_kwargs"}
MODULES = [
    ("triton", "triton"),
    ("triton.language", "triton.language"),
    ("triton.language.math", "triton.language.math"),
    ("triton.language.extra.libdevice", "triton.language.extra.libdevice"),
    ("triton.language.extra.cuda.libdevice", "triton.language.extra.cuda.libdevice"),
    ("triton.language.random", "triton.language.random"),
    ("triton.testing", "triton.testing"),
]
DOC_LIMIT = 600


def first_paragraph(doc: str | None) -> str:
    if not doc:
        return ""
    doc = inspect.cleandoc(doc)
    para = []
    for line in doc.splitlines():
        if not line.strip():
            if para:
                break
            continue
        para.append(line.strip())
    text = " ".join(para)
    return text if len(text) <= DOC_LIMIT else text[:DOC_LIMIT - 1].rstrip() + "…"


def _unwrap(obj):
    # JITFunction (tl.sum, tl.softmax…) keeps the Python function in .fn
    seen = 0
    while hasattr(obj, "fn") and callable(getattr(obj, "fn")) and seen < 4 and not inspect.isclass(obj):
        obj = obj.fn
        seen += 1
    return obj


def describe_params(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None, None
    params = []
    parts = []
    for p in sig.parameters.values():
        if p.name in HIDDEN_PARAMS or p.name.startswith("_"):
            continue
        entry = {"name": p.name, "kind": p.kind.name}
        text = p.name
        if p.kind is p.VAR_POSITIONAL:
            text = "*" + p.name
        elif p.kind is p.VAR_KEYWORD:
            text = "**" + p.name
        if p.default is not p.empty:
            try:
                d = repr(p.default)
            except Exception:
                d = "…"
            if len(d) > 60:
                d = d[:57] + "..."
            entry["default"] = d
            text += "=" + d
        params.append(entry)
        parts.append(text)
    # keyword-only marker for readability
    out, star = [], False
    for entry, text in zip(params, parts):
        if entry["kind"] == "KEYWORD_ONLY" and not star:
            out.append("*")
            star = True
        if entry["kind"] == "VAR_POSITIONAL":
            star = True
        out.append(text)
    return params, "(" + ", ".join(out) + ")"


def describe(name: str, obj, module_name: str):
    import triton.language as tl

    entry: dict = {}
    if isinstance(obj, tl.dtype):
        entry["kind"] = "dtype"
        entry["doc"] = f"Triton dtype {obj!r}"
        return entry
    if isinstance(obj, type(sys)):
        entry["kind"] = "module"
        entry["doc"] = first_paragraph(getattr(obj, "__doc__", None))
        return entry
    target = _unwrap(obj)
    if inspect.isclass(obj):
        entry["kind"] = "class"
        init = obj.__init__ if "__init__" in vars(obj) else None
        params, sig = describe_params(init) if init is not None else (None, None)
        if params is not None and params and params[0]["name"] == "self":
            params = params[1:]
            sig = "(" + sig[1:].split(", ", 1)[-1] if ", " in sig else "()"
        if sig is not None:
            entry["signature"] = sig
            entry["params"] = params
        entry["doc"] = first_paragraph(obj.__doc__)
        return entry
    if callable(obj):
        entry["kind"] = "function"
        params, sig = describe_params(target)
        if sig is not None:
            entry["signature"] = sig
            entry["params"] = params
        entry["doc"] = first_paragraph(getattr(target, "__doc__", None) or getattr(obj, "__doc__", None))
        if getattr(target, "__module__", None):
            entry["defined_in"] = target.__module__
        return entry
    if isinstance(obj, (int, float, str, bool)):
        entry["kind"] = "constant"
        entry["doc"] = repr(obj)[:80]
        return entry
    entry["kind"] = type(obj).__name__
    entry["doc"] = first_paragraph(getattr(type(obj), "__doc__", None))
    return entry


def tensor_methods():
    import triton.language as tl

    out = {}
    for name, obj in vars(tl.tensor).items():
        if name.startswith("_") or not callable(obj):
            if isinstance(obj, property) and not name.startswith("_"):
                out[name] = {"kind": "property", "doc": first_paragraph(obj.__doc__)}
            continue
        params, sig = describe_params(_unwrap(obj))
        if params and params[0]["name"] == "self":
            params = params[1:]
        e = {"kind": "method", "doc": first_paragraph(getattr(_unwrap(obj), "__doc__", None))}
        if sig is not None:
            e["signature"] = "(" + ", ".join(s for s in sig[1:-1].split(", ") if s and s != "self") + ")"
            e["params"] = params
        out[name] = e
    return out


def introspect() -> dict:
    import importlib

    import triton

    modules: dict = {}
    errors: dict = {}
    for key, modname in MODULES:
        try:
            mod = importlib.import_module(modname)
        except Exception as exc:  # a module a version does not have, or one that needs torch
            errors[key] = f"{type(exc).__name__}: {exc}"
            continue
        public = getattr(mod, "__all__", None)
        names = list(public) if public else [n for n in vars(mod) if not n.startswith("_")]
        members = {}
        for n in sorted(set(names)):
            if n.startswith("_"):
                continue
            try:
                obj = getattr(mod, n)
            except Exception:
                continue
            if isinstance(obj, type(sys)) and not public and not obj.__name__.startswith(modname.split(".")[0]):
                continue  # stdlib modules imported by the module
            if not public and getattr(obj, "__module__", modname) not in (None,) and inspect.isfunction(obj) \
                    and not (getattr(obj, "__module__", "") or "").startswith("triton"):
                continue
            try:
                members[n] = describe(n, obj, modname)
            except Exception as exc:
                members[n] = {"kind": "unknown", "doc": f"(not introspectable: {type(exc).__name__})"}
        modules[key] = members
    try:
        modules["triton.language.tensor"] = tensor_methods()
    except Exception as exc:
        errors["triton.language.tensor"] = f"{type(exc).__name__}: {exc}"
    return {"triton_version": triton.__version__, "python": sys.version.split()[0], "modules": modules, "errors": errors}


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "--path":
        sys.path.insert(0, argv[1])
    json.dump(introspect(), sys.stdout, sort_keys=True, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
