"""Screen a candidate's source before anything runs it.

The original file is as trusted as the user; a candidate (above all an LLM's) is not. Top-level
statements the candidate kept unchanged from the original are taken as the user's own; every new or
changed statement is read for what a kernel rewrite has no business doing: touching the harness or
the timing, global state, the file system, processes, the network, dynamic code — and for torch ops
that would do the kernel's work in the wrapper (a "torch fallback").
"""

from __future__ import annotations

import ast

from tritonlens.analysis.kernel_discovery import aliases_of, discover, is_jit_function
from tritonlens.analysis.python_ast import parse as parse_python

from .config_autotune import autotune_decorator, existing_configs
from .config_inplace import in_place_params
from .edits import dotted as _dotted

ALLOWED_IMPORTS = {"triton", "triton.language", "torch", "math", "typing", "functools", "__future__",
                   "dataclasses", "itertools"}
BANNED_NAMES = {
    "os", "sys", "subprocess", "socket", "shutil", "pathlib", "importlib", "builtins", "ctypes", "signal",
    "threading", "multiprocessing", "time", "timeit", "open", "eval", "exec", "compile", "__import__",
    "globals", "locals", "vars", "getattr", "setattr", "delattr", "breakpoint", "input", "exit", "quit",
    "urllib", "requests", "http", "pickle", "marshal", "inspect", "gc", "atexit", "tempfile", "io",
}
# Attribute chains that belong to measuring, not computing.
TIMING = ("triton.testing", "torch.cuda.synchronize", "torch.cuda.Event", "torch.cuda.graph",
          "torch.cuda.CUDAGraph", "do_bench", "torch.cuda.set_stream", "torch.cuda.Stream", "torch.profiler",
          "torch.backends", "torch.set_", "torch.manual_seed", "torch.random", "torch.cuda.manual_seed",
          "triton.runtime", "triton.knobs", "triton.compiler", "triton.config", "torch.library", "torch.ops",
          "torch.utils", "torch._", "triton._")
MODULE_NAMES = {"torch", "triton", "tl", "math", "F"}
# torch functions / tensor methods that compute: new ones in a wrapper mean a torch fallback.
TORCH_COMPUTE = {
    "matmul", "mm", "bmm", "addmm", "addmv", "mv", "einsum", "softmax", "log_softmax", "layer_norm",
    "rms_norm", "group_norm", "batch_norm", "linear", "conv1d", "conv2d", "conv3d", "sum", "mean", "var",
    "std", "prod", "exp", "log", "sqrt", "rsqrt", "add", "sub", "mul", "div", "cumsum", "cumprod", "amax",
    "amin", "max", "min", "sort", "topk", "relu", "gelu", "silu", "sigmoid", "tanh", "dot", "norm",
    "baddbmm", "scaled_dot_product_attention", "clone", "contiguous", "copy_", "add_", "mul_", "sub_",
    "div_", "t_", "where", "abs", "pow", "square", "logsumexp", "argmax", "argmin", "transpose_", "mean_",
    "index_select", "gather", "scatter", "scatter_add", "scatter_add_", "index_add_", "masked_fill",
    "lerp", "addcmul", "addcdiv", "outer", "kron", "tensordot", "chain_matmul", "cross", "cdist",
    "dropout", "embedding", "normalize", "cross_entropy", "nll_loss", "mse_loss", "flip", "roll",
    "tril", "triu", "repeat", "repeat_interleave", "tile", "cat", "stack", "narrow_copy", "numpy",
}


# Bare min(a, b) / max(a, b) are Python's builtins (a grid capped at a program count), not torch
# ops; a wrapper that feeds them tensors still runs aten ops, which the worker's op recorder sees.
PYTHON_BUILTINS = {"min", "max"}


class StaticRefusal(Exception):
    pass


def _called_names(tree: ast.Module, skip_kernels: bool) -> set[str]:
    """Last component of every call's callee outside @triton.jit bodies (and `@` as "matmul")."""
    names: set[str] = set()
    aliases = aliases_of(tree)

    def visit(node, in_kernel):
        if is_jit_function(node, aliases):
            in_kernel = True
        if not (skip_kernels and in_kernel):
            if isinstance(node, ast.Call):
                callee = node.func
                if isinstance(callee, ast.Attribute):
                    names.add(callee.attr)
                elif isinstance(callee, ast.Name) and callee.id not in PYTHON_BUILTINS:
                    names.add(callee.id)
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                names.add("matmul")
        for child in ast.iter_child_nodes(node):
            visit(child, in_kernel)

    visit(tree, False)
    return names


def _import_problems(node) -> list[str]:
    mods = []
    if isinstance(node, ast.Import):
        mods = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            return ["a relative import"]
        mods = [node.module or ""]
    return [f"imports {m}" for m in mods if m not in ALLOWED_IMPORTS and not m.startswith("triton.language")]


def _class_shell(cls: ast.ClassDef) -> tuple:
    """A class with its methods' bodies left out: bases, decorators, attributes, method signatures."""
    body = tuple((m.name, ast.dump(m.args), tuple(ast.dump(d) for d in m.decorator_list))
                 if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) else ast.dump(m) for m in cls.body)
    return (tuple(ast.dump(b) for b in cls.bases), tuple(ast.dump(k) for k in cls.keywords),
            tuple(ast.dump(d) for d in cls.decorator_list), body)


def _new_problems(node: ast.AST, before: ast.AST | None, where: str) -> list[str]:
    """What the candidate's version of a function brings that the original's did not: the
    original's own code is the user's, only the change is untrusted."""
    known = set(_scan(before, where)) if before is not None else set()
    return [p for p in _scan(node, where) if p not in known]


def _scan(node: ast.AST, where: str) -> list[str]:
    problems: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Import, ast.ImportFrom)):
            problems += [f"{where}: {p}" for p in _import_problems(sub)]
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            problems.append(f"{where}: declares `{type(sub).__name__.lower()} {', '.join(sub.names)}` (global state)")
        elif isinstance(sub, ast.Name) and sub.id in BANNED_NAMES:
            problems.append(f"{where}: uses `{sub.id}`")
        elif isinstance(sub, ast.Attribute):
            if sub.attr.startswith("__") and sub.attr != "__name__":
                problems.append(f"{where}: touches `{sub.attr}`")
            dotted = _dotted(sub)
            if dotted and any(dotted == t or dotted.startswith(t + ".") or (t.endswith("_") and dotted.startswith(t))
                              for t in TIMING):
                problems.append(f"{where}: touches `{dotted}` (timing / runtime internals)")
        elif isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = sub.targets if isinstance(sub, (ast.Assign, ast.Delete)) else [sub.target]
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Attribute):
                        base = _dotted(t.value) or ""
                        if base.split(".")[0] in MODULE_NAMES:
                            problems.append(f"{where}: assigns `{_dotted(t)}` (global state)")
        elif isinstance(sub, ast.Lambda) and where.startswith("module"):
            pass
    return problems


def screen(original: str, candidate: str) -> list[str]:
    """Problems that refuse the candidate before it runs (empty list: it may run in the worker)."""
    try:
        cand_tree = parse_python(candidate)
    except SyntaxError as exc:
        return [f"syntax error: line {exc.lineno}: {exc.msg}"]
    try:
        orig_tree = parse_python(original)
    except SyntaxError:
        orig_tree = ast.Module(body=[], type_ignores=[])
    trusted = {ast.dump(stmt) for stmt in orig_tree.body}
    orig_nodes = {stmt.name: stmt for stmt in orig_tree.body
                  if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    orig_defs = {name: ast.dump(stmt) for name, stmt in orig_nodes.items()}
    problems: list[str] = []
    kernels = len(discover(cand_tree))
    for stmt in cand_tree.body:
        if ast.dump(stmt) in trusted:
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            problems += _import_problems(stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if stmt.name == "tritonlens_cases" or stmt.name.startswith("test_"):
                problems.append(f"changes the harness ({stmt.name})")
                continue
            problems += _new_problems(stmt, orig_nodes.get(stmt.name), f"{stmt.name}()")
        elif isinstance(stmt, ast.ClassDef):
            # the original's own class (an autograd.Function whose forward launches the kernel) may have
            # its methods edited; a class of the candidate's own is not part of a kernel rewrite
            before = orig_nodes.get(stmt.name)
            if not isinstance(before, ast.ClassDef) or _class_shell(before) != _class_shell(stmt):
                problems.append(f"defines class {stmt.name} (not part of a kernel rewrite)")
                continue
            methods = {m.name: m for m in before.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
            for m in stmt.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    problems += _new_problems(m, methods.get(m.name), f"{stmt.name}.{m.name}()")
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if not all(isinstance(t, ast.Name) for t in targets):
                problems.append(f"line {stmt.lineno}: module-level assignment to {ast.unparse(targets[0])} (global state)")
            elif any(isinstance(t, ast.Name) and t.id in orig_defs for t in targets):
                problems.append(f"line {stmt.lineno}: rebinds {targets[0].id} at module level")
            else:
                problems += _scan(stmt, f"module line {stmt.lineno}")
                if any(isinstance(n, ast.Call) for n in ast.walk(stmt.value)) and not _harmless_call(stmt.value):
                    problems.append(f"line {stmt.lineno}: runs code at import time")
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # a docstring
        else:
            problems.append(f"line {stmt.lineno}: new module-level `{type(stmt).__name__}` statement")
    if kernels == 0:
        problems.append("defines no @triton.jit kernel")
    if "tritonlens_cases" in orig_defs:
        cand_defs = {stmt.name: ast.dump(stmt) for stmt in cand_tree.body
                     if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if cand_defs.get("tritonlens_cases") not in (None, orig_defs["tritonlens_cases"]):
            problems.append("changes the harness (tritonlens_cases)")
    problems += race_problems(original, candidate)
    problems += autotune_problems(original, candidate)
    new_compute = (_called_names(cand_tree, True) - _called_names(orig_tree, True)) & TORCH_COMPUTE
    for name in sorted(new_compute):
        problems.append(f"torch fallback: calls {name}() outside the kernels where the original did not")
    seen, unique = set(), []
    for p in problems:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique


def _pid_dependent(fn: ast.FunctionDef, params: set[str] | frozenset = frozenset()) -> set[str]:
    """Names in a kernel whose value depends (transitively) on tl.program_id, or on `params` (a
    helper's parameters that its callers pass a program-dependent value)."""
    deps: dict[str, set[str]] = {}
    seeds: set[str] = set(params)
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if value is None:
                continue
            used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
            direct = any(isinstance(n, ast.Call) and (_dotted(n.func) or "").endswith("program_id")
                         for n in ast.walk(value))
            for t in targets:
                for name in (x.id for x in ast.walk(t) if isinstance(x, ast.Name)):
                    deps.setdefault(name, set()).update(used)
                    if direct:
                        seeds.add(name)
        elif isinstance(node, ast.For):
            used = {n.id for n in ast.walk(node.iter) if isinstance(n, ast.Name)}
            for name in (x.id for x in ast.walk(node.target) if isinstance(x, ast.Name)):
                deps.setdefault(name, set()).update(used)
    dependent = set(seeds)
    changed = True
    while changed:
        changed = False
        for name, used in deps.items():
            if name not in dependent and used & dependent:
                dependent.add(name)
                changed = True
    return dependent


def shared_stores(fn: ast.FunctionDef, params: set[str] | frozenset = frozenset()) -> list[str]:
    """Plain tl.store calls whose address and mask do not depend on the program id: every
    program writes the same place, so with more than one program the result is a race."""
    dependent = _pid_dependent(fn, params)
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and (_dotted(node.func) or "").split(".")[-1] == "store" and node.args:
            parts = [node.args[0]] + [k.value for k in node.keywords if k.arg == "mask"] + node.args[2:3]
            names = {n.id for p in parts for n in ast.walk(p) if isinstance(n, ast.Name)}
            direct = any(isinstance(n, ast.Call) and (_dotted(n.func) or "").endswith("program_id")
                         for p in parts for n in ast.walk(p))
            if not direct and not names & dependent:
                out.append(ast.unparse(node.args[0]))
    return out


def _helper_params(fns: list[ast.FunctionDef]) -> dict[str, set[str]]:
    """Per @triton.jit helper, the parameters some caller passes a program-dependent value: a
    helper that receives the program id as an argument (a coarsened kernel's moved body) indexes
    by it as much as a kernel that calls tl.program_id itself."""
    by_name = {fn.name: fn for fn in fns}
    found: dict[str, set[str]] = {}
    changed = True
    while changed:  # helpers calling helpers: until no parameter is added
        changed = False
        for fn in fns:
            dependent = _pid_dependent(fn, found.get(fn.name, set()))
            for call in ast.walk(fn):
                callee = by_name.get(call.func.id) if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else None
                if callee is None:
                    continue
                names = [a.arg for a in callee.args.args]
                for name, arg in zip(names, call.args):
                    used = {n.id for n in ast.walk(arg) if isinstance(n, ast.Name)}
                    direct = any(isinstance(n, ast.Call) and (_dotted(n.func) or "").endswith("program_id")
                                 for n in ast.walk(arg))
                    if (direct or used & dependent) and name not in found.setdefault(callee.name, set()):
                        found[callee.name].add(name)
                        changed = True
    return found


def race_problems(original: str, candidate: str) -> list[str]:
    try:
        orig_fns = [k.node for k in discover(parse_python(original))]
        cand = [k.node for k in discover(parse_python(candidate))]
    except SyntaxError:
        return []
    orig = {fn.name: fn for fn in orig_fns}
    orig_params, cand_params = _helper_params(orig_fns), _helper_params(cand)
    problems = []
    for fn in cand:
        before = set(shared_stores(orig[fn.name], orig_params.get(fn.name, set()))) if fn.name in orig else set()
        for target in shared_stores(fn, cand_params.get(fn.name, set())):
            if target not in before:
                problems.append(f"race: in {fn.name} every program stores to `{target}` (the address does "
                                "not depend on the program id) without an atomic")
    return problems


def autotune_problems(original: str, candidate: str) -> list[str]:
    """An autotune over several configs of a kernel that updates buffers in place, without restoring
    them: the autotuner runs every config on the caller's tensors before the real launch, so the
    update is applied once per config. A check that forces one config never sees it."""
    try:
        orig_tree, cand_tree = parse_python(original), parse_python(candidate)
    except SyntaxError:
        return []
    before = {fn.name: _unrestored(orig_tree, fn) for fn in (k.node for k in discover(orig_tree))}
    problems = []
    for fn in (k.node for k in discover(cand_tree)):
        missing = [p for p in _unrestored(cand_tree, fn) if p not in before.get(fn.name, [])]
        if missing:
            problems.append(f"autotune of {fn.name} runs every config on {', '.join(missing)}, which it updates "
                            f"in place: restore_value={missing!r} keeps the caller's data")
    return problems


def _unrestored(tree: ast.Module, fn: ast.FunctionDef) -> list[str]:
    dec = autotune_decorator(fn)
    if dec is None or len(existing_configs(fn) or [None, None]) < 2:
        return []
    kw = {k.arg: k.value for k in dec.keywords}
    if "pre_hook" in kw:
        return []  # the author's own hook may restore them
    kept = set()
    for name in ("restore_value", "reset_to_zero"):
        if isinstance(kw.get(name), (ast.List, ast.Tuple)):
            kept |= {e.value for e in kw[name].elts if isinstance(e, ast.Constant)}
    return [p for p in in_place_params(tree, fn) if p not in kept]


def _harmless_call(value: ast.AST) -> bool:
    """Module-level constants built with triton.Config / tl.constexpr / triton.next_power_of_2."""
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            name = (_dotted(n.func) or "").split(".")[-1]
            if name not in ("Config", "constexpr", "next_power_of_2", "cdiv", "dict", "tuple", "list", "int",
                            "float"):
                return False
    return True
