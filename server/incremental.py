"""Incremental tree-sitter parsing per document.

A full parse of a 2,000-line file costs tens of milliseconds, more than the rest of a one-kernel
re-analysis; re-parsing from the previous tree costs about one. The edit between two versions is
found by comparing the texts (longest common prefix and suffix, by binary search over byte
slices), so it holds whatever the client sent, and the result is the tree a full parse would give (text
with syntax errors is parsed in full: error recovery from reused subtrees may differ).
The previous tree is copied before it is edited: trees of earlier results stay untouched.
"""

from __future__ import annotations

from tritonlens.analysis.source import new_parser


def _common_prefix(a: bytes, b: bytes) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
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
    row = data.count(b"\n", 0, offset)
    return row, offset - (data.rfind(b"\n", 0, offset) + 1)


class IncrementalParser:
    """Parser-like object (`parse(data)`) reusing the last tree of the document being analyzed."""

    def __init__(self):
        self._parser = new_parser()
        self._trees: dict[str, tuple[bytes, object]] = {}
        self.current: str | None = None  # the document the next parse belongs to
        self.reused = 0

    def parse(self, data: bytes, old_tree=None):
        key = self.current
        prev = self._trees.get(key) if key is not None else None
        if old_tree is None and prev is not None:
            old_data, tree = prev
            if old_data == data:
                return tree
            start = _common_prefix(old_data, data)
            suffix = _common_suffix(old_data, data, min(len(old_data), len(data)) - start)
            old_end, new_end = len(old_data) - suffix, len(data) - suffix
            edited = tree.copy()
            edited.edit(start_byte=start, old_end_byte=old_end, new_end_byte=new_end,
                        start_point=_point(data, start), old_end_point=_point(old_data, old_end),
                        new_end_point=_point(data, new_end))
            tree = self._parser.parse(data, edited)
            if tree.root_node.has_error:
                # Error recovery may settle differently when old subtrees are reused; a full
                # parse keeps broken code's model independent of the edit history.
                tree = self._parser.parse(data)
            else:
                self.reused += 1
        else:
            tree = self._parser.parse(data, old_tree) if old_tree is not None else self._parser.parse(data)
        if key is not None:
            self._trees[key] = (data, tree)
        return tree

    def forget(self, key: str) -> None:
        self._trees.pop(key, None)
