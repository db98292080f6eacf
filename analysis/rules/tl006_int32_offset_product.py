"""TL006 — row or batch offset kept in int32

## What it finds
A product in an address (`tl.load`/`tl.store`/atomic pointer, a tensor descriptor's or block
pointer's base, directly or through local variables and `X += ...`; each pointer a program picks
with `tl.where(is_q, xq, cache_k)`; also `X = X + pid_b * stride_xb` in one branch before a later
`X = X + offs`, and a pointer advanced and then handed to a device helper of the file) of an
index that comes from `tl.program_id` and a stride that can make it reach past 2**31 elements,
with no `.to(tl.int64)` / `tl.int64` anywhere in the chain, on either factor (a sequence start
loaded from a varlen table, `tl.load(seq_starts + off_z.to(tl.int64))`, keeps the table's int32):
a program id times a stride over a whole tensor is reported unless something bounds its size.

- a batch, expert or page index (`off_z`, `cur_batch`, `expert_id`, `page`) times its stride
  (`stride_qz`, `k_batch_stride`, `stride_0`) in an address of two or more indices;
- a row or token index times the row stride (`t.stride(0)`, `t.stride(-3)` of packed tokens,
  `o_row_stride`, `stride_cacheM`, `n_cols`, `N`, or a stride picked per program,
  `stride_cm = tl.where(pid_n < n1, stride_cm1, stride_cm2)`) of the tensor: the rows of
  activations (a layernorm's `row * row_stride`, a GEMM's `offs_m * stride_am`, a SwiGLU's gate/up
  rows), KV caches and pools, logits, embeddings (a weight whose row a loaded token id picks), an
  attention bias or mask whose address walks rows of queries
  (`off_b * stride_bb + offs_m[:, None] * stride_bm`);
- a constexpr stride counts when a configuration sets it to a long row (`row * ROW` with
  `ROW=16384`).

Silent where the size is bounded: a layer's own weight (16k × 16k is 2**28), a tile's column axis
and a head or feature index (`off_h * stride_qh` stays inside one batch), the row product when a
batch product of the same address is there (only the batch one is reported; one in the other
branch of an `if` does not count), 1-D addresses (the tensor's size bounds the product), row
lengths that are counts (`topk`, `num_heads`, `n_blocks`) or constexprs shorter than 2048
elements, per-row metadata (scales, lengths, index tables, softmax statistics, rotary cos/sin
tables, a bias per head, and `off_hb * seqlen_q`: one value per position of a sequence), a
workspace of one row per program (`row_block_id * N` where the program loops over the rows from
`row_block_id * rows_per_program`), tile offsets (`pid * BLOCK_SIZE`), files that assert their
sizes stay below int32's range (`assert x.numel() < 2**31`), and addresses where a cast to int64
already appears (`row * stride.to(tl.int64)`, also one a constexpr flag guards:
`if LONG_INDEXING: row = row.to(tl.int64)`).

The message says what 2**31 elements of the tensor take ("4 GiB of fp16") when every launch in the
file shows the tensor's dtype (`torch.empty(..., dtype=torch.float16)`, `x.half()`,
`x.to(torch.bfloat16)`, `torch.empty_like` of such a tensor), and names no dtype otherwise.

## Why
Triton computes `program_id` and integer kernel arguments in int32 (arguments are specialised
to i64 only when the value itself is ≥ 2**31). `row * stride` wraps once the tensor holds more
than 2**31 − 1 elements before that row — 8 GiB of fp32, 4 GiB of fp16 — which today's 80–141
GB GPUs hold easily (a 65536 × 65536 fp16 matrix, a long-context KV cache, 128k tokens × 16k
hidden, 37k tokens of a 57k-wide gate/up projection). The wrapped offset is
negative or small, so the kernel reads or writes the wrong rows without any error. The Triton
matmul tutorial and the fused-attention kernels widen their offsets for this reason
(`.to(tl.int64)`); the cost is a 64-bit multiply-add per program, nothing on a memory-bound
kernel.

## Example
```python
row = tl.program_id(0)
row_logits = logits_ptr + row * logits_row_stride   # TL006: 16k rows of a 128k vocabulary wrap
```

## Fix
Widen before multiplying. The quick fix widens at the source when the program id is assigned on
its own (`row = tl.program_id(0).to(tl.int64)`, which covers every product derived from it),
casts an inline `tl.program_id(0).to(tl.int64) * stride`, and otherwise casts the factor in the
product (`offs_m[:, None].to(tl.int64) * stride_am`). It uses the file's alias for
`triton.language`.
"""

from __future__ import annotations

import re

from .. import message_text as mt
from ..findings import Applicability, Range, Related, Severity, TextEdit
from ..shapes.dtypes import element_bytes
from . import _addresses as addr
from . import _host_dtypes as host
from . import _offsets as off
from . import _small_tensors as small
from .base import KernelContext, RuleInfo

RULE = RuleInfo(
    id="TL006",
    name="int32-offset-product",
    severity=Severity.INFO,
    summary="row or batch offset (program_id × outer stride) kept in int32, no int64 cast",
    fix_title="compute the offset in int64",
    fix_applicability=Applicability.SAFE,
    fix_safety=('Every value that fitted in int32 is unchanged in int64; only the offsets that overflowed, '
                'and were wrong, change.'),
)


def _factors(ctx, node, depth=0):
    node = off.strip_parens(node)
    if node is not None and depth < 12 and node.type == "binary_operator" and ctx.src.text_of(node.child_by_field_name("operator")) == "*":
        return _factors(ctx, node.child_by_field_name("left"), depth + 1) + _factors(ctx, node.child_by_field_name("right"), depth + 1)
    return [node] if node is not None else []


def _int64_params(ctx):
    return {p.name for p in ctx.kernel.params if p.annotation and "int64" in p.annotation}


# How far an index × stride product can reach: over the whole tensor (a batch, expert or page
# index times the outermost stride), over the rows of one batch (a row, token or sequence index),
# or within a row (a head, a column, a feature), which no realistic tensor takes past 2**31.
BATCH, ROW, UNKNOWN_DIM, INNER = 3, 2, 1, 0
_DIM_WORDS = {
    BATCH: {"b", "batch", "batches", "z", "bh", "hz", "zh", "bz", "e", "expert", "experts", "page", "pages", "req",
            "reqs", "request", "0", "outer"},
    ROW: {"row", "rows", "r", "m", "tok", "token", "tokens", "t", "seq", "seqs", "s", "l", "len", "n", "x", "slot",
          "slots", "sample", "samples"},
    INNER: {"h", "head", "heads", "d", "dim", "k", "c", "ch", "channel", "channels", "col", "cols", "column", "w",
            "width", "g", "group", "v",
            "1", "2", "3", "4", "f", "feat", "inner", "y", "q", "p", "kh", "qh", "vh", "oh"},
}
_LAST_LETTER = {"b": BATCH, "z": BATCH, "m": ROW, "r": ROW, "t": ROW, "s": ROW, "n": ROW,
                "h": INNER, "d": INNER, "k": INNER, "c": INNER, "w": INNER, "g": INNER, "v": INNER}
_NOT_A_DIM = {"stride", "strides", "id", "ids", "idx", "index", "offs", "off", "offset", "offsets", "pid", "i", "j",
              "cur", "start", "base", "program", "ptr", "ptrs", "in", "out", "src", "dst", "input", "output", "phys",
              "physical", "logical"}
_TOKEN = re.compile(r"[a-z]+|\d+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z]$)")  # `stride_cachekM`: a last capital names the dimension


def _word_class(word: str, compact: bool) -> int:
    for cls, words in _DIM_WORDS.items():
        if word in words:
            return cls
    if word.endswith("id") and len(word) > 2:  # `bid`, `tid`: a batch id, a token id
        return _word_class(word[:-2], compact)
    if compact and len(word) <= 4 and word[-1] in _LAST_LETTER:  # `stride_kvb`, `stride_qz`, `stride_am`
        return _LAST_LETTER[word[-1]]
    return UNKNOWN_DIM


def _stride_class(name: str) -> int:
    """The dimension a stride parameter walks, from its name: `stride_xb`, `o_row_stride`,
    `stride_0`, `stride_cacheM`. A name without `stride` (`n_cols`, `N`, `HIDDEN`) is a row length:
    a row stride."""
    words = _TOKEN.findall(_CAMEL.sub("_", name).lower())
    if not any(w.startswith("stride") for w in words):
        return ROW
    at = next(i for i, w in enumerate(words) if w.startswith("stride"))
    if words[at] != "stride" and words[at] != "strides":
        return _word_class(words[at][len("stride"):].lstrip("s"), True) if len(words[at]) > 6 else UNKNOWN_DIM
    dim = words[at + 1:][-1:] or words[at - 1:at]
    return _word_class(dim[0], True) if dim else UNKNOWN_DIM


def _index_class(ctx, index) -> int:
    """The dimension an index walks, from its names: `off_b`, `cur_batch`, `pid_m`, `head_id`."""
    names = [n for n in ctx.names_in(index) if n not in ("tl", "None")]
    for name in reversed(names):
        for word in reversed(_TOKEN.findall(name.lower())):
            if word not in _NOT_A_DIM and not word.isdigit():
                cls = _word_class(word, False)
                if cls != UNKNOWN_DIM:
                    return cls
    return UNKNOWN_DIM


def _reach(ctx, index, strides) -> int:
    """How far `index * strides` reaches (BATCH, ROW, UNKNOWN_DIM or INNER)."""
    dims = [off.stride_dim(ctx, node, launch) for n in strides for launch, node in off.launch_args(ctx, n)]
    info = off.term_info(ctx, index)
    idx = _index_class(ctx, index)
    named = max((_stride_class(n) for n in strides), default=UNKNOWN_DIM)
    # `t.stride(-3)` counts from the end: the outermost dimension of a packed (tokens, heads, dim)
    # tensor, a head's rows in (batch, heads, seq, dim); only the names can tell which.
    if dims and all(d is not None and d > -2 for d in dims):
        if 0 in dims:  # `t.stride(0)`: the outermost dimension, a batch or the rows of a matrix
            return BATCH if BATCH in (idx, named) else INNER if idx == INNER else ROW
        return INNER if idx != BATCH else BATCH
    if idx == BATCH:
        return BATCH
    if info.ndim == 2 and info.axis == 1 and not dims:
        return INNER  # a tile's column axis: `offs_n[None, :] * stride_bn`
    if idx == INNER or named == INNER:
        return INNER
    return max(idx, named)


def _products(ctx, base, terms, kinds, wide):
    """(term, index factor, stride names, pid-fed) for each index × stride product of an address's
    `terms`, and how many terms index the tensor besides the base pointer."""
    out, indexing = [], 0
    for term in terms:
        t = off.strip_parens(term)
        if t is None or (t.type == "identifier" and ctx.src.text_of(t) in kinds.pointers | {base}):
            continue
        indexing += 1
        if t.type != "binary_operator":
            continue
        index, strides = None, []
        for f in _factors(ctx, t):
            # a stride a program picks (`tl.where(pid_n < n1, stride_cm1, ...)`) is a stride, named for its dim
            local = ctx.src.text_of(f) if f.type == "identifier" and "stride" in ctx.src.text_of(f).lower() else None
            if local is None and off.is_fed(ctx, f, "program_id"):
                index = index or f
                continue
            names = [n for n in _stride_params(ctx, f, kinds) if n not in wide]
            names = [local, *names] if names and local and not ctx.kernel.param(local) else names
            if names:
                strides = strides or names
            elif index is None and off.is_fed(ctx, f, "arange"):
                index = f
        if index is not None and strides:
            out.append((t, index, strides, off.is_fed(ctx, index, "program_id")))
    return out, indexing


def _stride_params(ctx, factor, kinds) -> list[str]:
    """The parameters a stride factor reads that can make a row long: runtime strides and row
    lengths, and constexprs set to a long row somewhere (`row * STRIDE` with STRIDE=8192 wraps as
    well as `row * n_cols`). Counts (`topk`, `num_heads`) and tile sizes cannot."""
    names = {n for n in off.runtime_params_in(ctx, factor) if "stride" in n.lower() or not small.COUNT.search(n)}
    tiles = {ctx.src.text_of(a.arg(1, "end")) for a in ctx.kernel.calls_named("arange") if a.arg(1, "end") is not None}
    for n in off.depends(ctx, factor):
        if n in tiles or _TILE_NAME.search(n) or n not in kinds.constexpr:
            continue  # `pid * BLOCK`: a tile offset, which the grid bounds by the size
        if _long_constexpr(ctx, n) or (n not in _values_of(ctx, n) and "stride" in n.lower()):
            names.add(n)
    return sorted(names)


_TILE_NAME = re.compile(r"BLOCK|TILE|GROUP|SPLIT|STAGES|WARPS|^B[A-Z]?$", re.IGNORECASE)
LONG_ROW = 2048  # elements: a shorter row needs over a million rows before the offset passes 2**31


def _values_of(ctx, name) -> dict:
    """{name: the values a constexpr takes over the kernel's configurations}, empty when none."""
    vals = [c.get(name) for c in ctx.kernel.configs]
    return {name: vals} if vals and all(isinstance(v, int) for v in vals) else {}


def _long_constexpr(ctx, name) -> bool:
    vals = _values_of(ctx, name).get(name, [])
    return any(v >= LONG_ROW for v in vals)


def check(ctx: KernelContext):
    kinds = off.param_kinds(ctx)
    if not (kinds.runtime or kinds.constexpr) or not ctx.kernel.calls_named("program_id") or _capped(ctx):
        return  # (a file that asserts its sizes fit int32 has bounded every product itself)
    wide = _int64_params(ctx)
    seen, found, moved = set(), [], {}
    for base, terms, extra, hidden in addr.addresses(ctx, kinds):
        products, indexing = _products(ctx, base, terms, kinds, wide)
        reach = {t.id: _reach(ctx, index, strides) for t, index, strides, _ in products}
        found.append((base, terms, extra, hidden, products, indexing, reach))
        if hidden:  # how far the pointer was moved before the access that rebinds it
            moved[base] = max(moved.get(base, INNER), *reach.values(), INNER)
    for base, terms, extra, hidden, products, indexing, reach in found:
        if indexing + extra < 2 or small.per_row_metadata(ctx, base, terms) or small.narrow_allocation(ctx, base):
            continue  # a 1-D tensor (one index: its size bounds the product), or per-row metadata
        large = bool(_LARGE.search(base))
        for t, index, strides, by_pid in products:
            r = reach[t.id]
            # (a batch product in the other branch of an `if` does not take this one's place)
            top = max(INNER, moved.get(base, INNER) if not hidden else INNER,
                      *(reach[o.id] for o, *_ in products if not addr.exclusive(t, o)))
            if t.id in seen or not by_pid or r == INNER or r < top or (r == UNKNOWN_DIM and len(products) > 1):
                continue
            if r != BATCH and not large and _WEIGHT.search(base) and not ctx.definition_calls(index, "load"):
                continue  # a layer's own weight (16k x 16k is 2**28), not an embedding a token id picks
            others = [f for f in _factors(ctx, t) if f.id != index.id]
            if addr.widened(ctx, t, index, others) or _per_position(ctx, t, index) or _per_program(ctx, t, index):
                continue
            seen.add(t.id)
            yield _finding(ctx, t, index, strides, r, host.pointer_dtype(ctx, base))



# A row length that is a sequence length (`off_hb * seqlen_q_rounded`): a tensor of one value per
# position of each sequence (softmax statistics, a scratch row), not of a hidden row per token.
_SEQ_LEN = re.compile(r"^(max_)?(seq_?len|n_ctx|ctx_len)", re.IGNORECASE)


def _per_position(ctx, product, index) -> bool:
    others = [f for f in _factors(ctx, product) if f.id != index.id]
    lengths = [n for n in off.depends(ctx, product) if _SEQ_LEN.search(n) and "stride" not in n.lower()]
    return len(others) == 1 and lengths == [ctx.src.text_of(others[0])]  # not seqlen_q x seqlen_k scores


# A program that walks rows in a loop of its own (`for row in range(row_block_id * rows_per_program,
# ...)`, `for row in tl.range(pid, n_rows, num_progs)`): its bare id times a stride indexes a
# workspace of one row per program (partial weight gradients), as many rows as the grid has.
def _per_program(ctx, product, index) -> bool:
    pid = off.strip_parens(index)
    name = ctx.src.text_of(pid) if pid is not None and pid.type == "identifier" else None
    defs = ctx.kernel.assignments.get(name, [])
    if len(_factors(ctx, product)) != 2 or len(defs) != 1 or "program_id" not in ctx.src.text_of(off.rhs_of(defs[0]) or pid):
        return False
    for loop in ctx.kernel.loops:
        start = off.strip_parens(loop.args[0]) if loop.kind in ("range", "tl.range") and len(loop.args) > 1 else None
        words = _TOKEN.findall((loop.var or "").lower())
        if start is None or not words or _word_class(words[0], False) == INNER:
            continue  # (a split of the K loop walks columns, not rows)
        if ctx.src.text_of(start) == name and len(loop.args) > 2:
            return True  # a grid-stride loop over rows
        starts = ctx.kernel.assignments.get(ctx.src.text_of(start), []) if start.type == "identifier" else []
        start = off.strip_parens(off.rhs_of(starts[0]) if len(starts) == 1 else start)
        start = (off.method_call(start, ctx.src, "to") or [start])[0]  # (`(pid * rows).to(tl.int64)`)
        factors = [ctx.src.text_of(f) for f in _factors(ctx, start)]
        if len(factors) > 1 and name in factors:
            return True
    return False


# Tensors whose rows reach 2**31 elements even where the name says weight: caches and pools of
# every token served, logits and embeddings over the vocabulary, attention scores, stacked expert
# weights. A layer's own weight is not among them: 16k x 16k is 2**28.
_LARGE = re.compile(r"cache|kv|pool|buffer|logit|prob|vocab|embed|lm_head|attn|expert", re.IGNORECASE)
_WEIGHT = re.compile(r"weight|^w\d?(_|$)", re.IGNORECASE)


# An assertion in the file that a tensor's size stays below int32's range (`assert x.numel() <
# 2**31`, `assert rows * x.stride(0) <= 2**31`): the author has bounded what the products reach. A
# bound on a row count alone (`assert n_rows < 2**31`) bounds no product.
_CAP = re.compile(r"^\s*(assert\b|tl\.(static|device)_assert\s*\().*(numel\(|stride|\w\s*\*\s*[A-Za-z_]).*"
                  r"(2\s*\*\*\s*31|2147483647|iinfo\(\s*torch\.int32\s*\)|INT32_MAX|INT_MAX)", re.MULTILINE)


def _capped(ctx) -> bool:
    memo = ctx.src.memo_for("tl006.capped")
    if "file" not in memo:
        memo["file"] = bool(_CAP.search(ctx.src.text))
    return memo["file"]


_REACH_WORDS = {BATCH: "outermost", ROW: "row", UNKNOWN_DIM: "row"}


def _shown(ctx, product, index, strides) -> str:
    text = " ".join(ctx.src.text_of(product).split())
    if len(text) <= 40:
        return mt.code(text, 40)
    return mt.code(f"{mt.clip(ctx.src.text_of(index), 24)} * {strides[0]}", 40)


def _size(dtype: str | None) -> str:
    """' (4 GiB of fp16)': what 2**31 elements of the tensor's dtype take; '' when it is unknown."""
    size = element_bytes(dtype) if dtype else None
    return f" ({2 * size} GiB of {dtype})" if size else ""


def _finding(ctx, product, index, strides, reach, dtype):
    src = ctx.src
    pids = off.feeds(ctx, index, "program_id")
    msg = f"{_shown(ctx, product, index, strides)} is int32 and wraps past 2**31 elements{_size(dtype)}; widen it to int64"
    related = [Related(src.range(pids[0].node), "the program id")]
    p = ctx.kernel.param(strides[0])
    if p is not None:
        related.append(Related(p.range, "the stride"))
    return ctx.finding(src.range(product), msg, fix=_fix(ctx, index, pids), related=related,
                       data={"factors": strides, "reach": _REACH_WORDS[reach], "dtype": "int32", "tensor_dtype": dtype})


def _fix(ctx, pid_side, pids):
    """Widen at the source: `pid = tl.program_id(0)` → `tl.program_id(0).to(tl.int64)` when the
    program id is assigned on its own; otherwise cast the factor in the product."""
    src = ctx.src
    fn = pids[0].node.child_by_field_name("function")
    prefix = src.text_of(fn).rsplit(".", 1)[0] if fn is not None and "." in src.text_of(fn) else "tl"
    cast = f".to({prefix}.int64)"
    # An index loaded from memory (`page = tl.load(slots + pid)`) keeps the table's int32 however
    # wide the program id is: only a cast in the product itself widens it.
    gathered = bool(ctx.definition_calls(pid_side, "load"))
    if len(pids) == 1 and not gathered:
        call = pids[0].node
        parent = call.parent
        if parent is not None and parent.type == "assignment" and parent.child_by_field_name("right").id == call.id:
            end = src.pos(call.end_point)
            return [TextEdit(Range(end, end), cast)]
        if off.strip_parens(pid_side).id == call.id:
            end = src.pos(call.end_point)
            return [TextEdit(Range(end, end), cast)]
    node = pid_side
    end = src.pos(node.end_point)
    if node.type in ("identifier", "subscript", "call", "attribute", "parenthesized_expression"):
        return [TextEdit(Range(end, end), cast)]
    start = src.pos(node.start_point)
    return [TextEdit(Range(start, start), "("), TextEdit(Range(end, end), ")" + cast)]

