"""Document snapshots and position conversion between the engines and the client.

The engines count columns in Unicode code points of the analyzed text; the client counts in
the negotiated position encoding (UTF-16 unless it offered another). Conversions always use
the lines of the snapshot that was analyzed, never the live document, which may have moved on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from lsprotocol import types
from pygls.uris import to_fs_path
from tritonlens.analysis.findings import Position, Range
from tritonlens.analysis.prefilter import may_hold_kernels  # noqa: F401  (features ask this module)

UTF8 = types.PositionEncodingKind.Utf8
UTF16 = types.PositionEncodingKind.Utf16
UTF32 = types.PositionEncodingKind.Utf32


def _units(text: str, encoding) -> int:
    if text.isascii():
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", errors="surrogatepass"))
    if encoding == UTF32:
        return len(text)
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


@dataclass(frozen=True)
class Snapshot:
    """The text of one document version, as handed to the analyzer."""

    uri: str
    version: int | None
    text: str
    encoding: str = UTF16

    @cached_property
    def lines(self) -> list[str]:
        return [ln.rstrip("\r") for ln in self.text.split("\n")]

    @cached_property
    def path(self) -> str | None:
        return to_fs_path(self.uri)

    # -- engine (code points) -> client units
    def position(self, pos: Position) -> types.Position:
        if pos.line >= len(self.lines):
            # Past the end: the end of the last line is the closest position that exists.
            last = len(self.lines) - 1
            return types.Position(line=last, character=_units(self.lines[last], self.encoding))
        line = self.lines[pos.line]
        col = min(max(pos.column, 0), len(line))
        return types.Position(line=pos.line, character=_units(line[:col], self.encoding))

    def range(self, rng: Range) -> types.Range:
        return types.Range(start=self.position(rng.start), end=self.position(rng.end))

    # -- client units -> engine (code points)
    def engine_position(self, pos: types.Position) -> Position:
        if pos.line >= len(self.lines):
            return Position(len(self.lines) - 1, len(self.lines[-1]))
        line = self.lines[pos.line]
        if line.isascii() or self.encoding == UTF32:
            return Position(pos.line, min(pos.character, len(line)))
        units = 0
        for i, ch in enumerate(line):
            if units >= pos.character:
                return Position(pos.line, i)
            units += _units(ch, self.encoding)
        return Position(pos.line, len(line))

    def engine_range(self, rng: types.Range) -> Range:
        return Range(self.engine_position(rng.start), self.engine_position(rng.end))


def snapshot_of(ls, uri: str) -> Snapshot | None:
    """The current text of an open document, or None when the client has not opened it."""
    doc = ls.workspace.text_documents.get(uri)
    if doc is None:
        return None
    return Snapshot(uri=uri, version=doc.version, text=doc.source, encoding=ls.workspace.position_encoding or UTF16)


@dataclass
class DocumentState:
    """What the server knows about one open document."""

    uri: str
    analyzed: Snapshot | None = None  # the snapshot of the last finished analysis
    result: object | None = None  # the engine's AnalysisResult for `analyzed`
    settings_key: tuple | None = None
    published_version: int | None = None
    # Diagnostics from other producers (profiling, compiling), keyed by producer.
    extra: dict[str, list[types.Diagnostic]] = field(default_factory=dict)
    generation: int = 0  # bumped whenever anything shown for this document changes
    diag_cache: dict = field(default_factory=dict)  # id(Finding) -> (Finding, lines, Diagnostic)
    diag_cache_uri: tuple | None = None
    # kernel name -> (first line, findings) of its last version that parsed (held_findings)
    held: dict = field(default_factory=dict)

    def current_for(self, snap: Snapshot, settings_key: tuple) -> bool:
        return (
            self.analyzed is not None
            and self.analyzed.version == snap.version
            and self.analyzed.text == snap.text
            and self.settings_key == settings_key
        )
