"""Launch records as cases, for a file with no harness: profile, verify and optimize replay what the
project's own runs launched. Standalone (stdlib + torch + triton), like the rest of this folder.

The client reads the records (tritonlens.profiling.launch_records) and ships them in the job as
messages.LaunchDescriptor. Each record is a **kernel-level case**: the kernel launched on fresh
data with the recorded shapes, dtypes, strides, storage offsets and scalars, on the recorded grid
with the recorded constexprs and launch options (replay.build_args; integer tensors get the
documented safe fill there). Its outputs are the tensors the kernel writes; the verifier compares
every tensor argument after the launch, so a candidate writing into an input is caught too.

The kernel is looked up by name in the module under test (the original, or a candidate), and
launched through whatever the module wraps it in: what that module's @triton.autotune configs or
@triton.heuristics supply is left out of the call and chosen by them, the rest is passed as
recorded. The grid stays the recorded one: a config that changes a block size the grid depends on
is checked on that grid. Code outside the Triton functions (the wrapper) is not exercised.

Cases are ordered by footprint (bytes of the tensor arguments), largest first: the first is the
performance shape, and every record takes part in correctness.
"""

from __future__ import annotations

import ast

import replay
import torch
from capture import LaunchRecord
from triton.runtime import autotuner as _autotuner
from triton.runtime import jit as _jit

try:
    from triton.runtime.interpreter import InterpretedFunction as _Interpreted
except ImportError:  # pragma: no cover - the interpreter always ships
    _Interpreted = None

_JIT_TYPES = tuple(t for t in (_jit.JITFunction, _Interpreted) if t is not None)
_WRAPPER_TYPES = (_autotuner.Autotuner, _autotuner.Heuristics)


def footprint(desc) -> int:
    """Bytes of the launch's tensor arguments (a messages.LaunchDescriptor)."""
    total = 0
    for a in desc.args:
        if a.kind != "tensor" or a.shape is None:
            continue
        numel = 1
        for s in a.shape:
            numel *= int(s)
        dtype = getattr(torch, a.storage_dtype or a.dtype or "", None)
        total += numel * (dtype.itemsize if isinstance(dtype, torch.dtype) else 4)
    return total


def ordered(records: list) -> list:
    """The records, largest footprint first (ties keep their recorded order)."""
    return sorted(records, key=footprint, reverse=True)


def _innermost(obj):
    while isinstance(obj, _WRAPPER_TYPES):
        obj = obj.fn
    return obj


def is_kernel_object(obj) -> bool:
    return isinstance(_innermost(obj), _JIT_TYPES)


def find_kernel(module, name: str):
    """The module-level object (JIT function, or its autotune / heuristics wrapper) of kernel
    `name`: the attribute of that name, else the attribute whose Python function has that name."""
    obj = getattr(module, name, None)
    if obj is not None and is_kernel_object(obj):
        return obj
    for value in vars(module).values():
        if is_kernel_object(value) and getattr(_innermost(value).fn, "__name__", None) == name:
            return value
    return None


def supplied_keys(obj) -> set[str]:
    """Parameters and options the wrappers around a kernel choose themselves."""
    keys: set[str] = set()
    while isinstance(obj, _WRAPPER_TYPES):
        if isinstance(obj, _autotuner.Autotuner):
            for config in obj.configs:
                keys.update(config.all_kwargs())
        else:
            keys.update(obj.values)
        obj = obj.fn
    return keys


_TRITON_DECORATORS = {"jit", "autotune", "heuristics"}


def _is_triton_def(node) -> bool:
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in _TRITON_DECORATORS:
            return True
    return False


def _outside_wrappers(text: str) -> str:
    """The module's top level with the bodies of its plain Python functions left out."""
    tree = ast.parse(text)
    body = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_triton_def(node):
            body.append(f"def {node.name}")
        else:
            body.append(ast.dump(node))
    return "\n".join(body)


def wrappers_only(original: str, candidate: str) -> bool:
    """Does `candidate` differ from `original` only inside plain Python functions (the wrappers,
    which a kernel-level case never calls)? Triton functions, decorators, imports and module-level
    values all count as reachable."""
    try:
        return _outside_wrappers(original) == _outside_wrappers(candidate)
    except SyntaxError:
        return False


class RecordLaunch:
    """Launches one module's kernel `kernel` on a recorded grid with recorded options; called
    with the launch's arguments by name."""

    def __init__(self, desc, module):
        self.desc = desc
        self.module = module
        self.__name__ = desc.kernel

    def bind(self, module) -> RecordLaunch | None:
        """The same launch of `module`'s kernel of that name; None when it defines none."""
        return RecordLaunch(self.desc, module) if find_kernel(module, self.desc.kernel) is not None else None

    def __call__(self, **values):
        obj = find_kernel(self.module, self.desc.kernel)
        if obj is None:
            raise LookupError(f"the module defines no kernel {self.desc.kernel!r}")
        supplied = supplied_keys(obj)
        kwargs = {k: v for k, v in values.items() if k not in supplied}
        kwargs.update({k: v for k, v in self.desc.options.items() if k not in supplied})
        grid = tuple(int(g) for g in self.desc.grid) or (1,)
        obj[grid](**kwargs)


def build_values(desc, device: str, seed: int = 0) -> dict:
    """{parameter: value} for one recorded launch on fresh data (replay.build_args)."""
    record = LaunchRecord(None, desc.to_json(), {})
    return replay.build_args(record, device=device, seed=seed)


def describe(desc) -> str:
    """"rmsnorm_kernel(X=float16[3, 1000], n_cols=1000)": the record's tensors and scalars."""
    parts = [f"{a.name}={a.dtype}{a.shape}" if a.kind == "tensor" else f"{a.name}={a.value}"
             for a in desc.args if a.kind in ("tensor", "scalar")]
    return f"{desc.kernel}({', '.join(parts)})"


def device() -> str:
    import capture

    return "cpu" if capture.interpreter_mode() else "cuda"


def entries(module, records: list) -> list:
    """[(label, call)] for harness.run_entries: each record launched once on fresh data."""
    out = []
    dev = device()
    for index, desc in enumerate(ordered(records)):
        launch = RecordLaunch(desc, module)

        def call(desc=desc, launch=launch, index=index):
            launch(**build_values(desc, dev, seed=index))

        out.append((f"record {index}: {describe(desc)}", call))
    return out


def cases(module, records: list, device_name: str) -> tuple[list, list]:
    """([(fn, args, kwargs)], [why a record was left out]) for the verifier."""
    out, skipped = [], []
    for desc in ordered(records):
        if find_kernel(module, desc.kernel) is None:
            skipped.append(f"{desc.kernel}: not a module-level kernel of the file")
            continue
        try:
            values = build_values(desc, device_name)
        except (ValueError, TypeError, RuntimeError) as exc:
            skipped.append(f"{describe(desc)}: {exc}")
            continue
        out.append((RecordLaunch(desc, module), (), values))
    return out, skipped

