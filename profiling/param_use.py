"""How a kernel's body uses its parameters, where the use alone decides what a value can be:

- **as an integer**: a name added to a pointer (`scale_ptr + r * scale_cols`), directly or through
  the locals the address is built from (`offs = pid * H_scale`, then `ptr + offs`), or shifted by
  (`1 << LOG2_SCALE`): a float there is "invalid operands of type pointer<fp32> and fp32";
- **as a condition**: `if X:`, `X if … else …`, `not X`, `X and …` is a flag: a float condition is
  refused;
- **as an API's string**: `eviction_policy=X`, `cache_modifier=X` is a string (the API's default,
  ""), `input_precision=X` a dot's precision ("tf32", Triton's default for fp32 on sm_80 and newer);
- **as a pointer's alias**: `in_ptr = in_ptr_a` (then `in_ptr + offs`) makes `in_ptr_a` a pointer;
- **as a `tl.static_range` bound**: the loop unrolls, so the value is kept small;
- **as a tile**: the end of a `tl.arange` or a dimension of `tl.zeros` / `tl.full`: a block size, not
  a tensor's (a kernel that hands its sizes to a jit helper makes its tiles there).

A jit helper's uses count for the parameters the kernel hands it (`ParamUse.merged`).

Read from the syntax tree: the sub-expressions of a call's arguments are not followed (what
`tl.load(p + i)` returns is data, and `acc + tl.load(p + i)` does not make `acc` an address).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tritonlens.analysis.source import captures

_STRING_KEYWORDS = {"eviction_policy": "", "cache_modifier": "", "input_precision": "tf32"}  # → the default
_DEPTH = 6  # assignments followed from an address back to the names it is computed from


@dataclass(frozen=True)
class ParamUse:
    """The kernel's parameters by use (module doc): each a frozenset of parameter names."""

    integer: frozenset = frozenset()  # in an address or a shift
    condition: frozenset = frozenset()
    string: frozenset = frozenset()  # (name, the keyword it is passed as) pairs
    pointer_alias: frozenset = frozenset()
    unrolled: frozenset = frozenset()  # in a tl.static_range bound: unrolled, so kept small
    tiles: frozenset = frozenset()  # tl.arange's end, tl.zeros / tl.full's shape

    def merged(self, theirs: ParamUse, mapping: dict[str, str]) -> ParamUse:
        """These uses and those of a jit helper the kernel hands its parameters to, `mapping`
        being {the helper's parameter: ours}."""
        def ours(names):
            return frozenset(mapping[n] for n in names if n in mapping)
        return ParamUse(self.integer | ours(theirs.integer), self.condition | ours(theirs.condition),
                        self.string | frozenset((mapping[n], k) for n, k in theirs.string if n in mapping), self.pointer_alias | ours(theirs.pointer_alias),
                        self.unrolled | ours(theirs.unrolled), self.tiles | ours(theirs.tiles))


NO_USE = ParamUse()  # a kernel whose uses were not read


def param_use(kernel, src, pointers: set[str]) -> ParamUse:
    """`kernel`'s parameters by use; `pointers` are the parameters known to be pointers."""
    params = {p.name for p in kernel.params}
    reads = _assignment_reads(kernel, src)
    ptrs = set(pointers)
    aliases: set[str] = set()
    bases = _pointer_bases(kernel, src)
    for _ in range(_DEPTH):  # locals that hold a pointer: `x_ptrs = x_ptr + offs`, `in_ptr = in_ptr_a`
        before = len(ptrs) + len(aliases)
        for name, values in reads.items():
            for names, is_sum, bare in values:
                if bare and bare in params and name in ptrs | bases:
                    aliases.add(bare)  # a parameter assigned to a local that addresses memory
                if names & ptrs and (is_sum or bare in ptrs):
                    ptrs.add(name)
        ptrs |= aliases
        if len(ptrs) + len(aliases) == before:
            break
    address: set[str] = set()
    for node in captures(kernel.node, "(binary_operator) @b", "b"):
        op = node.child_by_field_name("operator")
        if op is None or src.text_of(op) not in ("+", "-"):
            continue
        names = _names(node, src)
        if names & ptrs:
            address |= names - ptrs
    for _ in range(_DEPTH):
        more = {n for local in address & set(reads) for names, _s, _b in reads[local] for n in names} - ptrs
        if more <= address:
            break
        address |= more
    text = kernel.text or src.text_of(kernel.outer)
    shifted = {m.group(1) for m in re.finditer(_SHIFTED, text)}
    return ParamUse(integer=frozenset((address | shifted) & params - ptrs),
                    condition=frozenset(conditions(text) & params),
                    string=frozenset((m.group(2), m.group(1)) for m in _STRING.finditer(text) if m.group(2) in params),
                    pointer_alias=frozenset(aliases),
                    unrolled=frozenset(n for m in re.finditer(r"static_range\(([^()\n]*)\)", text)
                                       for n in re.findall(r"[A-Za-z_]\w*", m.group(1)) if n in params),
                    tiles=frozenset(tile_names(kernel, src, reshapes=False) & params))


def tile_names(kernel, src, reshapes: bool = True) -> set[str]:
    """The names in the ends of `kernel`'s `tl.arange` calls, the shapes of its `tl.zeros` / `tl.full`, the
    block shapes of its `tl.make_block_ptr` (written by position too) (and with `reshapes` of its
    `tl.reshape` / `tl.broadcast_to`: a helper's split `(ROWS, WARPS, 32)` names counts that are no tiles
    of the kernel that calls it)."""
    out: set[str] = set()
    for c in kernel.calls:
        node = c.arg(1, "end") if c.name == "arange" else c.arg(0, "shape") if c.name in ("zeros", "full") else \
            c.arg(4, "block_shape") if c.name == "make_block_ptr" else \
            c.arg(1, "shape") if reshapes and c.name in ("reshape", "broadcast_to") else None
        if node is not None:
            out |= set(re.findall(r"[A-Za-z_]\w*", src.text_of(node)))
    return out


_W = r"([A-Za-z_]\w*)"
# `if X:`, `elif not X:`, `a if X else b`, `not X`, `X and …`, `… or X` (X alone, not X.attr or X(…))
_CONDITIONS = (rf"\b(?:if|elif|while)\s+(?:not\s+)?{_W}\s*(?::|\belse\b)", rf"\bnot\s+{_W}\b(?!\s*[.(\[])",
               rf"\b(?:and|or)\s+{_W}\b(?!\s*[.(\[=<>!+*/-])", rf"(?<![.\w]){_W}\s+(?:and|or)\b")
_SHIFTED = rf"(?:<<|>>)\s*\(?\s*{_W}\b"
_STRING = re.compile(rf"\b({'|'.join(_STRING_KEYWORDS)})\s*=\s*{_W}\b")


def conditions(text: str) -> set[str]:
    """The names `text` tests as a condition (one pass per pattern, not per name)."""
    return {m.group(1) for p in _CONDITIONS for m in re.finditer(p, text)}


def _pointer_bases(kernel, src) -> set[str]:
    """Locals the kernel loads or stores through directly (`tl.load(in_ptr + offs)`)."""
    out = set()
    for c in kernel.calls:
        if c.name in ("load", "store") or c.name.startswith("atomic_"):
            node = c.arg(0, "pointer")
            while node is not None and node.type in ("binary_operator", "parenthesized_expression"):
                node = node.child_by_field_name("left") or (node.named_children[0] if node.named_children else None)
            if node is not None and node.type == "identifier":
                out.add(src.text_of(node))
    return out


def _assignment_reads(kernel, src) -> dict[str, list[tuple[set, bool, str | None]]]:
    """{local: [(names its value reads, whether the value is a sum, the bare name it copies)]}."""
    out: dict[str, list] = {}
    for name, assigns in kernel.assignments.items():
        for a in assigns:
            value = a.value
            if value is None:
                continue
            while value.type == "parenthesized_expression" and value.named_children:
                value = value.named_children[0]
            # `p += step` moves p by step: a sum, never a copy of step into p
            is_sum = a.augmented in ("+=", "-=") or (
                value.type == "binary_operator" and src.text_of(value.child_by_field_name("operator")) in "+-")
            bare = src.text_of(value) if value.type == "identifier" and not a.augmented else None
            out.setdefault(name, []).append((_names(value, src), is_sum, bare))
    return out


def _names(node, src) -> set[str]:
    """The identifiers of an expression, without a call's arguments (`tl.load(...)`'s result is
    data) but with a method call's object (`(offs // D).to(tl.int64)` reads offs and D)."""
    out: set[str] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if n.type == "identifier":
            out.add(src.text_of(n))
        elif n.type == "call":
            fn = n.child_by_field_name("function")
            if fn is not None and fn.type == "attribute":
                todo.append(fn.child_by_field_name("object"))
        elif n.type == "attribute":
            todo.append(n.child_by_field_name("object"))
        elif n.type == "keyword_argument":
            continue
        else:
            todo.extend(n.named_children)
    return out


def string_default(use: ParamUse, name: str) -> tuple[str, str] | None:
    """(the API's default, the keyword) for a name the kernel passes as an API's string, or None."""
    return next(((_STRING_KEYWORDS[k], k) for n, k in sorted(use.string) if n == name), None)
