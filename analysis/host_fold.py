"""A small pure subset of Python folded over a file's text, for the code that builds autotune
configs (autotune_builders.py): nothing is imported or run, and a step budget bounds the work.

Literals, module constants, tuples, lists, dicts, arithmetic, comparisons, `range`,
`itertools.product`, `len` / `min` / `max` / `int`, comprehensions, `triton.Config(...)`, and the
file's own top-level functions called with such values: assignments, `for` loops, `if`, `append` /
`extend` / `+=`, `break` / `continue`, `return`. Anything else raises GiveUp.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from .kernel_types import Module
from .source import dotted_name
from .values import UNKNOWN, binary, call, literal, unary

MAX_STEPS = 5000
MAX_ITEMS = 256  # a longer list, a longer range: not a config space we fold
MAX_DEPTH = 4  # nested calls of the file's functions
_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


class GiveUp(Exception):
    """The code does something this fold does not read."""


class Jump(Exception):
    """`break`, `continue` or `return`: caught where the fold of a loop or a function ends."""


class _Break(Jump):
    pass


class _Continue(Jump):
    pass


class _Return(Jump):
    def __init__(self, value):
        super().__init__()
        self.value = value


@dataclass
class FoldedConfig:
    """A `triton.Config(...)` call folded to its values."""

    values: dict[str, Any]  # constexprs and the options above
    node: Any  # the `triton.Config(...)` call


class Fold:
    """One fold: its step budget and call depth are shared by everything it evaluates."""

    def __init__(self, module: Module):
        self.module = module
        self.src = module.src
        self.steps = 0
        self.depth = 0

    def _tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise GiveUp

    def _known(self, v):
        if v is UNKNOWN:
            raise GiveUp
        return v

    # -- expressions ------------------------------------------------------------------------------

    def expr(self, node, env: dict):
        self._tick()
        if node is None:
            raise GiveUp
        t, src = node.type, self.src
        if t in ("integer", "float", "true", "false", "none", "string"):
            return self._known(literal(node, src))
        if t == "identifier":
            return self._name(src.text_of(node), env)
        if t == "parenthesized_expression":
            kids = node.named_children
            if len(kids) != 1:
                raise GiveUp
            return self.expr(kids[0], env)
        if t in ("tuple", "expression_list"):
            return tuple(self.expr(c, env) for c in node.named_children if c.type != "comment")
        if t == "list":
            return [self.expr(c, env) for c in node.named_children if c.type != "comment"]
        if t == "dictionary":
            out = {}
            for pair in node.named_children:
                if pair.type != "pair":
                    raise GiveUp
                out[self.expr(pair.child_by_field_name("key"), env)] = self.expr(pair.child_by_field_name("value"), env)
            return out
        if t == "unary_operator":
            return self._known(unary(src.text_of(node.child_by_field_name("operator")),
                                     self.expr(node.child_by_field_name("argument"), env)))
        if t == "not_operator":
            return not self.expr(node.child_by_field_name("argument"), env)
        if t == "binary_operator":
            op = src.text_of(node.child_by_field_name("operator"))
            a, b = self.expr(node.child_by_field_name("left"), env), self.expr(node.child_by_field_name("right"), env)
            if op == "+" and isinstance(a, (list, tuple)) and type(a) is type(b):
                return self._bounded(a + b)
            if isinstance(a, (list, tuple, dict)) or isinstance(b, (list, tuple, dict)):
                raise GiveUp
            return self._known(binary(op, a, b))
        if t == "boolean_operator":
            a = self.expr(node.child_by_field_name("left"), env)
            op = src.text_of(node.child_by_field_name("operator"))
            return a if (op == "and") != bool(a) else self.expr(node.child_by_field_name("right"), env)
        if t == "comparison_operator":
            return self._compare(node, env)
        if t == "conditional_expression":
            body, cond, other = node.named_children
            return self.expr(body if self.expr(cond, env) else other, env)
        if t == "subscript":
            base = self.expr(node.child_by_field_name("value"), env)
            subs = node.children_by_field_name("subscript")
            if len(subs) != 1:
                raise GiveUp
            try:
                return base[self.expr(subs[0], env)]
            except (TypeError, KeyError, IndexError) as exc:
                raise GiveUp from exc
        if t == "list_comprehension":
            return self._comprehension(node, env)
        if t == "call":
            return self._call(node, env)
        raise GiveUp

    def _name(self, name: str, env: dict):
        if name in env:
            return env[name]
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        values = self.module.constants.get(name)
        if values:
            return self._nested(lambda: self.expr(values[-1], {}))
        raise GiveUp

    def _bounded(self, seq):
        if len(seq) > MAX_ITEMS:
            raise GiveUp
        return seq

    def _compare(self, node, env: dict):
        kids = node.named_children
        ops = [self.src.text_of(c) for c in node.children if not c.is_named]
        if len(kids) != 2 or len(ops) != 1:
            raise GiveUp
        a, b = self.expr(kids[0], env), self.expr(kids[1], env)
        if ops[0] in ("in", "not in"):
            if not isinstance(b, (list, tuple, dict, str)):
                raise GiveUp
            return (a in b) == (ops[0] == "in")
        return self._known(binary(ops[0], a, b))

    def _comprehension(self, node, env: dict):
        body = node.child_by_field_name("body")
        clauses = [c for c in node.named_children if c.type in ("for_in_clause", "if_clause")]
        out: list = []

        def run(i: int, scope: dict) -> None:
            if i == len(clauses):
                out.append(self.expr(body, scope))
                self._bounded(out)
                return
            c = clauses[i]
            if c.type == "if_clause":
                if self.expr(c.named_children[0], scope):
                    run(i + 1, scope)
                return
            for item in self._iterable(self.expr(c.child_by_field_name("right"), scope)):
                inner = dict(scope)
                self._bind(c.child_by_field_name("left"), item, inner)
                run(i + 1, inner)

        run(0, dict(env))
        return out

    def _iterable(self, v):
        if not isinstance(v, (list, tuple)):
            raise GiveUp
        return self._bounded(list(v))

    def _call(self, node, env: dict):
        fn = node.child_by_field_name("function")
        name = dotted_name(fn, self.src) or ""
        short = name.rsplit(".", 1)[-1]
        raw = [a for a in (node.child_by_field_name("arguments").named_children
                           if node.child_by_field_name("arguments") is not None else []) if a.type != "comment"]
        if any(a.type in ("list_splat", "dictionary_splat") for a in raw):
            raise GiveUp
        args = [self.expr(a, env) for a in raw if a.type != "keyword_argument"]
        kwargs = {self.src.text_of(a.child_by_field_name("name")): self.expr(a.child_by_field_name("value"), env)
                  for a in raw if a.type == "keyword_argument"}
        if short == "Config" and self.module.aliases.triton_attr(name) == "Config":
            return self._config(args, kwargs, node)
        if kwargs:
            raise GiveUp
        if name == "range":
            if not args or not all(isinstance(a, int) for a in args):
                raise GiveUp
            return self._bounded(list(range(*args)))
        if name in ("list", "tuple") and len(args) == 1:
            return (list if name == "list" else tuple)(self._iterable(args[0]))
        if name == "len" and len(args) == 1 and isinstance(args[0], (list, tuple, dict)):
            return len(args[0])
        if name in ("itertools.product", "product") and args:
            return self._bounded(list(itertools.product(*(self._iterable(a) for a in args))))
        if name in self.module.functions:
            return self._function(self.module.functions[name], args)
        if name in ("min", "max") and len(args) == 1:
            args = self._iterable(args[0])
        if any(isinstance(a, (list, tuple, dict)) for a in args):
            raise GiveUp
        return self._known(call(short, args))

    def _config(self, args: list, kwargs: dict, node) -> FoldedConfig:
        constexprs = args[0] if args else kwargs.get("kwargs")
        if not isinstance(constexprs, dict) or not all(isinstance(n, str) for n in constexprs):
            raise GiveUp
        values = dict(constexprs)
        for opt in _OPTIONS:
            if kwargs.get(opt) is not None:
                values[opt] = kwargs[opt]
        for i, opt in enumerate(_OPTIONS[:2], start=1):  # Config(kwargs, num_warps, num_stages)
            if i < len(args) and args[i] is not None:
                values[opt] = args[i]
        return FoldedConfig(values, node)

    def _nested(self, fold):
        if self.depth >= MAX_DEPTH:
            raise GiveUp
        self.depth += 1
        try:
            return fold()
        finally:
            self.depth -= 1

    # -- the file's functions ---------------------------------------------------------------------

    def _function(self, fn, args: list):
        env: dict = {}
        params = fn.child_by_field_name("parameters")
        i = 0
        for p in params.named_children if params is not None else []:
            if p.type == "identifier":
                name, default = self.src.text_of(p), None
            elif p.type in ("default_parameter", "typed_default_parameter"):
                name, default = self.src.text_of(p.child_by_field_name("name")), p.child_by_field_name("value")
            else:
                raise GiveUp  # *args, **kwargs, annotations we do not need to read
            if i < len(args):
                env[name] = args[i]
            elif default is not None:
                env[name] = self.expr(default, {})
            else:
                raise GiveUp
            i += 1
        if i < len(args):
            raise GiveUp

        def run():
            try:
                self._block(fn.child_by_field_name("body"), env)
            except _Return as r:
                return r.value
            return None

        return self._nested(run)

    def _block(self, block, env: dict) -> None:
        for st in block.named_children if block is not None else []:
            self._statement(st, env)

    def _statement(self, st, env: dict) -> None:
        self._tick()
        t = st.type
        if t in ("comment", "pass_statement"):
            return
        if t == "return_statement":
            kids = st.named_children
            raise _Return(self.expr(kids[0], env) if kids else None)
        if t == "if_statement":
            if self.expr(st.child_by_field_name("condition"), env):
                self._block(st.child_by_field_name("consequence"), env)
                return
            for alt in st.children_by_field_name("alternative"):
                if alt.type == "elif_clause":
                    if self.expr(alt.child_by_field_name("condition"), env):
                        self._block(alt.child_by_field_name("consequence"), env)
                        return
                else:
                    self._block(alt.child_by_field_name("body"), env)
            return
        if t == "for_statement":
            if st.child_by_field_name("alternative") is not None:
                raise GiveUp
            for item in self._iterable(self.expr(st.child_by_field_name("right"), env)):
                self._bind(st.child_by_field_name("left"), item, env)
                try:
                    self._block(st.child_by_field_name("body"), env)
                except _Continue:
                    continue
                except _Break:
                    break
            return
        if t in ("break_statement", "continue_statement"):
            raise _Break if t == "break_statement" else _Continue
        if t != "expression_statement":
            raise GiveUp  # while, with, try, raise, import, nested definitions
        for e in st.named_children:
            self._expression_statement(e, env)

    def _expression_statement(self, e, env: dict) -> None:
        if e.type == "string":
            return  # a docstring
        if e.type == "assignment":
            if e.child_by_field_name("type") is not None and e.child_by_field_name("right") is None:
                return  # a bare annotation
            self._bind(e.child_by_field_name("left"), self.expr(e.child_by_field_name("right"), env), env)
            return
        if e.type == "augmented_assignment":
            left = e.child_by_field_name("left")
            op = self.src.text_of(e.child_by_field_name("operator"))
            if left.type != "identifier":
                raise GiveUp
            a, b = self._name(self.src.text_of(left), env), self.expr(e.child_by_field_name("right"), env)
            if op == "+=" and isinstance(a, list) and isinstance(b, (list, tuple)):
                a.extend(b)
                self._bounded(a)
            elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
                env[self.src.text_of(left)] = self._known(binary(op[:-1], a, b))
            else:
                raise GiveUp
            return
        if e.type == "call":
            fn = e.child_by_field_name("function")
            if fn is not None and fn.type == "attribute":
                target = fn.child_by_field_name("object")
                method = self.src.text_of(fn.child_by_field_name("attribute"))
                args = e.child_by_field_name("arguments")
                kids = [a for a in (args.named_children if args is not None else []) if a.type != "comment"]
                if target.type == "identifier" and method in ("append", "extend") and len(kids) == 1 \
                        and kids[0].type != "keyword_argument":
                    seq = self._name(self.src.text_of(target), env)
                    if not isinstance(seq, list):
                        raise GiveUp
                    v = self.expr(kids[0], env)
                    seq.append(v) if method == "append" else seq.extend(self._iterable(v))
                    self._bounded(seq)
                    return
        raise GiveUp

    def _bind(self, target, value, env: dict) -> None:
        if target is None:
            raise GiveUp
        if target.type == "identifier":
            env[self.src.text_of(target)] = value
            return
        if target.type in ("pattern_list", "tuple_pattern", "list_pattern", "tuple"):
            items = [c for c in target.named_children if c.type != "comment"]
            if not isinstance(value, (list, tuple)) or len(value) != len(items):
                raise GiveUp
            for item, v in zip(items, value):
                self._bind(item, v, env)
            return
        raise GiveUp
