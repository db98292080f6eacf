"""Parsing and position bookkeeping: tree-sitter trees over UTF-8 bytes, ranges in code points."""

from __future__ import annotations

import itertools
import operator
import threading
from functools import lru_cache

import tree_sitter

from .findings import Position, Range


@lru_cache(maxsize=1)
def _language() -> tree_sitter.Language:
    import tree_sitter_python  # its import costs more than the rest of an empty `tritonlens check`

    return tree_sitter.Language(tree_sitter_python.language())


def new_parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(_language())


class Source:
    """A document: its text, its bytes and its tree, with byte→code-point conversion.

    tree-sitter reports byte columns; editors and our findings count code points, so every
    position goes through `pos`.
    """

    def __init__(self, text: str, tree: tree_sitter.Tree | None = None, parser: tree_sitter.Parser | None = None,
                 data: bytes | None = None):
        # Lone surrogates (from broken clients) cannot be encoded: keep positions by replacing them.
        self.text = text
        self.data = data if data is not None else text.encode("utf-8", errors="surrogatepass")
        self.tree = tree if tree is not None else (parser or new_parser()).parse(self.data)
        self._line_starts: list[int] | None = None
        self._ascii = len(self.data) == len(text)
        # Rules, the model and shape inference ask for the same nodes' text over and over (every
        # identifier, per rule, per configuration, per loop pass): nodes hash by identity in the
        # tree, so a dict lookup replaces slicing and decoding.
        self._texts: dict = {None: ""}
        self._dotted: dict = {}
        self._ranges: dict = {}  # Range is frozen: one per node, shared by every rule that reports it
        self.node_memo: dict[str, dict] = {}  # per-node facts derived from the tree alone, by consumer

    def memo_for(self, what: str) -> dict:
        """A dict for facts about this tree's nodes (keyed by node), shared by every analysis of it."""
        d = self.node_memo.get(what)
        if d is None:
            d = self.node_memo[what] = {}
        return d

    @property
    def root(self) -> tree_sitter.Node:
        return self.tree.root_node

    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            # Line i starts after the lengths of lines 0..i-1 plus their i newlines.
            lengths = itertools.accumulate(map(len, self.data.split(b"\n")), initial=0)
            self._line_starts = list(map(operator.add, lengths, range(self.data.count(b"\n") + 1)))
        return self._line_starts

    def line_bytes(self, line: int) -> bytes:
        starts = self.line_starts()
        if line >= len(starts):
            return b""
        end = starts[line + 1] - 1 if line + 1 < len(starts) else len(self.data)
        return self.data[starts[line]:end]

    def line_text(self, line: int) -> str:
        return self.line_bytes(line).decode("utf-8", errors="replace").rstrip("\r")

    def pos(self, point) -> Position:
        row, col = point
        if self._ascii or col == 0:
            return Position(row, col)
        prefix = self.line_bytes(row)[:col]
        return Position(row, len(prefix.decode("utf-8", errors="replace")))

    def range(self, node) -> Range:
        r = self._ranges.get(node)
        if r is None:
            if self._ascii:
                (sl, sc), (el, ec) = node.start_point, node.end_point
                r = Range(Position(sl, sc), Position(el, ec))
            else:
                r = Range(self.pos(node.start_point), self.pos(node.end_point))
            self._ranges[node] = r
        return r

    def span(self, first, last) -> Range:
        return Range(self.pos(first.start_point), self.pos(last.end_point))

    def text_of(self, node) -> str:
        t = self._texts.get(node)
        if t is None:
            t = self._texts[node] = self.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")
        return t

    def line_range(self, line: int) -> Range:
        text = self.line_text(line)
        indent = len(text) - len(text.lstrip())
        return Range(Position(line, indent), Position(line, len(text)))


@lru_cache(maxsize=64)
def _query(pattern: str) -> tree_sitter.Query:
    return tree_sitter.Query(_language(), pattern)


def captures(node, pattern: str, name: str) -> list:
    """Nodes captured as `@name` by `pattern` inside `node`, in document order.

    Queries run in tree-sitter's C code: far cheaper than walking nodes from Python, which
    is what keeps a 2,000-line file's analysis within a few tens of milliseconds.
    """
    if isinstance(node, Root):
        return [n for top in node.named_children for n in captures(top, pattern, name)]
    cursor = tree_sitter.QueryCursor(_query(pattern))
    cursor.set_byte_range(node.start_byte, node.end_byte)
    found = cursor.captures(node).get(name, [])
    if len(found) > 1:
        found.sort(key=lambda n: (n.start_byte, -n.end_byte))
    return found


def _common_prefix(a: bytes, b: bytes) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search on slice equality: C-speed comparisons, O(log n) of them
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid:] == b[len(b) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _point(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset)
    start = data.rfind(b"\n", 0, offset) + 1
    return line, offset - start


def reparse(parser: tree_sitter.Parser, old_data: bytes, old_tree, new_data: bytes) -> tuple[object, bool]:
    """Parse `new_data` reusing `old_tree` (left untouched); returns (tree, reused).

    The changed span is found by common prefix and suffix, so callers need not track edits. An
    edit inside one top-level statement re-parses that statement alone (`SegmentedTree`);
    otherwise tree-sitter re-parses incrementally from the previous tree. Text with syntax
    errors is parsed in full: error recovery from reused subtrees may settle differently, and a
    model of broken code must not depend on the edit history.
    """
    start = _common_prefix(old_data, new_data)
    suffix = _common_suffix(old_data, new_data, min(len(old_data), len(new_data)) - start)
    old_end, new_end = len(old_data) - suffix, len(new_data) - suffix
    edit = dict(
        start_byte=start, old_end_byte=old_end, new_end_byte=new_end,
        start_point=_point(new_data, start), old_end_point=_point(old_data, old_end),
        new_end_point=_point(new_data, new_end),
    )
    segmented = SegmentedTree.after_edit(old_tree, new_data, edit)
    if segmented is not None:
        return segmented, True
    base = old_tree.base if isinstance(old_tree, SegmentedTree) else old_tree
    edited = base.copy()
    edited.edit(**edit)
    tree = parser.parse(new_data, edited)
    if tree.root_node.has_error:
        return parser.parse(new_data), False
    return tree, True


_chunk_parsers = threading.local()
MAX_SEGMENTS = 24  # beyond this many pieces, the next structural edit parses the file whole again


def _chunk_parser() -> tree_sitter.Parser:
    p = getattr(_chunk_parsers, "parser", None)
    if p is None:
        p = _chunk_parsers.parser = new_parser()
    return p


class SegmentedTree:
    """A document's tree kept as pieces: each top-level statement is a node of some tree-sitter
    tree, all of them at their current byte and point positions.

    tree-sitter's incremental reparse of a 2,000-line file costs about 2.4 ms whatever the edit
    (a reparse with no edit at all costs the same: it re-lexes far beyond the edit). Python's
    top-level statements parse independently, so an edit inside one statement re-parses only
    that statement's bytes (`included_ranges`), about 0.2 ms, and the other statements keep their
    nodes, shifted by `Tree.edit`. `base` is the last whole-file tree with every later edit
    applied, for the incremental reparse when an edit is not inside one statement.
    """

    def __init__(self, base: tree_sitter.Tree, pieces: list, data: bytes):
        self.base = base
        self.pieces = pieces  # [(tree, [index in tree.root_node.named_children, ...])], in document order
        nodes = []
        for tree, indexes in pieces:
            kids = tree.root_node.named_children
            nodes.extend(kids[i] for i in indexes)
        self.root_node = Root(nodes, len(data), _point(data, len(data)))

    @classmethod
    def after_edit(cls, old, new_data: bytes, edit: dict) -> "SegmentedTree | None":
        """The tree of `new_data` when `edit` lies inside one top-level statement that still
        parses as one statement of the same kind on its own; None otherwise."""
        if isinstance(old, SegmentedTree):
            pieces = old.pieces
            base = old.base
        else:
            if old.root_node.has_error:
                return None
            pieces = [(old, list(range(old.root_node.named_child_count)))]
            base = old
        if len(pieces) > MAX_SEGMENTS:
            return None
        s, old_e, new_e = edit["start_byte"], edit["old_end_byte"], edit["new_end_byte"]
        # The statement holding the edit: it starts before the edit (an edit at its very start may
        # merge it with what precedes) and ends at or after the edit's old end.
        target = None
        for p, (tree, indexes) in enumerate(pieces):
            kids = tree.root_node.named_children
            for j, i in enumerate(indexes):
                n = kids[i]
                if n.start_byte < s and old_e <= n.end_byte:
                    if target is not None:
                        return None
                    target = (p, j, n)
        if target is None:
            return None
        p, j, node = target
        if node.type == "comment" or node.start_point[1] != 0:
            return None  # a comment may become code that joins its neighbours; `a = 1; b = 2`
        delta = new_e - old_e
        c_start, c_end = node.start_byte, node.end_byte + delta
        end_point = _point(new_data, c_end)
        parser = _chunk_parser()
        parser.included_ranges = [tree_sitter.Range(node.start_point, end_point, c_start, c_end)]
        chunk = parser.parse(new_data)
        kids = chunk.root_node.named_children
        if (chunk.root_node.has_error or len(kids) != 1 or kids[0].type != node.type
                or kids[0].start_byte != c_start or kids[0].end_byte != c_end):
            return None
        # The statements after it are unchanged bytes that started a statement before the edit; the
        # edited one cannot now run on into them, since a trailing backslash or an open bracket
        # is an error in its own parse above.
        new_pieces = []
        edited_trees = {}
        for q, (tree, indexes) in enumerate(pieces):
            t2 = edited_trees.get(id(tree))
            if t2 is None:
                t2 = tree.copy()
                t2.edit(**edit)
                edited_trees[id(tree)] = t2
            if q != p:
                new_pieces.append((t2, indexes))
                continue
            if indexes[:j]:
                new_pieces.append((t2, indexes[:j]))
            new_pieces.append((chunk, [0]))
            if indexes[j + 1:]:
                new_pieces.append((t2, indexes[j + 1:]))
        new_base = edited_trees.get(id(base))
        if new_base is None:
            new_base = base.copy()
            new_base.edit(**edit)
        # Neighbouring pieces of one tree are merged back, so the piece count tracks the number of
        # statements edited, not the number of edits.
        merged = []
        for tree, indexes in new_pieces:
            if merged and merged[-1][0] is tree:
                merged[-1] = (tree, merged[-1][1] + indexes)
            else:
                merged.append((tree, indexes))
        return cls(new_base, merged, new_data)


class Root:
    """The module node of a `SegmentedTree`: its top-level statements come from several trees."""

    type = "module"
    grammar_name = "module"
    is_named = True
    is_missing = False
    is_error = False
    parent = None
    start_byte = 0

    def __init__(self, nodes: list, size: int, end_point: tuple):
        self.named_children = nodes
        self.children = nodes
        self.end_byte = size
        self.start_point = tree_sitter.Point(0, 0)
        self.end_point = tree_sitter.Point(*end_point)

    @property
    def named_child_count(self) -> int:
        return len(self.named_children)

    @property
    def child_count(self) -> int:
        return len(self.children)

    @property
    def has_error(self) -> bool:
        return any(n.has_error for n in self.named_children)

    def child_by_field_name(self, name):
        return None

    def children_by_field_name(self, name):
        return []

    def named_child(self, i):
        return self.named_children[i]

    def child(self, i):
        return self.children[i]

    def __str__(self) -> str:
        # The S-expression of the module node tree-sitter would give for the whole text.
        return "(module" + "".join(" " + str(n) for n in self.named_children) + ")" if self.named_children else "(module)"

    def descendant_for_point_range(self, start, end):
        for n in self.named_children:
            if tuple(n.start_point) <= tuple(start) and tuple(end) <= tuple(n.end_point):
                return n.descendant_for_point_range(start, end)
        return self


def children_of_type(node, *types: str):
    return [c for c in node.named_children if c.type in types]


def walk(node, stop_at: tuple[str, ...] = ()):
    """Pre-order walk of named descendants (the node itself excluded), not entering `stop_at` types."""
    stack = list(reversed(node.named_children))
    while stack:
        n = stack.pop()
        yield n
        if n.type not in stop_at:
            stack.extend(reversed(n.named_children))


def dotted_name(node, src: Source) -> str | None:
    """`tl.math.exp` → "tl.math.exp"; None for anything that is not a plain attribute chain."""
    memo = src._dotted
    if node in memo:
        return memo[node]
    memo[node] = out = _dotted_name(node, src)
    return out


def _dotted_name(node, src: Source) -> str | None:
    parts = []
    while node is not None and node.type == "attribute":
        attr = node.child_by_field_name("attribute")
        parts.append(src.text_of(attr))
        node = node.child_by_field_name("object")
    if node is None or node.type != "identifier":
        return None
    parts.append(src.text_of(node))
    return ".".join(reversed(parts))
