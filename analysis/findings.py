"""What a rule reports: editor-free value types shared by the CLI, the server and the compiler rules.

Positions are 0-based (line, column) with columns counted in Unicode code points of the line,
like Python's own str indexing; the CLI converts to 1-based, the server to the client's encoding.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum

# Characters a finding's message may take, merged suffixes included: one line of VS Code's Problems
# panel or Neovim's virtual text. Messages are plain text (LSP shows no markdown there): names are
# written bare and code in 'single quotes'; the reasoning belongs in the rule's page.
MESSAGE_LIMIT = 120


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    HINT = "hint"


@dataclass(frozen=True, order=True)
class Position:
    line: int
    column: int


@dataclass(frozen=True, order=True)
class Range:
    start: Position
    end: Position

    @classmethod
    def of(cls, sl: int, sc: int, el: int, ec: int) -> "Range":
        return cls(Position(sl, sc), Position(el, ec))


@dataclass(frozen=True)
class TextEdit:
    """Replace `range` of the analyzed text with `new_text`."""

    range: Range
    new_text: str


class Applicability(str, Enum):
    """How far a fix can be trusted without a person reading it (ruff's three levels).

    SAFE: keeps what the code computes wherever the original was defined; `check --fix` applies it.
    UNSAFE: changes results, types or the launch on purpose; applied only with `--unsafe-fixes`,
    offered in the editor but not as the preferred action.
    DISPLAY_ONLY: an edit to show, never applied automatically.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"

    def applies(self, unsafe: bool = False) -> bool:
        """Whether an automatic fixer applies it (`unsafe`: the user opted into unsafe fixes)."""
        return self is Applicability.SAFE or (unsafe and self is Applicability.UNSAFE)


@dataclass(frozen=True)
class Fix:
    title: str  # e.g. "accumulate in float32"; the server prefixes "tritonlens (TL005): "
    edits: tuple[TextEdit, ...]
    applicability: Applicability


@dataclass(frozen=True)
class Related:
    """Another place that explains the finding, e.g. the launch that gave BLOCK_SIZE=4."""

    range: Range
    message: str


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    message: str
    range: Range
    kernel: str | None = None
    fix: Fix | None = None
    related: tuple[Related, ...] = ()
    # Anything else a consumer may need (values seen, configuration names). JSON-serializable.
    data: dict = field(default_factory=dict, compare=False, hash=False)

    def to_json(self, path: str | None = None) -> dict:
        """The CLI's JSON contract: 1-based lines and columns."""
        out = {
            "path": path,
            "line": self.range.start.line + 1,
            "column": self.range.start.column + 1,
            "end_line": self.range.end.line + 1,
            "end_column": self.range.end.column + 1,
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "kernel": self.kernel,
        }
        return out

    def as_dict(self) -> dict:
        """Full structured form (0-based) for the server and other tools."""
        d = asdict(self)
        d["severity"] = self.severity.value
        if self.fix is not None:
            d["fix"]["applicability"] = self.fix.applicability.value
        return d


def fix_edits(findings, unsafe: bool = False) -> list[TextEdit]:
    """The edits of the fixes an automatic fixer applies: safe ones, and unsafe ones if `unsafe`."""
    return [e for f in findings if f.fix is not None and f.fix.applicability.applies(unsafe) for e in f.fix.edits]


def apply_edits(text: str, edits: list[TextEdit] | tuple[TextEdit, ...]) -> str:
    """Apply non-overlapping edits to `text`; overlapping later edits are dropped."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))

    def off(p: Position) -> int:
        if p.line >= len(lines):
            return len(text)
        line = lines[p.line].rstrip("\r\n")
        return offsets[p.line] + min(p.column, len(line))

    spans = sorted(((off(e.range.start), off(e.range.end), e.new_text) for e in edits), key=lambda s: (s[0], s[1]))
    out, pos = [], 0
    for start, end, new in spans:
        if start < pos:
            continue  # overlaps an edit already applied
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)
