"""The dtype of the tensor a launch passes for a pointer parameter, read from the host code around
the launch: `torch.empty(..., dtype=torch.float16)`, `x.half()`, `x.to(torch.bfloat16)`,
`torch.empty_like(y)` of such a tensor. None wherever the file does not say (a wrapper's
parameter, a tensor built elsewhere), and when two launches disagree. Also the shape the launching
function allocates such a tensor with (`torch.empty(n, k)`, `x.new_empty((n, k), dtype=...)`)."""

from __future__ import annotations

from ..shapes.dtypes import element_bytes, normalize_dtype
from ..source import captures
from . import _offsets as off

# Tensor methods that give a tensor of a fixed dtype, and those that keep their object's dtype.
_CAST_METHODS = {"half": "fp16", "bfloat16": "bf16", "float": "fp32", "double": "fp64", "int": "int32",
                 "long": "int64", "short": "int16", "char": "int8", "byte": "uint8", "bool": "int1"}
_SAME_DTYPE_METHODS = {"contiguous", "clone", "view", "reshape", "transpose", "permute", "t", "flatten", "squeeze",
                       "unsqueeze", "expand", "narrow", "detach", "cuda", "to", "T", "mT"}
_SAME_DTYPE_FUNCS = {"empty_like", "zeros_like", "ones_like", "randn_like", "rand_like", "full_like"}
_DEPTH = 8


def pointer_dtype(ctx, param: str) -> str | None:
    """The element dtype ("fp16", "bf16", …) every visible launch passes for pointer `param`."""
    seen = set()
    for launch, node in off.launch_args(ctx, param):
        seen.add(_dtype(ctx.src, launch, node, 0))
    if len(seen) != 1:
        return None
    dt = seen.pop()
    return dt if element_bytes(dt) is not None else None


def _followed(src, launch, node, depth):
    """`node` without parentheses, or what the name it is was last assigned before the launch
    (with the depth that took); (None, depth) past _DEPTH or where nothing is known."""
    node = off.strip_parens(node)
    while node is not None and node.type == "identifier" and depth <= _DEPTH:
        node, depth = off.strip_parens(last_assignment(src, launch, src.text_of(node))), depth + 1
    return (node, depth) if depth <= _DEPTH else (None, depth)


def _dtype(src, launch, node, depth):
    node, depth = _followed(src, launch, node, depth)
    if node is None:
        return None
    if node.type == "subscript":  # `x[1:]` keeps x's dtype
        return _dtype(src, launch, node.child_by_field_name("value"), depth + 1)
    if node.type == "attribute":  # `self.rows`, made once in the file (`self.rows = torch.zeros(...)`)
        made = {_dtype(src, launch, right, depth + 1) for right in _attribute_assignments(src, src.text_of(node))}
        return made.pop() if len(made) == 1 else None
    if node.type != "call":
        return None
    given = _dtype_keyword(src, node)
    if given is not None:
        return given
    fn = node.child_by_field_name("function")
    if fn is None or fn.type != "attribute":
        return None
    method = src.text_of(fn.child_by_field_name("attribute"))
    obj = fn.child_by_field_name("object")
    if method in _CAST_METHODS:
        return _CAST_METHODS[method]
    if method == "to":
        for a in _arguments(node):
            dt = normalize_dtype(src.text_of(a)) if a.type == "attribute" else None
            if dt is not None:
                return dt
    if method in _SAME_DTYPE_METHODS:
        return _dtype(src, launch, obj, depth + 1)
    if method in _SAME_DTYPE_FUNCS:
        args = _arguments(node)
        return _dtype(src, launch, args[0], depth + 1) if args else None
    return None


_ALLOCATORS = {"empty", "zeros", "ones", "full", "randn", "rand", "new_empty", "new_zeros", "new_ones", "new_full"}


def allocated_dims(ctx, param: str) -> list | None:
    """The dimension nodes of the allocation every visible launch passes for pointer `param`
    (`torch.empty(num_reqs, steps + 1)` → [num_reqs, steps + 1]), when each launch passes a tensor
    the launching function allocates and all of them agree; None otherwise."""
    found = None
    for launch, node in off.launch_args(ctx, param):
        dims = _dims(ctx.src, launch, node, 0)
        texts = [ctx.src.text_of(d) for d in dims] if dims is not None else None
        if texts is None or (found is not None and texts != found[0]):
            return None
        found = (texts, dims)
    return found[1] if found else None


def _dims(src, launch, node, depth):
    node, depth = _followed(src, launch, node, depth)
    fn = node.child_by_field_name("function") if node is not None and node.type == "call" else None
    name = src.text_of(fn).rsplit(".", 1)[-1] if fn is not None else ""
    if name not in _ALLOCATORS:
        return None
    args = [a for a in _arguments(node) if a.type != "keyword_argument"]
    if name.endswith("full"):
        args = args[:1]  # the fill value is not a dimension
    if len(args) == 1 and args[0].type in ("tuple", "list"):
        args = [a for a in args[0].named_children if a.type != "comment"]
    if not args or any(a.type in ("list_splat", "dictionary_splat", "keyword_argument") for a in args):
        return None
    return args


def _arguments(call) -> list:
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def _dtype_keyword(src, call) -> str | None:
    for a in _arguments(call):
        if a.type == "keyword_argument" and src.text_of(a.child_by_field_name("name")) == "dtype":
            value = a.child_by_field_name("value")
            return normalize_dtype(src.text_of(value)) if value is not None and value.type == "attribute" else None
    return None


def _attribute_assignments(src, attribute: str) -> list:
    """The right sides of every `attribute = ...` in the file (`self.rows = torch.zeros(...)`)."""
    memo = src.memo_for("host_dtypes.attributes")
    if "all" not in memo:
        found: dict = {}
        for a in captures(src.root, "(assignment left: (attribute) @l right: (_) @r) @a", "a"):
            found.setdefault(src.text_of(a.child_by_field_name("left")), []).append(a.child_by_field_name("right"))
        memo["all"] = found
    return memo["all"].get(attribute, [])


def last_assignment(src, launch, name: str):
    """The right side of the last plain `name = …` before the launch in its function's own body."""
    body = launch.wrapper.child_by_field_name("body") if launch.wrapper is not None else None
    found = None
    for stmt in body.named_children if body is not None else ():
        if stmt.start_byte >= launch.node.start_byte:
            break
        a = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
        if a is not None and a.type == "assignment":
            left = a.child_by_field_name("left")
            if left is not None and left.type == "identifier" and src.text_of(left) == name:
                found = a.child_by_field_name("right")
    return found
