"""Parsing and position bookkeeping: tree-sitter trees over UTF-8 bytes, ranges in code points."""

from __future__ import annotations

import itertools
import operator
from functools import lru_cache

import tree_sitter
import tree_sitter_python

from .findings import Position, Range


@lru_cache(maxsize=1)
def _language() -> tree_sitter.Language:
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


def reparse(parser: tree_sitter.Parser, old_data: bytes, old_tree: tree_sitter.Tree,
            new_data: bytes) -> tuple[tree_sitter.Tree, bool]:
    """Parse `new_data` reusing `old_tree` (left untouched); returns (tree, reused).

    The changed span is found by common prefix and suffix, so callers need not track edits; an
    edit in one kernel re-parses only around it. Text with syntax errors is parsed in full: error
    recovery from reused subtrees may settle differently, and a model of broken code must not
    depend on the edit history.
    """
    start = _common_prefix(old_data, new_data)
    suffix = _common_suffix(old_data, new_data, min(len(old_data), len(new_data)) - start)
    old_end, new_end = len(old_data) - suffix, len(new_data) - suffix
    edited = old_tree.copy()
    edited.edit(
        start_byte=start, old_end_byte=old_end, new_end_byte=new_end,
        start_point=_point(new_data, start), old_end_point=_point(old_data, old_end),
        new_end_point=_point(new_data, new_end),
    )
    tree = parser.parse(new_data, edited)
    if tree.root_node.has_error:
        return parser.parse(new_data), False
    return tree, True


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
