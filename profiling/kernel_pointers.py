"""Which parameters of a kernel are pointers, and the element type each one's stand-in tensor gets
when the launch does not say: pointers by name (`*ptr`) or as the base of a load, store, atomic or
block pointer (also through a jit helper the kernel hands them to, or a local alias); integer
pointers by what is done with their loads (indices, packed words); pointers whose element type a
kernel casts to and then bit-shifts (`out_ptr.dtype.element_ty`), which hold integers; and pointers
of `tl.atomic_max` / `tl.atomic_min`, which take no half-precision type.
"""

from __future__ import annotations

import re

from tritonlens.analysis.estimates import base_pointer
from tritonlens.analysis.model import ATOMICS

_IDENT = re.compile(r"[A-Za-z_]\w*")
_POINTER_CALLS = {"load", "store", "make_block_ptr"} | ATOMICS


def pointer_params(kernel, module=None, depth: int = 0, helpers=None) -> set[str]:
    """`helpers` (imported_helpers.Helpers) also finds the jit helpers another file of the project
    defines; without it, those of `module`."""
    params = {p.name for p in kernel.params if not p.is_constexpr}
    out = {n for n in params if n.lower().endswith("ptr")}
    text = joined_lines(kernel.text or "")
    # `W = W.to(tl.pointer_type(tl.uint8))`, `x.to(OUT.dtype.element_ty)`: only a pointer has these
    out |= {n for n in params if re.search(rf"\b{re.escape(n)}\s*\.\s*(?:to\(\s*tl\.pointer_type\(|dtype\."
                                           rf"element_ty\b)", text)}
    if module is not None and depth < 3:
        out |= _passed_to_helpers(kernel, module, params, depth, helpers)
    for c in kernel.calls:
        if c.name not in _POINTER_CALLS:
            continue
        node = c.arg(0, "base") if c.name == "make_block_ptr" else c.arg(0, "pointer")
        try:
            base = base_pointer(kernel, node)
        except Exception:  # noqa: BLE001 - half-typed code: a pointer we cannot trace stays an int
            base = None
        if base in params:
            out.add(base)
    return out


def helper_calls(kernel, module, params: set[str], helpers=None, offset: bool = False):
    """(helper kernel, {its parameter: our parameter}) for each call of a jit helper that hands it
    one of our parameters unchanged, or with `offset` also moved (`dY + row * stride`)."""
    from tritonlens.analysis.kernel_body import split_arguments
    from tritonlens.analysis.source import captures

    src = kernel.src or module.src
    find = helpers.get if helpers is not None else module.kernel
    for call in captures(kernel.node, "(call function: (identifier) @f) @c", "c"):
        helper = find(src.text_of(call.child_by_field_name("function")))
        if helper is None or helper is kernel:
            continue
        args, kwargs = split_arguments(call, src)
        passed = [(helper.params[i].name, a) for i, a in enumerate(args) if i < len(helper.params)]
        passed += list(kwargs.items())
        names = {name: _passed_param(kernel, node, src, offset) for name, node in passed if node is not None}
        yield helper, {name: ours for name, ours in names.items() if ours in params}


def _passed_param(kernel, node, src, offset: bool) -> str | None:
    """The name an argument passes: itself, or with `offset` the left end of a sum (`P + i * s`) or
    the parameter a local address is built on (`K_ptrs = K + offs`, then `inner(K_ptrs)`)."""
    while offset and node.type == "binary_operator" and src.text_of(node.child_by_field_name("operator")) == "+":
        node = node.child_by_field_name("left")
    if node.type != "identifier":
        return None
    name = src.text_of(node)
    if offset and kernel.param(name) is None:
        try:
            return base_pointer(kernel, node) or name
        except Exception:  # noqa: BLE001 - half-typed code: an address we cannot trace passes its own name
            return name
    return name


def _passed_to_helpers(kernel, module, params: set[str], depth: int, helpers=None) -> set[str]:
    """Parameters the kernel hands, unchanged or offset, to a jit helper that loads or stores through
    them (`_norm_block(Qo, Q + row * stride, ...)` whose body loads `Q + offs`): pointers the kernel
    never indexes itself."""
    out: set[str] = set()
    for helper, mapping in helper_calls(kernel, module, params, helpers, offset=True):
        theirs = pointer_params(helper, module, depth + 1, helpers)
        out |= {ours for name, ours in mapping.items() if name in theirs}
    return out


def integer_pointers(kernel, module, pointers: set[str], depth: int = 0) -> dict[str, str]:
    """`_index_pointers` of the kernel and of the jit helpers it hands its pointers to."""
    out = _index_pointers(kernel, pointers)
    if depth >= 3:
        return out
    for helper, mapping in helper_calls(kernel, module, pointers):
        theirs = integer_pointers(helper, module, pointer_params(helper, module, depth + 1), depth + 1)
        for name, ours in mapping.items():
            if name in theirs:
                out.setdefault(ours, theirs[name])
    return out


def _index_pointers(kernel, pointers: set[str]) -> dict[str, str]:
    """Pointers whose loaded values are integers, with the integer type: indices (int64) offset
    another pointer (`ids = tl.load(IDS + i)`, then `LOGITS + ids` or `offs = ids * D + j; T +
    offs`) or bound a loop (`lo = tl.load(LO)`, `range(lo, hi)`): token ids, gather indices, CSR
    offsets, and addresses cast to a pointer type (int64); packed words (int32) are shifted or masked
    (`w >> 4`, `w & 0xF`): quantized weights; values floor-divided (`loc // PAGE`, `tl.cdiv(n, splits)`)
    are int32."""
    src = kernel.src
    text = joined_lines(kernel.text)
    derived = derived_reads(kernel)
    addresses = _address_locals(kernel, pointers)
    out: dict[str, str] = {}
    literal_sums: set[str] = set()
    for c in kernel.calls:
        if c.name != "load":
            continue
        base = _pointer_base(kernel, c)
        if base in pointers and _offsets_a_pointer(kernel, c.node, pointers - {base}):
            out[base] = "int64"  # `P + tl.load(IDX + i)`: an index, used where it is loaded
            continue
        stmt = c.node.parent
        while stmt is not None and stmt.type not in ("assignment", "augmented_assignment", "block", "module"):
            stmt = stmt.parent
        # `total += tl.load(P + i)` holds what P holds, as `x = tl.load(P + i)` does
        left = stmt.child_by_field_name("left") if stmt is not None and stmt.type in (
            "assignment", "augmented_assignment") else None
        if base not in pointers or left is None or left.type != "identifier":
            continue
        if "pointer_type(" in src.text_of(stmt):  # `tl.load(P + i).to(tl.pointer_type(...))`: a table of addresses
            out[base] = "int64"
            continue
        if stmt.type == "augmented_assignment" and any(
                a.value is not None and a.value.type == "integer" for a in kernel.assignments.get(src.text_of(left), ())):
            literal_sums.add(base)  # `n = 0`, then `n += tl.load(P + j)`: a loop-carried int32 stays int32
        if _summed_into_literal(kernel, src.text_of(left)):
            literal_sums.add(base)
        loaded = re.escape(src.text_of(left))
        if re.search(rf"\b{loaded}\b\s*&(?!&)\s*[\w(]", text):
            out.setdefault(base, "int32")  # `(w & mask) >> s`: Triton ands no float (a bool mask's & compiles on int32 too)
        dt = held_type(computed_from({src.text_of(left)}, derived, pointers), (pointers | addresses) - {base}, text)
        if dt == "int64":
            out[base] = dt
        elif dt is not None:
            out.setdefault(base, dt)
    return {**out, **{p: "int32" for p in literal_sums}}


def _address_locals(kernel, pointers: set[str]) -> set[str]:
    """Locals that hold an address built on one of `pointers` (`k_ptrs = K + offs`): an index added
    to one is added to a pointer."""
    out = set()
    for name, assigns in kernel.assignments.items():
        if name in pointers:
            continue
        for a in assigns:
            try:
                if a.value is not None and base_pointer(kernel, a.value) in pointers:
                    out.add(name)
                    break
            except Exception:  # noqa: BLE001 - half-typed code: an address we cannot trace is no address
                break
    return out


def _offsets_a_pointer(kernel, node, others: set[str]) -> bool:
    """Is the load at `node` a term of a sum whose other side is based on one of the `others` pointers?"""
    parent = node.parent
    if parent is None or parent.type != "binary_operator" or kernel.src.text_of(
            parent.child_by_field_name("operator")) != "+":
        return False
    side = parent.child_by_field_name("left" if parent.child_by_field_name("right") == node else "right")
    try:
        return base_pointer(kernel, side) in others
    except Exception:  # noqa: BLE001 - half-typed code: an address we cannot trace says nothing
        return False


def _summed_into_literal(kernel, loaded: str) -> bool:
    """Is the loaded value added, in a loop, to a name that starts as an integer literal (`total = 0`,
    then `total += tl.sum(counts, 0)` with `counts = tl.load(P + offs)`)? Triton keeps a loop-carried
    value's type, so what P holds is an integer: a float there does not compile."""
    src = kernel.src
    for assigns in kernel.assignments.values():
        if not any(a.value is not None and a.value.type == "integer" and not a.augmented for a in assigns):
            continue
        for a in assigns:
            if a.augmented != "+=" or not a.loops or a.value is None:
                continue
            value = src.text_of(a.value)
            if re.search(rf"\b{re.escape(loaded)}\b", value) and not re.search(r"\.to\(|[<>]|==|!=", value):
                return True
    return False


def derived_reads(kernel) -> dict[str, set[str]]:
    """{local: the names its assignments read}."""
    derived: dict[str, set[str]] = {}
    for name, assigns in kernel.assignments.items():
        for a in assigns:
            if a.value is not None:
                derived.setdefault(name, set()).update(_IDENT.findall(kernel.src.text_of(a.value)))
    return derived


def computed_from(names: set[str], derived: dict[str, set[str]], pointers: set[str]) -> set[str]:
    """`names` and the locals computed from them, a few assignments deep (pointers left out)."""
    names = set(names)
    for _ in range(4):
        names |= {n for n, reads in derived.items() if reads & names and n not in pointers}
    return names


def held_type(names: set[str], others: set[str], text: str) -> str | None:
    """The integer type of values held in `names` by what `text` (joined) does with them: int64
    for indices that offset one of the `others` pointers or bound a loop, int32 for packed words
    (shifted, masked with a literal) and for values floor-divided (Triton has no floating `//`, and
    `tl.cdiv` is one)."""
    held = "|".join(re.escape(n) for n in sorted(names))
    ptrs = "|".join(re.escape(q) for q in sorted(others))
    # `LOGITS + ids`, `table + ids * stride`: one address expression (no comma between them).
    address = ptrs and re.search(rf"\b({ptrs})\b[^,\n]*\+[^,\n]*\b({held})\b|"
                                 rf"\b({held})\b[^,\n]*\+\s*\b({ptrs})\b", text)
    if address or re.search(rf"\brange\([^)\n]*\b({held})\b", text):
        return "int64"
    if re.search(rf"\b({held})\b(\[[^\]\n]*\])?\s*(>>|<<)|(>>|<<)\s*\(?\s*\b({held})\b|"
                 rf"\b({held})\b\s*[&|^]\s*(0x[0-9a-fA-F]+|\d+)\b|\b({held})\b\s*//|"
                 rf"\bcdiv\([^)\n]*\b({held})\b", text):
        return "int32"
    return None


def joined_lines(text: str) -> str:
    """`text` without comments, each bracketed expression on one line: an address written over
    several lines (`grad_ptr\n + idx[:, None] * stride`) reads as the one expression it is."""
    out, depth = [], 0
    for line in without_docstrings(text).splitlines():
        code = re.sub(r"#.*", "", line)
        depth = max(depth + _opens(code), 0)
        out.append(code + (" " if depth > 0 else "\n"))
    return "".join(out)


def without_docstrings(text: str) -> str:
    """`text` with each triple-quoted string emptied, its lines kept: a docstring's prose
    (`N * K / (BN * BK)`) is no use of the names it mentions."""
    return re.sub(r'("""|\'\'\')[\s\S]*?\1', lambda m: '""' + "\n" * m.group(0).count("\n"), text)


def _opens(code: str) -> int:
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


def packed_pointers(kernel, pointers: set[str]) -> dict[str, str]:
    """Pointers whose element type the kernel casts values to and then bit-shifts or ors
    (`out_dtype = out_ptr.dtype.element_ty`, `x.to(out_dtype)`, `lo | (hi << 4)`): they hold
    packed integers (int32, as the packed words of `integer_pointers`); a float would not compile."""
    text = joined_lines(kernel.text)
    out = {}
    for p in pointers:
        if f"{p}.dtype.element_ty" not in text:
            continue
        elem = rf"{re.escape(p)}\.dtype\.element_ty"
        types = [elem] + [re.escape(n) for n in re.findall(
            rf"([A-Za-z_]\w*)\s*(?::\s*tl\.constexpr\s*)?=\s*{elem}\b", text)]
        cast: set[str] = set()
        for t in types:
            cast |= set(re.findall(rf"([A-Za-z_]\w*)\s*=[^\n]*\.to\(\s*{t}\s*\)\s*$", text, re.MULTILINE))
        for _ in range(3):  # what is computed from them: `lo, hi = tl.split(out.reshape(...))`
            names = "|".join(re.escape(v) for v in sorted(cast))
            if not names:
                break
            cast |= {n for m in re.finditer(rf"^\s*([\w, ]+?)\s*=[^\n]*\b(?:{names})\b", text, re.MULTILINE)
                     for n in re.split(r"\s*,\s*", m.group(1)) if n}
        if any(re.search(rf"\b{re.escape(v)}\b\s*(?:<<|>>|[|&^](?!=))|(?:<<|>>|[|&^])\s*\(?\s*\b{re.escape(v)}\b", text)
               for v in cast):
            out[p] = "int32"
    return out


def _pointer_base(kernel, call) -> str | None:
    """The name `call`'s pointer argument is based on; None where half-typed code cannot be traced
    (such a pointer keeps its type)."""
    try:
        return base_pointer(kernel, call.arg(0, "pointer"))
    except Exception:  # noqa: BLE001 - half-typed code: a pointer we cannot trace keeps its type
        return None


def atomic_max_pointers(kernel, pointers: set[str]) -> set[str]:
    """Pointers of `tl.atomic_max` / `tl.atomic_min`: Triton has them for 32- and 64-bit types
    only, so a half-precision stand-in would not compile."""
    out = set()
    for c in kernel.calls:
        if c.name in ("atomic_max", "atomic_min"):
            base = _pointer_base(kernel, c)
            if base in pointers:
                out.add(base)
    return out


def lock_pointers(kernel, pointers: set[str]) -> set[str]:
    """Pointers of `tl.atomic_cas` / `tl.atomic_xchg` given integer literals (`atomic_cas(locks + i, 1,
    1)`, `atomic_xchg(flag, 0)`): locks and flags, integers; the literal against a float stand-in
    fails to verify ("'tt.atomic_cas' op failed to verify")."""
    out = set()
    for c in kernel.calls:
        if c.name not in ("atomic_cas", "atomic_xchg"):
            continue
        operands = c.args[1:] + [v for k, v in c.kwargs.items() if k in ("cmp", "val")]
        literal = [a for a in operands if a is not None and a.type == "integer"]
        base = _pointer_base(kernel, c)
        if literal and base in pointers:
            out.add(base)
    return out


def int8_dot_pointers(kernel, pointers: set[str]) -> set[str]:
    """Pointers loaded into the operands of a `tl.dot` that accumulates into int32
    (`acc = tl.zeros(..., dtype=tl.int32)`, `acc += tl.dot(a, b)`): int8 matrices, which is the
    only input an int32 MMA takes."""
    text = joined_lines(kernel.text)
    accs = set(re.findall(r"([A-Za-z_]\w*)\s*=\s*tl\.zeros\([^\n]*dtype\s*=\s*tl\.int32", text))
    operands: set[str] = set()
    for acc in accs:
        a = re.escape(acc)
        # an operand written as an expression (`tl.dot(a, b.to(tl.int8) - one)`) leaves only the other
        for m in re.finditer(rf"\b{a}\s*\+=\s*tl\.dot\(\s*(\w+)\s*,\s*(\w+\b(?![.(]))?|tl\.dot\(\s*(\w+)\s*,\s*(\w+)\s*,\s*"
                             rf"(?:acc\s*=\s*)?{a}\b", text):
            operands |= {g for g in m.groups() if g}
    out = set()
    for c in kernel.calls:
        if c.name != "load" or not operands:
            continue
        stmt = c.node.parent
        while stmt is not None and stmt.type not in ("assignment", "block", "module"):
            stmt = stmt.parent
        left = stmt.child_by_field_name("left") if stmt is not None and stmt.type == "assignment" else None
        if left is None or kernel.src.text_of(left) not in operands:
            continue
        base = _pointer_base(kernel, c)
        if base in pointers:
            out.add(base)
    return out


def negated_pointers(kernel, pointers: set[str]) -> set[str]:
    """Pointers whose loads are negated (`if not tl.load(mask_ptr + b)`, `m = tl.load(M + i)`, then
    `~m` or `not m`): boolean masks. Triton negates no float (a float32 stand-in fails: "Cannot
    bitcast data-type of size 32 to data-type of size 1")."""
    src = kernel.src
    text = joined_lines(kernel.text)
    out = set()
    for c in kernel.calls:
        if c.name != "load":
            continue
        base = _pointer_base(kernel, c)
        if base not in pointers:
            continue
        parent = c.node.parent
        while parent is not None and parent.type == "parenthesized_expression":
            parent = parent.parent
        if parent is not None and (parent.type == "not_operator" or (
                parent.type == "unary_operator" and src.text_of(parent).lstrip().startswith("~"))):
            out.add(base)
            continue
        left = parent.child_by_field_name("left") if parent is not None and parent.type == "assignment" else None
        if left is not None and left.type == "identifier":
            held = re.escape(src.text_of(left))
            if re.search(rf"(?:\bnot\s+|~\s*)\(?\s*{held}\b(?!\s*[\[.(])", text):
                out.add(base)
    return out
