"""Incremental tree-sitter parsing per document, for the server's analyzer.

A full parse of a 2,000-line file costs tens of milliseconds, more than the rest of a one-kernel
re-analysis; re-parsing from the previous tree costs a few. This keeps each document's last tree;
`analysis.source.reparse` finds the edit by comparing the texts and falls back to a full parse
for text with syntax errors, so the result is the tree a full parse would give.
"""

from __future__ import annotations

from tritonlens.analysis.source import new_parser, reparse


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
            tree, reused = reparse(self._parser, old_data, tree, data)
            self.reused += reused
        else:
            tree = self._parser.parse(data, old_tree) if old_tree is not None else self._parser.parse(data)
        if key is not None:
            self._trees[key] = (data, tree)
        return tree

    def forget(self, key: str) -> None:
        self._trees.pop(key, None)
