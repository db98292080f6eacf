"""A file's top level as the per-kernel cache sees it: the kernels, what launches them, the
helpers and constants they reach, and how the file imports Triton.

`regions` names the top-level statements a kernel's findings depend on; their text (not their
position) is what the engine keys a kernel's cached result on.

A name may be defined more than once (`if HAS_TMA: @triton.jit def k…  else: @triton.jit def k…`):
each definition is an entry of its own, checked at its own lines; by name (`kernels`, `jit`, what a
launch or a call of that name reaches) the last definition in the file is the one that counts.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field

from .model import (
    Aliases,
    Rebinding,
    collect_aliases,
    is_kernel_definition,
    module_level_statements,
    rebindings,
    rebound_after,
)
from .source import Source, captures

# Bytes that cannot be part of a Python identifier become spaces (UTF-8 bytes of non-ASCII
# identifiers stay), so `bytes.split()` yields a statement's words.
_NON_WORD = bytes(c if c >= 0x80 or chr(c).isalnum() or c == 0x5F else 0x20 for c in range(256))


@functools.lru_cache(maxsize=4096)
def _launch_re(name: str) -> re.Pattern:
    """`name[` or a wrapped launch's `(name, ...)[` (wrap_triton(name)[grid]: launches.py)."""
    word = re.escape(name.encode())
    return re.compile(rb"(?<![\w.])" + word + rb"\s*\[|\(\s*" + word + rb"\s*(?:,[^()\n]*)?\)\s*\[")


def _closure(key: str, uses: dict[str, set[str]]) -> list[str]:
    """Top-level functions the definition `key` refers to, directly or through the jit helpers it
    refers to (a helper by name: its last definition)."""
    out, todo = set(), list(uses.get(key, ()))
    while todo:
        n = todo.pop()
        if n in out or n == key:
            continue
        out.add(n)
        todo.extend(uses.get(n, ()))
    return sorted(out)


def aliases_key(al: Aliases) -> str:
    """The aliases as text that does not depend on the order their sets were filled in."""
    parts = []
    for f in dataclasses.fields(al):
        v = getattr(al, f.name)
        parts.append(repr(sorted(v.items()) if isinstance(v, dict) else sorted(v)))
    return ";".join(parts)


@dataclass
class LayoutMemo:
    """What reading the last version's top level found that the next version can reuse."""

    words: dict[bytes, frozenset] = field(default_factory=dict)  # top-level statement → its words
    decorators: dict[bytes, bool] = field(default_factory=dict)  # decorator lines → whether they make a kernel
    decorators_for: str = ""  # the aliases those answers hold for


@dataclass
class Layout:
    aliases: Aliases
    kernels: dict[str, tuple]  # name → (outer, fn, decorators, name): the last definition, in first-definition order
    # Every definition, in source order: entry key → (outer, fn, decorators, name). The key of a
    # name's last definition is the name, those of earlier ones `name#1`, `name#2`, … (`entry_key`).
    entries: dict[str, tuple]
    functions: dict[str, object]
    plain: dict[str, object]  # undecorated top-level functions (TL019 reads their names)
    jit: dict[str, tuple]  # last definition of each @triton.jit name → (fn, src) (shape inference inlines them)
    jit_outer: dict[str, object]
    constants: dict[str, list]  # module constant → right-hand sides
    constant_stmts: dict[bytes, list]  # module constant → its assignment statements
    roots: dict[str, list]  # kernel → top-level statements holding `name[` launches
    uses: dict[str, set[str]]  # entry key → top-level functions its text mentions
    words: dict[int, frozenset]  # id(top-level node) → its words


def entry_key(name: str, later: int) -> str:
    """The entry key of a definition of `name` followed by `later` other definitions of it."""
    return name if later == 0 else f"{name}#{later}"


# Conditions outside the jit functions: rules read a size's guards anywhere in the file (an assert
# in a caller of the launching function, a predicate another function tests), so every kernel's
# findings depend on them. Those inside jit functions are in their own definitions' text already.
_GUARDS = ("[(assert_statement) @g (if_statement condition: (_) @g) (elif_clause condition: (_) @g)"
           " (comparison_operator) @g]")


def guards_key(src, lay: Layout) -> bytes:
    """The text of every assert and condition outside the file's jit functions."""
    inside = sorted((n.start_byte, n.end_byte) for n in [*lay.jit_outer.values(), *(e[0] for e in lay.entries.values())])
    out = []
    for n in captures(src.root, _GUARDS, "g"):
        if not any(a <= n.start_byte and n.end_byte <= b for a, b in inside):
            out.append(src.data[n.start_byte:n.end_byte])
    return b"|".join(out)


def regions(lay: Layout, key: str) -> tuple[list[tuple[bytes, object]], list[str]]:
    """What the findings of the kernel definition `key` (an entry key; a name for its last
    definition) depend on, tagged, in a fixed order: the definition, the statements launching its
    name, the jit helpers it reaches and the module constants any of those mention; and the plain
    functions it calls (only their existence matters)."""
    outer, name = lay.entries[key][0], lay.entries[key][3]
    out = [(b"k", outer)] + [(b"r", r) for r in lay.roots[name]]
    plain = []
    for dep in _closure(key, lay.uses):
        if dep in lay.jit_outer:
            out.append((b"j", lay.jit_outer[dep]))
        else:
            plain.append(dep)
    # Whether another jit function calls it (or hands it to a tl.reduce) decides if it is a device
    # helper (kernel_roles); naming it is the wider test, so the key covers that decision.
    plain.extend(f"<named by {k}>" for k in sorted(lay.uses) if k != key and name in lay.uses[k])
    if lay.constant_stmts:
        names = lay.constant_stmts.keys()
        todo = [w for _, n in out for w in lay.words[id(n)] & names]
        seen: set[bytes] = set()
        stmts = {}
        while todo:
            w = todo.pop()
            if w in seen:
                continue
            seen.add(w)
            for stmt in lay.constant_stmts[w]:
                stmts[id(stmt)] = stmt
                todo.extend(lay.words[id(stmt)] & names)
        out.extend((b"c", s) for s in sorted(stmts.values(), key=lambda s: s.start_byte))
    return out, plain


def read_layout(src: Source, memo: LayoutMemo) -> Layout:
    data = src.data
    aliases = collect_aliases(src)
    text_of = src.text_of
    # Module-level statements, those in module-level if/else/try blocks included (kernels defined
    # per Triton version are kernels); one list, whose nodes are compared by identity below.
    children = list(module_level_statements(src))
    defs = []  # (outer, function_definition, decorators)
    constants: dict[str, list] = {}
    constant_stmts: dict[bytes, list] = {}
    wrapped = rebindings(src)  # `k = triton.jit(k)` after a def: one more decorator of it
    for node in children:
        t = node.type
        if t == "function_definition":
            defs.append((node, node, rebound_after(wrapped, node, src)))
        elif t == "decorated_definition":
            fn = node.child_by_field_name("definition")
            if fn is not None and fn.type == "function_definition":
                defs.append((node, fn, [c for c in node.named_children if c.type == "decorator"] +
                             rebound_after(wrapped, fn, src)))
        elif t == "expression_statement" and node.parent.type == "module":  # module constants, as the model reads them
            a = node.named_children[0] if node.named_children else None
            if a is not None and a.type == "assignment":
                left = a.child_by_field_name("left")
                right = a.child_by_field_name("right")
                if left is not None and left.type == "identifier" and right is not None:
                    name = text_of(left)
                    constants.setdefault(name, []).append(right)
                    constant_stmts.setdefault(name.encode(), []).append(node)

    kernels: dict[str, tuple] = {}
    definitions: list[tuple] = []
    functions: dict[str, object] = {}
    plain: dict[str, object] = {}
    jit: dict[str, tuple] = {}
    jit_outer: dict[str, object] = {}
    # Whether decorators make a kernel depends only on their text and the imports: remembered
    # for this version's definitions, so a keystroke does not re-read every decorator.
    alias_key = aliases_key(aliases)
    if memo.decorators_for != alias_key:
        memo.decorators, memo.decorators_for = {}, alias_key
    jit_memo, jit_now = memo.decorators, {}
    for outer, fn, decorators in defs:
        name_node = fn.child_by_field_name("name")
        if name_node is None:
            continue
        name = text_of(name_node)
        is_kernel = False
        if decorators:
            head = data[outer.start_byte:fn.start_byte] + b"".join(
                data[d.start_byte:d.end_byte] for d in decorators if isinstance(d, Rebinding))
            is_kernel = jit_memo.get(head)
            if is_kernel is None:
                is_kernel = is_kernel_definition(decorators, src, aliases)
            jit_now[head] = is_kernel
        if is_kernel:
            kernels[name] = (outer, fn, decorators, name)
            definitions.append(kernels[name])
            jit[name] = (fn, src)
            jit_outer[name] = outer
        else:
            functions[name] = fn
            if not decorators:
                plain[name] = outer

    # Which top-level names each top-level statement mentions (its words, split in C): a kernel's
    # launches (`name[`) sit in the statements mentioning it, and a kernel mentioning a jit
    # helper or a plain function depends on it (a helper's text and a plain function's
    # existence change the kernel's findings, so they belong to its key).
    later = {name: -1 for name in kernels}
    for d in definitions:
        later[d[3]] += 1
    entries: dict[str, tuple] = {}
    for d in definitions:
        entries[entry_key(d[3], later[d[3]])] = d
        later[d[3]] -= 1
    roots: dict[str, list] = {name: [] for name in kernels}
    uses: dict[str, set[str]] = {}
    outer_keys = {id(d[0]): key for key, d in entries.items()}
    kernel_words = {name.encode(): name for name in roots}
    referable = {name.encode(): name for name in plain} | kernel_words
    known, words_now, words = memo.words, {}, {}
    for node in children:
        chunk = data[node.start_byte:node.end_byte]
        w = known.get(chunk)
        if w is None:
            w = frozenset(chunk.translate(_NON_WORD).split())
        words_now[chunk] = words[id(node)] = w
        own = outer_keys.get(id(node))
        if own is not None:
            own_name = entries[own][3]
            uses.setdefault(own, set()).update(referable[x] for x in w & referable.keys() if referable[x] != own_name)
        for x in w & kernel_words.keys():
            name = kernel_words[x]
            if (own is None or entries[own][3] != name) and _launch_re(name).search(data, node.start_byte, node.end_byte):
                roots[name].append(node)
    # Only this version's statements are remembered: each entry holds a statement's text (a
    # whole kernel while it is typed in) and its words; keeping earlier versions up to a fixed
    # count held ~40 MB after an edit storm.
    memo.words = words_now
    memo.decorators = jit_now
    return Layout(aliases, kernels, entries, functions, plain, jit, jit_outer, constants, constant_stmts, roots, uses,
                  words)
