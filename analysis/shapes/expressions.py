"""Expressions of Python syntax in the shape engine: literals, names, attributes, subscripts
(`x[:, None]`), operators with broadcasting and dtype promotion, conditionals, and calls, which go
to the `tl.*` semantics (tl_calls.py, tl_layout.py) or into a @triton.jit helper, interpreted with
the caller's arguments and constexprs.
"""

from __future__ import annotations

import math

from ..source import dotted_name
from ..values import UNKNOWN, constants_scope, evaluate, literal, unary
from .abstract import (
    UNKNOWN_ABS,
    Abs,
    ShapeConflict,
    Sym,
    broadcast,
    const,
    join,
    known_scalar,
    scalar_value,
    shape_text,
    value_op,
)
from .dtypes import DTYPE_NAMES, is_int, literal_dtype, promote

# A constexpr whose value is not known (an unknown dimension of a block's `.shape`).
_COMPILE_TIME = Abs((), "int32", weak=True)
# Attributes of a tl dtype that are Python constants.
_DTYPE_CONSTANTS = {"primitive_bitwidth", "itemsize", "fp_mantissa_width", "exponent_bias", "int_bitwidth"}
# Methods of a block that are tl functions of it (`x.to(tl.float16)` is `tl.cast(x, tl.float16)`).
METHOD_TL = {"to": "cast", "sum": "sum", "max": "max", "min": "min", "argmax": "argmax", "argmin": "argmin",
             "reshape": "reshape", "view": "view", "trans": "trans", "permute": "permute",
             "broadcast_to": "broadcast_to", "expand_dims": "expand_dims", "ravel": "ravel", "split": "split",
             "cumsum": "cumsum", "cumprod": "cumprod", "reduce": "reduce", "xor_sum": "xor_sum", "sort": "sort",
             "flip": "flip", "exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt",
             "abs": "abs", "sigmoid": "sigmoid", "cast": "cast", "associative_scan": "associative_scan"}


class Expressions:
    """Mixin of the Interpreter: one method per expression node type (see DISPATCH)."""

    def e_literal(self, n, env):
        v = literal(n, self.src)
        if v is UNKNOWN:
            return UNKNOWN_ABS
        if isinstance(v, str):
            return Abs((), None, value=v, weak=True)
        return const(v)

    def e_paren(self, n, env):
        kids = n.named_children
        return self.expr(kids[0], env) if kids else UNKNOWN_ABS

    def e_tuple(self, n, env):
        return Abs(kind="tuple", items=tuple(self.expr(c, env) for c in n.named_children if c.type != "comment"))

    def e_identifier(self, n, env):
        name = self.src.text_of(n)
        if name in env:
            return env[name]
        if name in self.consts:
            return const(self.consts[name])
        if name in ("True", "False", "None"):
            return const({"True": True, "False": False, "None": None}[name])
        tl = self.tl_name(name)
        if tl is not None:
            return self.tl_attr(tl)
        if name in self.module.constants:
            return self.module_constant(name)
        return UNKNOWN_ABS

    def module_constant(self, name: str) -> Abs:
        """A module-level constant as a constexpr: host Python, evaluated by the value layer
        once per module (`BLOCK = 2 * BASE` included)."""
        memo = self.module.__dict__.get("_tritonlens_constants")
        if memo is None:
            memo = self.module.__dict__["_tritonlens_constants"] = {}
        a = memo.get(name)
        if a is None:
            vals = evaluate(self.module.constants[name][-1], self.module.src,
                            constants_scope(self.module.constants, self.module.src))
            a = memo[name] = const(vals[0]) if len(vals) == 1 and vals[0] is not UNKNOWN else UNKNOWN_ABS
        return a

    def tl_attr(self, name: str) -> Abs:
        short = name.split(".")[-1]
        if short in DTYPE_NAMES and "." not in name:
            return Abs(kind="dtype", value=DTYPE_NAMES[short])
        return UNKNOWN_ABS

    def e_attribute(self, n, env):
        dotted = dotted_name(n, self.src)
        tl = self.tl_name(dotted)
        if tl is not None:
            return self.tl_attr(tl)
        obj = self.expr(n.child_by_field_name("object"), env)
        attr = self.src.text_of(n.child_by_field_name("attribute"))
        # What a block knows of itself is compile-time: its dtype, shape and element count are
        # constexprs in Triton even where the engine does not know their values.
        if attr == "dtype" and obj.kind in ("tensor", "block_ptr", "descriptor", "unknown"):
            return Abs(kind="dtype", value=obj.dtype if obj.dtype is not None else UNKNOWN)
        if attr == "element_ty" and obj.kind == "dtype":
            v = obj.value
            return Abs(kind="dtype", value=v[1:] if isinstance(v, str) and v.startswith("*") else UNKNOWN)
        if attr in _DTYPE_CONSTANTS and obj.kind == "dtype":
            return _COMPILE_TIME
        # A scalar's `.shape` is read in @jit helpers that are handed blocks (element-wise
        # functions a wrapper applies): the parameter is not the scalar it is taken for.
        if attr == "shape" and obj.kind == "tensor" and obj.is_block:
            return Abs(kind="tuple", items=tuple(const(d) if d is not None else _COMPILE_TIME for d in obj.shape))
        if attr == "numel" and obj.kind in ("tensor", "unknown"):
            shape = obj.shape if obj.kind == "tensor" and obj.is_block else None
            if shape is not None and all(isinstance(d, int) for d in shape):
                return const(math.prod(shape))
            return _COMPILE_TIME
        if attr == "T" and obj.kind == "tensor" and obj.shape is not None and len(obj.shape) == 2:
            return Abs(obj.shape[::-1], obj.dtype)
        return UNKNOWN_ABS

    def e_subscript(self, n, env):
        base = self.expr(n.child_by_field_name("value"), env)
        subs = n.children_by_field_name("subscript")
        if base.kind == "tuple":
            if len(subs) == 1:
                idx = self.expr(subs[0], env)
                if isinstance(idx.value, int) and not isinstance(idx.value, bool) and -len(base.items) <= idx.value < len(base.items):
                    return base.items[idx.value]
            return UNKNOWN_ABS
        if base.kind != "tensor" or base.shape is None:
            for s in subs:
                if s.type != "slice":
                    self.expr(s, env)
            return UNKNOWN_ABS
        shape = list(base.shape)
        out, i = [], 0
        for s in subs:
            if s.type == "none" or (s.type == "identifier" and self.src.text_of(s) == "None"):
                out.append(1)
            elif s.type == "slice" and not s.named_children:
                if i >= len(shape):
                    return UNKNOWN_ABS
                out.append(shape[i])
                i += 1
            elif s.type == "ellipsis":
                rest = len(shape) - i - sum(1 for x in subs[subs.index(s) + 1:] if x.type == "slice")
                out.extend(shape[i:i + rest])
                i += rest
            else:
                self.expr(s, env)
                return UNKNOWN_ABS  # integer indexing or a real slice: not a block operation Triton has
        out.extend(shape[i:])
        return Abs(tuple(out), base.dtype)

    def e_unary(self, n, env):
        op = self.src.text_of(n.child_by_field_name("operator"))
        a = self.expr(n.child_by_field_name("argument"), env)
        if a.kind != "tensor":
            return UNKNOWN_ABS
        v = UNKNOWN
        if a.value is not UNKNOWN and isinstance(a.value, (int, float)) and not isinstance(a.value, bool):
            v = unary(op, a.value)
        elif isinstance(a.value, Sym) and op == "-":
            v = Sym(f"-{a.value}")
        return Abs(a.shape, a.dtype, value=v, weak=a.weak)

    def e_not(self, n, env):
        a = self.expr(n.child_by_field_name("argument"), env)
        if a.kind not in ("tensor", "none"):
            return _BOOL_OF_UNKNOWN
        v = (not a.value) if a.value is not UNKNOWN and not isinstance(a.value, Sym) else UNKNOWN
        return Abs(a.shape, "int1" if a.shape is not None else None, value=v, weak=a.weak)

    def e_boolean(self, n, env):
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        a, b = self.expr(left, env), self.expr(right, env)
        op = self.src.text_of(n.child_by_field_name("operator"))
        if any(x.kind not in ("tensor", "none") for x in (a, b)):
            return _bool_of(a, b)
        v = UNKNOWN
        if a.weak and b.weak and a.value is not UNKNOWN and b.value is not UNKNOWN and not isinstance(a.value, Sym) and not isinstance(b.value, Sym):
            v = (a.value and b.value) if op == "and" else (a.value or b.value)
        try:
            shape = broadcast(a.shape, b.shape)
        except ShapeConflict:
            shape = None
        return Abs(shape, "int1" if shape == () else None, value=v, weak=a.weak and b.weak)

    def e_binary(self, n, env):
        parts = self._binop_parts.get(n)
        if parts is None:
            parts = self._binop_parts[n] = (n.child_by_field_name("left"), n.child_by_field_name("right"),
                                            self.src.text_of(n.child_by_field_name("operator")))
        left, right, op = parts
        return self.binop(op, self.expr(left, env), self.expr(right, env), n, left, right)

    def binop(self, op: str, a: Abs, b: Abs, node, left, right) -> Abs:
        if a.kind != "tensor" or b.kind != "tensor":
            if a.kind == "tuple" and b.kind == "tuple" and op == "+":
                return Abs(kind="tuple", items=a.items + b.items)
            return UNKNOWN_ABS
        try:
            shape = broadcast(a.shape, b.shape)
        except ShapeConflict as c:
            self.problem("broadcast", node, f"'{op}' of {shape_text(a.shape)} and {shape_text(b.shape)} blocks: "
                         f"dimension {c.index} is {c.left} vs {c.right}",
                         (a.shape, b.shape), (left, right))
            shape = None
        dt = promote(a, b, div_or_mod=op in ("/", "%"))
        if op == "/" and (is_int(dt) or dt == "int1"):
            dt = "fp32"  # true division of integers
        v = scalar_value(op, a, b)
        if a.weak and b.weak and v is not UNKNOWN and not isinstance(v, Sym):
            dt = literal_dtype(v) or dt
        return Abs(shape, dt, value=v, weak=a.weak and b.weak)

    def e_compare(self, n, env):
        kids = n.named_children
        ops = [c for c in n.children if not c.is_named]
        vals = [self.expr(k, env) for k in kids]
        if len(vals) != 2 or len(ops) != 1:
            return Abs(None, "int1")
        a, b = vals
        op = self.src.text_of(ops[0])
        if a.kind == "none" or b.kind == "none" or op in ("is", "is not", "in", "not in"):
            v = UNKNOWN
            if op in ("is", "is not") and (a.kind == "none" or b.kind == "none") and a.kind != "unknown" and b.kind != "unknown":
                same = a.kind == b.kind
                v = same if op == "is" else not same
            return Abs((), "int1", value=v, weak=True)
        if a.kind == "dtype" and b.kind == "dtype":
            v = value_op(op, a.value, b.value) if a.value is not UNKNOWN and b.value is not UNKNOWN else UNKNOWN
            return Abs((), "int1", value=v, weak=True)
        if a.kind != "tensor" or b.kind != "tensor":
            return _bool_of(a, b)
        try:
            shape = broadcast(a.shape, b.shape)
        except ShapeConflict as c:
            self.problem("broadcast", n, f"'{op}' of {shape_text(a.shape)} and {shape_text(b.shape)} blocks: "
                         f"dimension {c.index} is {c.left} vs {c.right}",
                         (a.shape, b.shape), (kids[0], kids[1]))
            shape = None
        v = scalar_value(op, a, b)
        return Abs(shape, "int1", value=v, weak=a.weak and b.weak)

    def e_conditional(self, n, env):
        kids = n.named_children
        if len(kids) != 3:
            return UNKNOWN_ABS
        c = self.expr(kids[1], env)
        if c.constant:
            self.skip(kids[2] if c.value else kids[0])
            return self.expr(kids[0] if c.value else kids[2], env)
        return join(self.expr(kids[0], env), self.expr(kids[2], env))

    def e_list(self, n, env):
        return self.e_tuple(n, env)

    # -- calls --------------------------------------------------------------------------------

    def _split_call(self, n):
        fnode = n.child_by_field_name("function")
        argnode = n.child_by_field_name("arguments")
        args, kwargs = [], {}
        for a in (argnode.named_children if argnode else []):
            if a.type == "keyword_argument":
                kn = a.child_by_field_name("name")
                if kn is not None:
                    kwargs[self.src.text_of(kn)] = a.child_by_field_name("value")
            elif a.type in ("list_splat", "dictionary_splat"):
                splat = [x.child_by_field_name("value") if x.type == "keyword_argument" else x for x in argnode.named_children]
                return fnode, None, None, splat, None
            elif a.type != "comment":
                args.append(a)
        dotted = dotted_name(fnode, self.src) if fnode is not None and fnode.type in ("attribute", "identifier") else None
        return fnode, tuple(args), kwargs, None, dotted

    def e_call(self, n, env):
        parts = self._call_parts.get(n)
        if parts is None:
            parts = self._call_parts[n] = self._split_call(n)
        fnode, args, kwargs, splat, dotted = parts
        if splat is not None:
            for x in splat:
                self.expr(x, env)
            return UNKNOWN_ABS
        if fnode is None:
            return UNKNOWN_ABS
        tl = self.tl_name(dotted)
        if tl is not None:
            return self.tl_call(tl, n, args, kwargs, env, None)
        ta = self.al.triton_attr(dotted)
        if ta in ("cdiv", "next_power_of_2"):
            return self.tl_call(ta, n, args, kwargs, env, None)
        if fnode.type == "attribute":
            attr = self.src.text_of(fnode.child_by_field_name("attribute"))
            if attr in ("program_id", "num_programs"):
                # Wrappers of tl.program_id in other modules (flag_gems' `tle.program_id`) keep
                # its meaning: the program's index, an int32 scalar.
                self._eval_args(args, kwargs, env)
                return Abs((), "int32")
            if attr in METHOD_TL:
                obj = self.expr(fnode.child_by_field_name("object"), env)
                if obj.kind == "tensor":
                    return self.tl_call(METHOD_TL[attr], n, args, kwargs, env, obj)
            if attr == "advance":
                obj = self.expr(fnode.child_by_field_name("object"), env)
            if attr in ("load",):
                obj = self.expr(fnode.child_by_field_name("object"), env)
                if obj.kind == "descriptor":
                    self._eval_args(args, kwargs, env)
                    return Abs(obj.shape, obj.dtype)
            self._eval_args(args, kwargs, env)
            return UNKNOWN_ABS
        if fnode.type == "identifier":
            name = self.src.text_of(fnode)
            if name in self.jit:
                return self.jit_call(name, n, args, kwargs, env)
            if name in ("min", "max") and args and not kwargs:
                vals = [self.expr(a, env) for a in args]
                if all(known_scalar(v) and isinstance(v.value, (int, float)) for v in vals):
                    return _scalar((min if name == "min" else max)(v.value for v in vals), vals)
                if len(vals) > 1 and all(v.kind == "tensor" for v in vals):
                    # Triton's code generator calls tl.minimum / tl.maximum for these builtins.
                    return self.elementwise(n, vals, list(args))
                return UNKNOWN_ABS
            if name == "int" and len(args) == 1:
                v = self.expr(args[0], env)
                if known_scalar(v) and isinstance(v.value, (int, float)):
                    return _scalar(int(v.value), [v])
                return UNKNOWN_ABS
            if name == "float" and len(args) == 1:
                # `float("inf")` sentinels: a Python float, a constexpr in the kernel.
                if args[0].type == "string":
                    try:
                        return const(float(self.src.text_of(args[0]).strip("\"'")))
                    except ValueError:
                        return UNKNOWN_ABS
                v = self.expr(args[0], env)
                if known_scalar(v) and isinstance(v.value, (int, float)):
                    return _scalar(float(v.value), [v])
                return UNKNOWN_ABS
        self._eval_args(args, kwargs, env)
        return UNKNOWN_ABS

    def _eval_args(self, args, kwargs, env):
        vals = [self.expr(a, env) for a in args]
        kv = {k: self.expr(v, env) for k, v in kwargs.items()}
        return vals, kv


# A truth value of operands the engine does not know: a tensor or a constexpr, it cannot say.
_BOOL_OF_UNKNOWN = Abs(None, "int1", kind="unknown")


def _bool_of(a: Abs, b: Abs) -> Abs:
    """A comparison or `and`/`or` with an operand the engine does not model: a tensor when the
    other operand is a runtime tensor (Triton compares elementwise), unknown otherwise."""
    if any(x.kind == "tensor" and not x.weak for x in (a, b)):
        return Abs(None, "int1")
    return _BOOL_OF_UNKNOWN


def _scalar(v, operands) -> Abs:
    """The result of a builtin on known scalars: a constexpr when every operand is one, else a
    runtime value that is known (it feeds values, not shapes)."""
    if all(o.weak for o in operands):
        return const(v)
    return Abs((), None, value=v)


DISPATCH = {
    "integer": Expressions.e_literal, "float": Expressions.e_literal, "true": Expressions.e_literal,
    "false": Expressions.e_literal, "none": Expressions.e_literal, "string": Expressions.e_literal,
    "parenthesized_expression": Expressions.e_paren, "tuple": Expressions.e_tuple, "list": Expressions.e_list,
    "expression_list": Expressions.e_tuple, "identifier": Expressions.e_identifier,
    "attribute": Expressions.e_attribute, "subscript": Expressions.e_subscript,
    "unary_operator": Expressions.e_unary, "not_operator": Expressions.e_not,
    "boolean_operator": Expressions.e_boolean, "binary_operator": Expressions.e_binary,
    "comparison_operator": Expressions.e_compare, "conditional_expression": Expressions.e_conditional,
    "call": Expressions.e_call,
}
