"""The abstract interpreter of one function body in one configuration: statements and control flow.

Expressions are evaluated by the mixins of expressions.py (Python syntax), tl_calls.py and
tl_layout.py (what each `tl.*` call returns). A branch whose condition is a known constant
(`if HAS_BIAS:` with HAS_BIAS=False) is not run, and the run records it as skipped: the code in it
does not execute in that configuration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model import Config, Module
from ..source import Source, dotted_name
from .abstract import NONE_ABS, UNKNOWN_ABS, Abs, join_env
from .dtypes import literal_dtype
from .expressions import DISPATCH, Expressions
from .jit_calls import JitCalls
from .tl_calls import TlCalls
from .tl_layout import TlLayout

MAX_LOOP_PASSES = 6
_ELSE = object()


@dataclass
class Problem:
    """A shape conflict the compiler would refuse, found in one configuration."""

    kind: str  # "broadcast", "mask", "other", "store_value", "dot_inner", "dot_rank", "dot_batch", "dot_acc"
    node: Any  # the expression to underline
    message: str  # what conflicts, without the configuration
    shapes: tuple = ()
    operands: tuple = ()  # nodes of the operands involved
    call: Any = None  # for a conflict inside a @jit helper: the kernel's call that passes these values


@dataclass
class RunResult:
    """One interpretation of a kernel: in one configuration, or symbolic (config None)."""

    config: Config | None
    label: str
    targets: dict = field(default_factory=dict)  # (start_byte, name) of an assignment target → Abs
    exprs: dict = field(default_factory=dict)  # (start_byte, end_byte) of an expression → Abs
    problems: dict = field(default_factory=dict)  # (start_byte, kind) → Problem
    skipped: set = field(default_factory=set)  # (start_byte, end_byte) of branches not taken

    def at(self, node) -> Abs | None:
        return self.exprs.get((node.start_byte, node.end_byte))

    def executes(self, node) -> bool:
        """False when `node` lies in a branch this configuration does not take."""
        b = node.start_byte
        return not any(s <= b < e for s, e in self.skipped)

    def relabel(self, config: Config | None, label: str) -> RunResult:
        """The same findings under another configuration with the same constexpr values."""
        return RunResult(config, label, self.targets, self.exprs, self.problems, self.skipped)


def assigned(value: Abs) -> Abs:
    """A value once a plain assignment binds it: Triton's code generator turns a constexpr number
    or bool into a 0-d tensor there (tuple items included), so `HALF = BLOCK // 2` is a runtime
    value, no longer a valid `tl.arange` bound; its number stays known. Only
    `HALF: tl.constexpr = BLOCK // 2` keeps a constexpr."""
    if value.kind == "tuple":
        items = tuple(assigned(i) for i in value.items)
        return value if items == value.items else Abs(kind="tuple", items=items)
    if value.weak and value.kind == "tensor":
        return Abs(value.shape, value.dtype or literal_dtype(value.value), value=value.value)
    return value


class Interpreter(Expressions, JitCalls, TlCalls, TlLayout):
    """Interprets one function body in one configuration."""

    def __init__(self, module: Module, src: Source, consts: dict, run: RunResult | None,
                 arg_dtypes: dict | None = None, jit_functions: dict | None = None, depth: int = 0,
                 memo: dict | None = None):
        self.module = module
        self.src = src
        self.al = module.aliases
        names = module.__dict__.get("_tritonlens_tl_names")
        if names is None:
            names = module.__dict__["_tritonlens_tl_names"] = {}
        self._tl_memo = names
        self.consts = consts  # constexpr name → value (or Sym)
        self.run = run  # where to record; None inside helpers
        self.arg_dtypes = arg_dtypes or {}
        self.jit = jit_functions if jit_functions is not None else {}
        self.depth = depth
        self.memo = memo if memo is not None else {}
        self.returns: list[Abs] = []
        self.found: list | None = None  # in a @jit helper: the conflicts it finds, for its caller
        # The tree does not change between configurations, loop passes or rules: what each call,
        # operator and assignment node is made of is read from it once.
        self._call_parts = src.memo_for("shapes.call")
        self._binop_parts = src.memo_for("shapes.binop")
        self._assign_parts = src.memo_for("shapes.assign")

    def tl_name(self, dotted: str | None) -> str | None:
        """Aliases.tl_function, memoised per module (it is asked for every name and call)."""
        try:
            return self._tl_memo[dotted]
        except KeyError:
            r = self.al.tl_function(dotted)
            if r is None and dotted and "." in dotted:
                # `from triton.language import core`: core.constexpr, core.where, core.int8
                head, _, rest = dotted.partition(".")
                if self.al.tl_names.get(head) == "core":
                    r = rest
            elif r is not None and r.startswith("core."):
                r = r[5:]
            self._tl_memo[dotted] = r
            return r

    # -- recording ----------------------------------------------------------------------------

    def _rec(self, node, a: Abs) -> Abs:
        if self.run is not None:
            self.run.exprs[(node.start_byte, node.end_byte)] = a
        return a

    def problem(self, kind: str, node, message: str, shapes=(), operands=()) -> None:
        if self.run is not None:
            self.run.problems[(node.start_byte, kind)] = Problem(kind, node, message, tuple(shapes), tuple(operands))
        elif self.found is not None:  # inside a @jit helper: the caller records it at its call
            self.found.append(Problem(kind, node, message, tuple(shapes), tuple(operands)))

    def helper_problem(self, prob: Problem, call) -> None:
        """A conflict found in a @jit helper the kernel's `call` reaches, with the caller's values.
        Keyed by the call, so that a loop around the call drops it with its own passes."""
        if self.run is not None:
            self.run.problems[(call.start_byte, prob.kind, prob.node.start_byte)] = Problem(
                prob.kind, prob.node, prob.message, prob.shapes, prob.operands, call)
        elif self.found is not None:
            self.found.append(prob)

    def skip(self, node) -> None:
        if self.run is not None and node is not None:
            self.run.skipped.add((node.start_byte, node.end_byte))

    def expr(self, n, env: dict) -> Abs:
        if n is None:
            return UNKNOWN_ABS
        fn = DISPATCH.get(n.type)
        a = fn(self, n, env) if fn is not None else UNKNOWN_ABS
        run = self.run
        if run is not None:
            run.exprs[(n.start_byte, n.end_byte)] = a
        return a

    # -- statements ---------------------------------------------------------------------------

    def body(self, block, env: dict) -> dict:
        for stmt in block.named_children:
            env = self.stmt(stmt, env)
        return env

    def stmt(self, s, env: dict) -> dict:
        t = s.type
        if t == "expression_statement":
            for e in s.named_children:
                if e.type == "assignment":
                    self.assign(e, env)
                elif e.type == "augmented_assignment":
                    self.aug_assign(e, env)
                else:
                    self.expr(e, env)
            return env
        if t == "if_statement":
            return self.if_stmt(s, env)
        if t == "for_statement":
            return self.for_stmt(s, env)
        if t == "while_statement":
            cond = s.child_by_field_name("condition")
            return self.loop(s, s.child_by_field_name("body"), env, cond=cond)
        if t == "return_statement":
            vals = s.named_children
            self.returns.append(self.expr(vals[0], env) if vals else NONE_ABS)
            return env
        if t == "block":
            return self.body(s, env)
        if t == "with_statement":
            b = s.child_by_field_name("body")
            return self.body(b, env) if b is not None else env
        return env

    def bind(self, target, value: Abs, env: dict) -> None:
        t = target.type
        if t == "identifier":
            name = self.src.text_of(target)
            env[name] = value
            if self.run is not None:
                self.run.targets[(target.start_byte, name)] = value
                self._rec(target, value)
        elif t in ("pattern_list", "tuple_pattern", "list_pattern"):
            items = list(target.named_children)
            vals = value.items if value.kind == "tuple" and len(value.items) == len(items) else [UNKNOWN_ABS] * len(items)
            for item, v in zip(items, vals):
                self.bind(item, v, env)

    def assign(self, e, env: dict) -> None:
        parts = self._assign_parts.get(e)
        if parts is None:
            ann = e.child_by_field_name("type")
            parts = self._assign_parts[e] = (e.child_by_field_name("left"), e.child_by_field_name("right"),
                                             ann is not None and "constexpr" in self.src.text_of(ann))
        left, right, constexpr_ann = parts
        if right is None:
            return
        if right.type == "assignment":  # a = b = value
            self.assign(right, env)
            inner = right.child_by_field_name("left")
            value = env.get(self.src.text_of(inner), UNKNOWN_ABS) if inner is not None and inner.type == "identifier" else UNKNOWN_ABS
        else:
            value = self.expr(right, env)
        if constexpr_ann and value.kind in ("tensor", "unknown"):
            # `x: tl.constexpr = ...` is a compile-time value whatever the engine knows of it.
            value = Abs((), value.dtype, value=value.value, weak=True)
        elif not constexpr_ann:
            value = assigned(value)
        if left is not None:
            self.bind(left, value, env)

    def aug_assign(self, e, env: dict) -> None:
        left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
        op = self.src.text_of(e.child_by_field_name("operator")).rstrip("=")
        if left is None or right is None:
            return
        cur = self.expr(left, env)
        rhs = self.expr(right, env)
        value = assigned(self.binop(op, cur, rhs, e, left, right))
        if left.type == "identifier":
            self.bind(left, value, env)

    def if_stmt(self, s, env: dict) -> dict:
        """Arms whose condition is a known constant decide; from the first unknown condition on,
        the remaining arms are joined."""
        # (condition, block); an else arm has the condition ELSE
        arms = [(s.child_by_field_name("condition"), s.child_by_field_name("consequence"))]
        for alt in s.children_by_field_name("alternative"):
            if alt.type == "elif_clause":
                arms.append((alt.child_by_field_name("condition"), alt.child_by_field_name("consequence")))
            elif alt.type == "else_clause":
                arms.append((_ELSE, alt.child_by_field_name("body")))
        if arms[-1][0] is not _ELSE:
            arms.append((_ELSE, None))  # no else: falling through is one of the paths
        for i, (cond, block) in enumerate(arms):
            if cond is _ELSE:  # reached with every earlier condition false
                return self.body(block, env) if block is not None else env
            c = self.expr(cond, env) if cond is not None else UNKNOWN_ABS
            if not c.constant:
                for later, _ in arms[i + 1:]:
                    if later is not _ELSE:
                        self.expr(later, env)
                return self._branches([b for _, b in arms[i:]], env)
            if c.value:
                for _, other in arms[i + 1:]:
                    self.skip(other)
                return self.body(block, env) if block is not None else env
            self.skip(block)
        return env

    def _branches(self, blocks, env: dict) -> dict:
        result = None
        for b in blocks:
            out = self.body(b, dict(env)) if b is not None else dict(env)
            result = out if result is None else join_env(result, out)
        return result if result is not None else env

    def for_stmt(self, s, env: dict) -> dict:
        right = s.child_by_field_name("right")
        left = s.child_by_field_name("left")
        var = UNKNOWN_ABS
        if right is not None:
            if right.type == "call":
                fname = dotted_name(right.child_by_field_name("function"), self.src)
                tl = self.tl_name(fname)
                argn = right.child_by_field_name("arguments")
                for a in (argn.named_children if argn else []):
                    self.expr(a.child_by_field_name("value") if a.type == "keyword_argument" else a, env)
                if fname == "range" or tl in ("range", "static_range"):
                    vals = [self.expr(a, env) for a in (argn.named_children if argn else []) if a.type != "keyword_argument"]
                    # tl.static_range unrolls: its variable is a constexpr in each copy of the body.
                    var = Abs((), "int64" if any(v.dtype == "int64" for v in vals) else "int32", weak=tl == "static_range")
            else:
                self.expr(right, env)
        if left is not None and left.type == "identifier":
            name = self.src.text_of(left)
            env = dict(env)
            env[name] = var
            if self.run is not None:
                self.run.targets[(left.start_byte, name)] = var
                self._rec(left, var)
        return self.loop(s, s.child_by_field_name("body"), env)

    def loop(self, s, body, env: dict, cond=None) -> dict:
        """Loop-carried values: iterate the body until what flows around the back edge is stable."""
        if body is None:
            return env
        cur = env
        for _ in range(MAX_LOOP_PASSES):
            if self.run is not None:
                # Only the converged pass speaks: drop what earlier passes found in this loop.
                for key in [k for k in self.run.problems if s.start_byte <= k[0] < s.end_byte]:
                    del self.run.problems[key]
            if cond is not None:
                self.expr(cond, cur)
            out = self.body(body, dict(cur))
            new = join_env(cur, out)  # a name first bound in the body keeps the body's value
            if new == cur:
                return new
            cur = new
        return {k: (v if k in env and env[k] == v else UNKNOWN_ABS) for k, v in cur.items()}
