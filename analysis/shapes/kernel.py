"""The shape engine's entry point: every run of one kernel, and the questions asked of them.

A kernel is interpreted once per distinct set of constexpr values (and known runtime sizes) among
its configurations (`kernel.configs`: launch sites × autotune configs; constexprs without a value
stay symbolic, so `tl.arange(0, BLOCK)` is `[BLOCK] int32`), and once fully symbolically when the
editor asks. The rules, estimates, hover and inlay hints all read these runs: shapes and dtypes,
and the value of a constexpr expression in a configuration (`constant_at`), so that one evaluator
decides what `BLOCK // 2` is and whether the code that reads it runs.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from ..kernel_roles import is_device_helper
from ..model import Config, Kernel, Module, is_kernel_definition, top_level_definitions
from ..values import UNKNOWN
from .abstract import NOT_RUN, UNKNOWN_ABS, Abs, Sym, known_scalar
from .dtypes import normalize_dtype
from .interpreter import Interpreter, RunResult

_MAX_DTYPE_VARIANTS = 4  # argument-dtype sets kept per kernel (the profiler's, the editor's none)
_LOCK = threading.Lock()  # runs are made on demand; two threads must not interpret into one table


class KernelShapes:
    """Every run of one kernel: one per configuration (configurations with the same constexpr
    values share theirs) and the symbolic one, made on first use (rules need only the
    configurations; the editor wants the symbolic shapes too)."""

    def __init__(self, module: Module, kernel: Kernel, arg_dtypes: dict, jit: dict, helper: bool = False):
        self.module, self.kernel = module, kernel
        self._arg_dtypes, self._jit = arg_dtypes, jit
        self.helper = helper  # a device helper: its parameters are whatever its callers pass
        self._runs: dict = {}  # constexpr values → RunResult
        self._by_config: dict = {}  # id(config) → (config, its labelled RunResult)
        self.per_config: list[RunResult] = [self.run_for(c) for c in kernel.configs]

    @property
    def symbolic(self) -> RunResult:
        return self.run_for(None)

    def results(self) -> list[RunResult]:
        return self.per_config or [self.symbolic]

    def run_for(self, config: Config | None) -> RunResult:
        """The run of `config` (None: symbolic), labelled with it."""
        held = self._by_config.get(id(config))
        if held is not None and held[0] is config:
            return held[1]
        run = self._run_for(config)
        if len(self._by_config) > 64:  # estimates with given runtime sizes make a Config per call
            self._by_config.clear()
        self._by_config[id(config)] = (config, run)
        return run

    def _run_for(self, config: Config | None) -> RunResult:
        consts = _consts_for(self.kernel, config)
        scalars = _scalars_for(self.kernel, config)
        key = (tuple(sorted((n, repr(v)) for n, v in consts.items())),
               tuple(sorted((n, repr(v)) for n, v in scalars.items())))
        run = self._runs.get(key)
        if run is None:
            with _LOCK:
                run = self._runs.get(key)
                if run is None:
                    run = self._runs[key] = self._interpret(consts, scalars)
        label = config.label if config is not None else "symbolic"
        return run if run.config is config and run.label == label else run.relabel(config, label)

    def _interpret(self, consts: dict, scalars: dict) -> RunResult:
        src = self.kernel.src or self.module.src
        run = RunResult(None, "")
        it = Interpreter(self.module, src, consts, run, arg_dtypes=self._arg_dtypes, jit_functions=self._jit)
        body = self.kernel.node.child_by_field_name("body")
        if body is not None:
            it.body(body, _param_env(self.kernel, consts, scalars, self._arg_dtypes, self.helper))
        return run

    def value_at(self, node, config: Config | None = None) -> Abs | None:
        """The abstract value of expression `node` in `config` (None: symbolic); None when the
        engine did not evaluate it (a branch not taken, a construct it does not model)."""
        return self.run_for(config).at(node)

    def constant_at(self, node, config: Config | None = None) -> Any:
        """The Python value of expression `node` in `config` (None: symbolic): a constexpr's, a
        literal's, a runtime argument's the configuration knows (`scalars`), or arithmetic on
        them. UNKNOWN when it is not one value there, NOT_RUN when `config` does not execute
        the node (a branch not taken): Triton never compiles it in that configuration."""
        run = self.run_for(config)
        a = run.at(node)
        if a is None:
            return UNKNOWN if run.executes(node) else NOT_RUN
        return a.value if known_scalar(a) else UNKNOWN

    def shape_of(self, node, config: Config | None = None) -> tuple | None:
        """The block shape of `node` in `config` (None: symbolic), dimensions as ints, Syms or
        None; () for a scalar; None when unknown or not a block-valued expression."""
        a = self.value_at(node, config) if node is not None else None
        if a is None or a.kind not in ("tensor", "block_ptr", "descriptor"):
            return None
        return a.shape

    def tile_shape(self, node, config: Config | None) -> tuple | None:
        """The concrete block shape of `node` in `config`: a tuple of positive ints, () for a
        scalar; None when a dimension is unknown or symbolic. Pointer blocks, block pointers and
        tensor descriptors give the shape of the block they address."""
        shape = self.shape_of(node, config)
        if shape is None or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            return None
        return shape


def jit_functions(module: Module) -> dict:
    """name → (function_definition node, Source) for every @triton.jit function of the file."""
    cached = getattr(module, "_tritonlens_jit_functions", None)
    if cached is not None:
        return cached
    out = {}
    src = module.src
    for _outer, fn, decorators in top_level_definitions(src):
        name_node = fn.child_by_field_name("name")
        if name_node is not None and decorators and is_kernel_definition(decorators, src, module.aliases):
            out[src.text_of(name_node)] = (fn, src)  # a name defined twice: its last definition
    try:
        module._tritonlens_jit_functions = out
    except AttributeError:
        pass
    return out


def device_helper(module: Module, kernel: Kernel) -> bool:
    """Whether `kernel` is a @jit device helper, whose parameters are whatever its callers pass
    (`kernel_roles`' judgement: not launched in the file, and it returns a value, is a combine
    function or another @jit function calls it)."""
    return is_device_helper(module, kernel)


def _param_env(kernel: Kernel, consts: dict, scalars: dict, arg_dtypes: dict, helper: bool) -> dict:
    env = {}
    for p in kernel.params:
        if p.is_constexpr or p.name in consts:
            continue
        if helper:
            # A helper's argument may be a block, a constexpr or a dtype: nothing is known of it.
            env[p.name] = UNKNOWN_ABS
            continue
        dt = normalize_dtype(arg_dtypes.get(p.name)) if arg_dtypes.get(p.name) else None
        # A kernel argument is a scalar or a pointer: a 0-d value either way. A runtime value the
        # configuration knows is carried, but not weak: it decides no branch and gives no shape.
        v = scalars.get(p.name, UNKNOWN)
        env[p.name] = Abs((), dt, value=v)
    return env


def _scalars_for(kernel: Kernel, config: Config | None) -> dict:
    """The runtime (non-constexpr) arguments whose numbers `config` knows: sizes a launch writes
    as literals, or that the estimates are given."""
    if config is None or not config.scalars:
        return {}
    out = {}
    for p in kernel.params:
        s = config.scalars.get(p.name)
        if not p.is_constexpr and s is not None and isinstance(s.value, (bool, int, float)):
            out[p.name] = s.value
    return out


def _consts_for(kernel: Kernel, config: Config | None) -> dict:
    consts = {}
    for p in kernel.params:
        if p.is_constexpr:
            v = config.get(p.name) if config is not None else UNKNOWN
            consts[p.name] = v if v is not UNKNOWN else Sym(p.name)
    return consts


def _helpers_key(jit: dict) -> str:
    h = hashlib.blake2b(digest_size=12)
    for name, (fn, src) in sorted(jit.items()):
        h.update(name.encode())
        h.update(src.data[fn.start_byte:fn.end_byte])
    return h.hexdigest()


def infer_kernel(module: Module, kernel: Kernel, arg_dtypes: dict | None = None) -> KernelShapes:
    """Shapes and dtypes in `kernel`, symbolically and per configuration; cached on the kernel
    (the engine caches kernels by text), keyed by the file's jit helpers and the argument dtypes
    (`{"x_ptr": "*fp16", "n": "i32"}`, as the profiler knows them)."""
    arg_dtypes = dict(arg_dtypes or {})
    jit = jit_functions(module)
    hkey = module.__dict__.get("_tritonlens_helpers_key")
    if hkey is None:
        hkey = module.__dict__["_tritonlens_helpers_key"] = _helpers_key(jit) if len(jit) > 1 else ""
    helper = device_helper(module, kernel)
    dkey = (tuple(sorted(arg_dtypes.items())), helper)
    cache = kernel.__dict__.get("_tritonlens_inference")
    if cache is None or cache[0] != hkey:
        cache = kernel.__dict__["_tritonlens_inference"] = (hkey, {})
    variants = cache[1]
    result = variants.get(dkey)
    if result is None:
        if len(variants) >= _MAX_DTYPE_VARIANTS:
            variants.clear()
        result = variants[dkey] = KernelShapes(module, kernel, arg_dtypes, jit, helper)
    else:
        # The engine reuses a kernel whose text did not change in a new module: runs made from
        # now on read the new one, and the earlier module (and its tree) is not kept alive.
        result.module = module
    return result


def assignment_targets(kernel: Kernel) -> list:
    """(statement node, target identifier node, name) for every assignment in the kernel body, in order."""
    out = []
    for name, defs in kernel.assignments.items():
        for a in defs:
            stmt = a.node
            if stmt is None:
                continue
            if stmt.type == "for_statement":
                left = stmt.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    out.append((stmt, left, name))
                continue
            left = stmt.child_by_field_name("left")
            if left is None:
                continue
            if left.type == "identifier":
                out.append((stmt, left, name))
            else:
                for item in left.named_children:
                    if item.type == "identifier" and kernel.src is not None and kernel.src.text_of(item) == name:
                        out.append((stmt, item, name))
    out.sort(key=lambda t: t[1].start_byte)
    seen, uniq = set(), []
    for t in out:
        if t[1].start_byte not in seen:
            seen.add(t[1].start_byte)
            uniq.append(t)
    return uniq
