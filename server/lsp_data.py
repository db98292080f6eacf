"""The typed `data` the server attaches to diagnostics and code actions, and the one converter
that turns them (and any lsprotocol type) into JSON and back.

The client echoes `data` back untouched (in `codeAction/resolve`, in the diagnostics of a
code-action request), so what goes out must structure again into the same object: the classes
here are that contract, and the wire keys are their field names.
"""

from __future__ import annotations

from typing import Any

import attrs
from cattrs.strategies import configure_tagged_union
from lsprotocol import types
from pygls.protocol import default_converter

CONVERTER = default_converter()  # lsprotocol's hooks (camelCase keys, omitted Nones) plus pygls's own


def to_json(obj: Any, as_type: Any = None) -> Any:
    """JSON-ready form of `obj`; `as_type` names a union (CodeActionData) to write its tag."""
    return CONVERTER.unstructure(obj) if as_type is None else CONVERTER.unstructure(obj, as_type)


def from_json(data: Any, cls: type):
    """Structure `data` as `cls`; raises cattrs' errors (ClassValidationError, ...) when it does not fit."""
    return CONVERTER.structure(data, cls)


# -- diagnostics ------------------------------------------------------------------------------------


@attrs.frozen
class DiagnosticFix:
    """A rule's fix in client units, for the version the diagnostic was computed on."""

    title: str
    edits: list[types.TextEdit]


@attrs.frozen
class DiagnosticData:
    kernel: str | None
    fix: DiagnosticFix | None = None


# -- code actions -----------------------------------------------------------------------------------


@attrs.frozen
class _ForVersion:
    """Every resolvable action names the document version its edit must be computed on."""

    uri: str
    version: int | None


@attrs.frozen
class RuleFix(_ForVersion):
    """Apply the fix of the finding `code` reported at `range` with `message`."""

    code: str
    range: types.Range
    message: str = ""


@attrs.frozen
class RuleIgnore(RuleFix):
    """Add `# tritonlens: ignore[code]` on the finding's line."""


@attrs.frozen
class Rewrite(_ForVersion):
    """Apply the `index`-th accepted rewrite of `kernel`. `candidate` is the optimizer's verdict
    and evidence (without the source) for a client to preview before applying."""

    kernel: str
    index: int
    candidate: dict = attrs.field(factory=dict)


@attrs.frozen
class FixAll(_ForVersion):
    """Every deterministic fix of the document."""


CodeActionData = RuleFix | RuleIgnore | Rewrite | FixAll
ACTION_TAGS: dict[type, str] = {RuleFix: "fix", RuleIgnore: "ignore", Rewrite: "rewrite", FixAll: "fixAll"}

configure_tagged_union(CodeActionData, CONVERTER, tag_name="action", tag_generator=ACTION_TAGS.__getitem__)
