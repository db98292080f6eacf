"""Host expressions folded to one value each, on representative sizes (representative_eval.py
says which sizes and why): literals, names, arithmetic, comparisons, `and` / `or` / `not`,
conditional expressions, tuples, `x.shape[i]` and friends, dtypes, and calls of the helpers the
value layer folds or of the project's own functions (which `HostEval` evaluates statement by
statement). Nothing is imported or run.
"""

from __future__ import annotations

import math
import re

from tritonlens.analysis.source import dotted_name
from tritonlens.analysis.values import _CALLS as FOLDED_CALLS
from tritonlens.analysis.values import UNKNOWN, binary, call, literal, unary
from tritonlens.profiling.config_pins import dtype_of
from tritonlens.profiling.project_files import ProjectFile

HEAD_DIM, HEADS, BATCH, SIZE = 128, 32, 8, 4096
# Lq / Lk / Lv: attention kernels' head dims (`Lk = k.shape[-1]`)
_HEAD_DIM = re.compile(r"^(k|v|d|dk|dv|hd|l[qkv]|head_?dim|headdim|(qk|kv|v)_?head_?dim|d_?head|d_?model_?head|"
                       r"head_?size|block_?dmodel)$",
                       re.IGNORECASE)
_HEADS = re.compile(r"^(h|hq|hk|hv|kvh|qh|kh|n_?[qkv]?h|n_?kv_?h|n_?heads|num_?heads|nheads|n_?kv_?heads|"
                    r"num_?kv_?heads|num_?q_?heads|(n|num)_?(q|k|kv|v)?_?heads?|(q_?|kv_?)?heads?_?(num|count))$",
                    re.IGNORECASE)
_BATCH = re.compile(r"^(b|bs|bsz|batch|batch_?size|n_?batch|num_?batch(es)?)$", re.IGNORECASE)
# Not sizes at all: warps and pipeline stages, whatever the kernel calls them.
_WARPS = re.compile(r"^(n_?|num_?)?warps(_per_\w+)?$", re.IGNORECASE)
_STAGES = re.compile(r"^(n_?|num_?)?stages$", re.IGNORECASE)
_BITS = re.compile(r"(^|_)(n_?|num_?)?bits$|nbits", re.IGNORECASE)  # a quantized element's width: int4
# A platform query nobody can answer here: the answer a CUDA machine gives.
_OTHER_PLATFORM = re.compile(r"(^|_|\.)(hip|rocm|amd|xpu|npu|mlu|musa|cpu|mps|intel|ascend|cambricon|tpu)($|_)",
                             re.IGNORECASE)
_CUDA = re.compile(r"(^|_|\.)(cuda|nvidia)($|_)", re.IGNORECASE)
MAX_DEPTH = 6  # nested helper calls
_EXTRA_CALLS = {"ceil": math.ceil, "floor": math.floor, "log2": math.log2, "bool": bool, "float": float,
                "round": round}


def representative_size(name: str) -> int:
    """The size a tensor dimension called `name` is assumed to have (see the module docstring)."""
    n = name.strip("_")
    if _HEAD_DIM.match(n):
        return HEAD_DIM
    if _HEADS.match(n):
        return HEADS
    if _BATCH.match(n):
        return BATCH
    if _WARPS.match(n):
        return 4  # Triton's default num_warps
    if _STAGES.match(n):
        return 3
    if _BITS.search(n):
        return 4
    return SIZE


class Size:
    """A size nobody wrote down: a tensor dimension or a wrapper parameter, named where it was bound."""

    __slots__ = ("name",)

    def __init__(self, name: str = ""):
        self.name = name



class Shape:
    """A tensor's shape (`x.shape`, kept in a name such as `ori_shape`): indexing or unpacking it
    gives sizes."""

    __slots__ = ()


class Unfoldable(Exception):
    """The helper does something outside the folded subset: its result is unknown."""


class Returned(Exception):
    def __init__(self, value):
        self.value = value


class HostExpressions:
    """The expression half of the host evaluator; `used` collects the representative sizes read."""

    used: dict[str, int]
    _files: object
    sizes: dict[str, int] = {}  # representative sizes chosen in place of the usual ones (HostEval's retries)

    def _user_function(self, name: str, args: list, kwargs: dict, f: ProjectFile):
        raise NotImplementedError

    def value(self, node, env, f: ProjectFile):
        if node is None:
            return UNKNOWN
        t = node.type
        src = f.src
        if t in ("integer", "float", "true", "false", "none", "string"):
            return literal(node, src)
        if t == "identifier":
            name = src.text_of(node)
            if name in env:
                self.used.update(getattr(env, "deps", {}).get(name, {}))  # what its value rests on
                return env[name]
            if name in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[name]
            if name in f.constants:
                return self.value(f.constants[name], {}, f)
            if name in f.imports:
                there = self._files.imported(f.imports[name][0], f)
                if there is not None and f.imports[name][1] in there.constants:
                    return self.value(there.constants[f.imports[name][1]], {}, there)
            return UNKNOWN
        if t == "parenthesized_expression":
            kids = node.named_children
            return self.value(kids[0], env, f) if len(kids) == 1 else UNKNOWN
        if t in ("tuple", "expression_list", "list"):
            kids = [c for c in node.named_children if c.type != "comment"]
            if any(c.type == "list_splat" or (c.type == "attribute" and c.named_children
                                               and c.named_children[0].type == "list_splat") for c in kids):
                return UNKNOWN
            return tuple(self.value(c, env, f) for c in kids)
        if t == "dictionary":  # `kernel_args = {"BLOCK_ROW": 16}`: keyword arguments built up for a launch
            out = {}
            for pair in node.named_children:
                key = pair.child_by_field_name("key") if pair.type == "pair" else None
                k = literal(key, src) if key is not None and key.type == "string" else UNKNOWN
                if not isinstance(k, str):
                    return UNKNOWN
                out[k] = self.value(pair.child_by_field_name("value"), env, f)
            return out
        if t == "unary_operator":
            return unary(src.text_of(node.child_by_field_name("operator")),
                         self._num(self.value(node.child_by_field_name("argument"), env, f)))
        if t == "not_operator":
            v = self.value(node.child_by_field_name("argument"), env, f)
            return UNKNOWN if v is UNKNOWN or isinstance(v, Size) else not v
        if t == "binary_operator":
            op = src.text_of(node.child_by_field_name("operator"))
            return self._arith(op, self.value(node.child_by_field_name("left"), env, f),
                               self.value(node.child_by_field_name("right"), env, f))
        if t == "boolean_operator":
            a = self.value(node.child_by_field_name("left"), env, f)
            op = src.text_of(node.child_by_field_name("operator"))
            if a is UNKNOWN or isinstance(a, Size):
                return UNKNOWN
            if (op == "and") != bool(a):
                return a
            return self.value(node.child_by_field_name("right"), env, f)
        if t == "comparison_operator":
            return self._compare(node, env, f)
        if t == "conditional_expression":
            kids = node.named_children
            if len(kids) != 3:
                return UNKNOWN
            c = self.value(kids[1], env, f)
            first = c is UNKNOWN or isinstance(c, Size) or c
            return self.value(kids[0] if first else kids[2], env, f)
        if t == "attribute":
            text = src.text_of(node)
            if src.text_of(node.child_by_field_name("attribute")) == "shape":
                return Shape()
            dt = dtype_of(text)
            if dt is not None:
                return dt
            return platform_answer(text)
        if t == "subscript":
            return self._subscript(node, env, f)
        if t == "call":
            return self._call(node, env, f)
        return UNKNOWN

    def _num(self, v):
        if isinstance(v, Size):
            key = v.name or "a tensor dimension"
            size = self.sizes.get(key) or (representative_size(v.name) if v.name else SIZE)
            self.used[key] = size
            return size
        return v

    def _arith(self, op: str, a, b):
        a, b = self._num(a), self._num(b)
        if a is UNKNOWN or b is UNKNOWN or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return UNKNOWN
        return binary(op, a, b)

    def _compare(self, node, env, f: ProjectFile):
        kids = node.named_children
        ops, pending = [], []
        for c in node.children:
            if c.is_named:
                if pending:
                    ops.append(" ".join(pending))
                    pending = []
            else:
                pending.append(f.src.text_of(c))
        if len(ops) != len(kids) - 1:
            return UNKNOWN
        vals = [self.value(k, env, f) for k in kids]
        result = True
        for op, a, b in zip(ops, vals, vals[1:]):
            if op in ("is", "is not"):
                if a is UNKNOWN or b is UNKNOWN or isinstance(a, Size) or isinstance(b, Size):
                    return UNKNOWN
                r = (a is b) if a is None or b is None or isinstance(a, bool) else (a == b)
                r = r if op == "is" else not r
            else:
                if op in ("in", "not in"):
                    return UNKNOWN
                if any(isinstance(x, Size) and not isinstance(y, (int, float, Size)) for x, y in ((a, b), (b, a))):
                    return UNKNOWN  # `activation == "relu"`: the parameter is no size
                a, b = self._num(a), self._num(b)
                if a is UNKNOWN or b is UNKNOWN:
                    return UNKNOWN
                r = binary(op, a, b)
                if r is UNKNOWN:
                    return UNKNOWN
            result = result and bool(r)
        return result

    def _subscript(self, node, env, f: ProjectFile):
        value = node.child_by_field_name("value")
        subs = node.children_by_field_name("subscript")
        if value is not None and value.type == "attribute" and f.src.text_of(value.child_by_field_name("attribute")) \
                in ("shape",):
            return Size()
        base = self.value(value, env, f)
        if isinstance(base, Shape) or (isinstance(base, Size) and f.src.text_of(value).endswith(("size()", "shape"))):
            return Size()
        if len(subs) != 1:
            return UNKNOWN
        key = self.value(subs[0], env, f)
        if isinstance(base, dict) and isinstance(key, str):
            return base.get(key, UNKNOWN)
        if isinstance(base, tuple) and isinstance(key, int) and not isinstance(key, bool) and -len(base) <= key < len(base):
            return base[key]
        return UNKNOWN

    def _call(self, node, env, f: ProjectFile):
        fn = node.child_by_field_name("function")
        name = dotted_name(fn, f.src) or ""
        short = name.rsplit(".", 1)[-1]
        args_node = node.child_by_field_name("arguments")
        raw = [a for a in (args_node.named_children if args_node is not None else []) if a.type != "comment"]
        if fn is not None and fn.type == "attribute" and short in ("size", "numel", "stride", "dim"):
            return Size() if short in ("size", "numel") else UNKNOWN
        if short == "len":
            return Size()
        if any(a.type in ("list_splat", "dictionary_splat") for a in raw):
            return UNKNOWN
        args = [self.value(a, env, f) for a in raw if a.type != "keyword_argument"]
        kwargs = {f.src.text_of(a.child_by_field_name("name")): self.value(a.child_by_field_name("value"), env, f)
                  for a in raw if a.type == "keyword_argument"}
        if short == "constexpr" and len(args) == 1 and not kwargs:
            return args[0]  # tl.constexpr(0) at module level
        if short in FOLDED_CALLS:
            return call(short, [self._num(a) for a in args]) if not kwargs else UNKNOWN
        if "." not in name and (name in f.functions or name in f.imports):
            v = self._user_function(name, args, kwargs, f)
            return platform_answer(name) if v is UNKNOWN else v
        if short in _EXTRA_CALLS:
            nums = [self._num(a) for a in args]
            if len(nums) != 1 or kwargs or nums[0] is UNKNOWN:
                return UNKNOWN
            try:
                return _EXTRA_CALLS[short](nums[0])
            except (TypeError, ValueError, OverflowError):
                return UNKNOWN
        return platform_answer(name)


def platform_answer(name: str):
    """What a CUDA machine answers to a platform query called `name`; UNKNOWN for anything else."""
    if _OTHER_PLATFORM.search(name):
        return None if name.endswith("version.hip") else False
    return True if _CUDA.search(name) and not name.startswith("torch.cuda.get") else UNKNOWN
