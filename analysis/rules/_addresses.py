"""Every address a kernel computes, for rules that read what an address's products reach.

Not a rule. An access's pointer (`tl.load(X + cols)`) holds its summands through local names and
`X += d` (`_offsets.additive_terms`); a pointer a program selects (`x = tl.where(is_q, xq, xk)`)
is read as each of its choices, each an address of its own. Two kinds of address escape the
chain. A pointer rebound from itself (`X = X + pid * stride_xb` in one branch, then
`X = X + offs` before the access) keeps only the last rebinding in the access's chain; and a
pointer advanced and then handed to a device helper of the file (`Q += off_b * stride_qb;
_attend(Q, ...)`) is addressed in the helper, where the kernel's products are out of sight. Both
are addresses of their own here.
"""

from __future__ import annotations

import re

from ..kernel_roles import device_helpers
from . import _host_dtypes as host
from ._offsets import (
    ATOMIC_OPS,
    MEMORY_OPS,
    additive_terms,
    ancestors,
    chain_text,
    rhs_of,
    strip_parens,
)


def _pointer_exprs(ctx):
    """(pointer, 1 when what it points at is indexed further) of each access and descriptor."""
    out = []
    for call in ctx.kernel.calls:
        if call.name in MEMORY_OPS + ATOMIC_OPS + _DESCRIPTORS:
            # a descriptor's base: the descriptor's shape and strides index the rows from there
            ptr = call.arg(0, "base" if call.name in _DESCRIPTORS else "pointer")
            if ptr is not None:
                out.append((ptr, int(call.name in _DESCRIPTORS)))
    return out


_DESCRIPTORS = ("make_tensor_descriptor", "make_block_ptr")
_MAX_CHOICES = 16  # (nested selects multiply: a 3 x 3 grid of operands is 9 choices)


def _choices(ctx, terms, kinds, depth=0) -> list[list]:
    """The summands of each pointer a `tl.where(c, a_ptr, b_ptr)` among `terms` can select (a
    select of offsets, `tl.where(c, offs, 0)`, stays one term)."""
    for i, t in enumerate(terms):
        fn = t.child_by_field_name("function") if t.type == "call" and depth < 4 else None
        args = t.child_by_field_name("arguments") if fn is not None else None
        arms = [a for a in args.named_children if a.type != "comment"][1:] if args is not None else []
        if fn is None or not ctx.src.text_of(fn).endswith("where") or len(arms) != 2:
            continue
        arm_terms = [additive_terms(ctx, a) for a in arms]
        if not any(_arm_base(ctx, a) or _choices(ctx, a, kinds, depth + 1)[1:] for a in arm_terms):
            continue
        rest = terms[:i] + terms[i + 1:]
        out = [c for a in arm_terms for c in _choices(ctx, rest + a, kinds, depth + 1)]
        return out[:_MAX_CHOICES]
    return [terms]


def _base_name(ctx, terms, kinds) -> str:
    for term in terms:
        t = strip_parens(term)
        if t is not None and t.type == "identifier" and ctx.src.text_of(t) in kinds.pointers:
            return ctx.src.text_of(t)
    return ""


def _arm_base(ctx, terms) -> str:
    """A parameter among a selected pointer's summands, unscaled: the pointer it selects (which
    `param_kinds` does not see behind the select)."""
    params = {p.name for p in ctx.kernel.params if not p.is_constexpr}
    for term in terms:
        t = strip_parens(term)
        if t is not None and t.type == "identifier" and ctx.src.text_of(t) in params:
            return ctx.src.text_of(t)
    return ""


def addresses(ctx, kinds) -> list[tuple]:
    """(base pointer, summands, indices the summands leave out, hidden) of every address: each
    access's pointer (each choice of a selected one) and tensor descriptor's base, and each advance
    of a pointer parameter no access reaches (`X = X + pid * stride_xb` in one branch, hidden by a
    later `X = X + offs`; `Q += off_b * stride_qb` before Q goes to a device helper: hidden), which
    the access or the helper indexes further."""
    out, reached = [], set()
    for ptr, further in _pointer_exprs(ctx):
        choices = _choices(ctx, additive_terms(ctx, ptr), kinds)
        for terms in choices:
            base = _base_name(ctx, terms, kinds) or (_arm_base(ctx, terms) if len(choices) > 1 else _lost_base(ctx, terms))
            out.append((base, terms, further, False))
            reached.update(t.id for t in terms)
    params = {p.name for p in ctx.kernel.params}
    for name in sorted({a[0] for a in out if a[0]} | _handed_to_helpers(ctx)):
        for base, terms in _advances(ctx, name, params):
            if base and not any(t.id in reached for t in terms):
                out.append((base, terms, 1, True))
    return out


def _sum_terms(ctx, node, depth=0) -> list:
    """The summands of one expression, split at `+` and `-` (local names are not followed)."""
    node = strip_parens(node)
    if node is not None and depth < 12 and node.type == "binary_operator" and ctx.src.text_of(node.child_by_field_name("operator")) in ("+", "-"):
        return _sum_terms(ctx, node.child_by_field_name("left"), depth + 1) + _sum_terms(ctx, node.child_by_field_name("right"), depth + 1)
    return [node] if node is not None else []


def _advances(ctx, name, params) -> list[tuple]:
    """(base, summands) of each `name += d` / `name = name + d` of a parameter (any branch), less
    `name`; of a local pointer (`v_ptr = V + pid_b * stride_vb`), its definitions' summands."""
    out = []
    for a in ctx.kernel.assignments.get(name, ()):
        right = rhs_of(a)
        if name not in params:
            terms = additive_terms(ctx, right) if right is not None and not a.augmented else []
            base = next((ctx.src.text_of(t) for t in terms if t.type == "identifier" and ctx.src.text_of(t) in params), "")
            out.append((base, [t for t in terms if ctx.src.text_of(t) != base]))
            continue
        terms = _sum_terms(ctx, right) if right is not None and a.augmented in (None, "+=", "-=") else []
        own = {t.id for t in terms if t.type == "identifier" and ctx.src.text_of(t) == name}
        if a.augmented or own:
            out.append((name, [t for t in terms if t.id not in own]))
    return out


def _handed_to_helpers(ctx) -> set[str]:
    """Names passed to a device helper of the file, which addresses them itself."""
    # Per analysis, not per kernel model: a cached kernel keeps its model while the helpers change.
    memo = ctx.module.memo.setdefault("addresses.helpers", {}).setdefault(id(ctx.kernel), {})
    if "args" not in memo:
        helpers, found, todo = device_helpers(ctx.module), set(), [ctx.kernel.node]
        text = ctx.src.text_of(ctx.kernel.node)
        if not any(h + "(" in text for h in helpers):
            todo = []  # (the walk is the cost: most kernels call no helper)
        while todo:
            n = todo.pop()
            fn = n.child_by_field_name("function") if n.type == "call" else None
            if fn is not None and ctx.src.text_of(fn) in helpers:
                args = n.child_by_field_name("arguments")
                found.update(ctx.src.text_of(a) for a in (args.named_children if args else ()) if a.type == "identifier")
            todo.extend(n.children)
        memo["args"] = found
    return memo["args"]


def _lost_base(ctx, terms) -> str:
    """A base the chain loses to `k_base = None` in another branch: the tensor its strides name
    (`stride_k_scale_n` → `k_scale`); empty when no summand is that None."""
    if not any(t.type == "none" for t in terms):
        return ""
    for name in sorted({n for t in terms for n in _IDENT.findall(ctx.src.text_of(t)) if "stride" in n.lower()}):
        words = [w for w in name.split("_") if not w.lower().startswith("stride")]
        return "_".join(words[:-1] if len(words) > 1 else words)
    return ""


def _arms(node) -> dict:
    """{id of an enclosing `if`: which of its branches holds `node`}."""
    out, child = {}, node
    for p in ancestors(node):
        if p.type == "if_statement":
            out[p.id] = child.id
        child = p
    return out


def exclusive(a, b) -> bool:
    """Two summands assigned in different branches of one `if` (`k += start * stride_kn` under
    `if starts is not None:`, `k += off_z * stride_kz` under `else:`): never in one address."""
    arms_b = _arms(b)
    return any(arms_b.get(i, arm) != arm for i, arm in _arms(a).items())


# A table of where each sequence starts (`seq_starts`, `cu_seqlens`, `indptr`): int32 by the
# varlen convention, whatever width the batch index that reads it has.
_STARTS = re.compile(r"start|indptr|cu_seq", re.IGNORECASE)
_IDENT = re.compile(r"[A-Za-z_]\w*")


def widened(ctx, product, index, others) -> bool:
    """An int64 cast in how `index * others` is computed, or an index loaded from a table every
    launch passes as int64 (`row = tl.load(rows + i)` with `rows` made `torch.int64` or `.long()`).
    A sequence start loaded as the index (`start = tl.load(seq_starts + off_z.to(tl.int64))`) keeps
    the table's int32: the cast in the load's address widens the address, not the value."""
    if _loaded_wide(ctx, index):
        return True
    if "int64" not in chain_text(ctx, product):
        return False
    idx = strip_parens(index)
    defs = ctx.kernel.assignments.get(ctx.src.text_of(idx), []) if idx.type == "identifier" else []
    loads = [c for d in defs for c in ctx.calls_in(rhs_of(d) or idx, "load")]
    if not loads or not all(_STARTS.search(ctx.src.text_of(c.arg(0, "pointer") or c.node)) for c in loads):
        return True
    texts = [ctx.src.text_of(rhs_of(d) or idx) for d in defs]
    for c in loads:
        texts = [x.replace(ctx.src.text_of(c.node), "") for x in texts]
    return any("int64" in x for x in texts) or any("int64" in chain_text(ctx, f) for f in others)


def _loaded_wide(ctx, index) -> bool:
    """`index` is computed from a value loaded from a table the launches pass as int64, and nothing
    on the way narrows it (`.to(tl.int32)`)."""
    loads = ctx.definition_calls(index, "load")
    if not loads or "int32" in chain_text(ctx, index):
        return False
    params = {p.name for p in ctx.kernel.params if not p.is_constexpr}
    return any(host.pointer_dtype(ctx, name) == "int64" for c in loads
               for name in ctx.names_in(c.arg(0, "pointer") or c.node) if name in params)
