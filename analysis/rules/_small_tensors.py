"""Tensors too small for a row or batch product into them to pass 2**31 elements: TL006's evidence.
Not a rule (the registry loads `tl*` modules only).

- per-row metadata, by the pointer's name: scales, lengths, index tables, softmax statistics, rotary
  tables, an attention bias or mask that does not walk rows of scores;
- a table the launching function allocates with two dimensions, the second a count
  (`torch.empty(num_reqs, num_steps + 1)`, `x.new_empty(n, cdiv(vocab, 1024))`).
"""

from __future__ import annotations

import re

from . import _host_dtypes as host
from . import _offsets as off

# Row lengths and column counts that are counts of things, not widths of a row.
COUNT = re.compile(r"^(num|n)_(?!col|elem|el$|row)|_num$|^n?[Hh]$|heads?$|topk|groups?$|experts?$|gamma|tiles?$|"
                   r"blocks?$|splits?$|per_|draft|^k$", re.IGNORECASE)
# Tensors of a few values per row (scales, `As`/`Bs` block scales, `x_sf` scale factors, lengths,
# index tables, softmax statistics, rotary cos/sin tables of positions x rotary dim): far below
# 2**31 elements whatever the row stride is.
_SMALL = re.compile(r"scale|meta|lens?(_|$)|seqlen|cu_|indptr|indices|index|idx|ids?(_|$)|table|slope|lse|mean|rstd|"
                    r"stat|count|offsets|position|topk|alpha|beta|gate|^[A-Za-z]?s$|(^|_)(cos|sin|sfs?)(_|$)",
                    re.IGNORECASE)
# A bias or mask is a vector per row or head unless its address walks a tile of rows: then it is an
# attention bias over (batch, heads, queries, keys), as large as the scores.
_MATRIX_META = re.compile(r"bias|mask", re.IGNORECASE)


def per_row_metadata(ctx, base, terms) -> bool:
    """The pointer's name says a few values a row (scales, lengths, tables); a bias or mask unless
    its address walks a tile of rows."""
    if _MATRIX_META.search(base):  # an attention bias or mask is small unless it walks rows of scores
        return not any(off.term_info(ctx, t).ndim == 2 and off.term_info(ctx, t).axis == 0 for t in terms)
    return bool(_SMALL.search(base or "-"))


# A column count that keeps a row short: a literal up to this, a count (`num_steps + 1`, `topk`), or a
# size divided by at least this much (`cdiv(vocab, 1024)`). With a million rows a 1,024-wide table
# holds 2**30 elements.
NARROW = 1024


def narrow_allocation(ctx, base) -> bool:
    """The launching function allocates this pointer's tensor with two dimensions, the second a
    count (`torch.empty(num_reqs, num_steps + 1)`, `new_empty(n, cdiv(vocab, 1024))`): a table of a
    few values a row, which no row index takes past 2**31 elements."""
    dims = host.allocated_dims(ctx, base)
    return dims is not None and len(dims) == 2 and _narrow(ctx, dims[1])


def _narrow(ctx, node) -> bool:
    node = off.strip_parens(node)
    text = ctx.src.text_of(node).replace(" ", "") if node is not None else ""
    if node is None:
        return False
    if node.type == "integer":
        return int(text, 0) <= NARROW
    if node.type == "identifier":  # a count by its name; a letter (`H`, `k`) may be any width
        return len(text) > 2 and bool(COUNT.search(text))
    if node.type == "binary_operator":
        op = ctx.src.text_of(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op in ("+", "-"):  # `num_steps + 1`
            return _narrow(ctx, left) and (right.type == "integer" or _narrow(ctx, right))
        if op == "//" and right is not None and right.type == "integer":
            return int(ctx.src.text_of(right), 0) >= NARROW
    m = re.fullmatch(r"(?:triton\.)?cdiv\([^,]+,(\d+)\)", text)
    return bool(m) and int(m.group(1)) >= NARROW
