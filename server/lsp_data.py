"""The typed `data` the server attaches to diagnostics and code actions, and the one converter
that turns them (and any lsprotocol type) into JSON and back.

The client echoes `data` back untouched (in `codeAction/resolve`, in the diagnostics of a
code-action request), so what goes out must structure again into the same object: the classes
here are that contract, and the wire keys are their field names.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import attrs
from cattrs.strategies import configure_tagged_union
from lsprotocol import types
from pygls.protocol import default_converter

from tritonlens.profiling.worker.json_message import MessageError
from tritonlens.profiling.worker.reports import CandidateReport

CONVERTER = default_converter()  # lsprotocol's hooks (camelCase keys, omitted Nones) plus pygls's own


def wire_json(value: Any) -> Any:
    """`value` with every non-finite float as null: JSON has no Infinity or NaN, and a client's
    parser drops the whole connection on one (a refused candidate's error is `inf` when no element
    compared as a number)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: wire_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [wire_json(v) for v in value]
    return value


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
    # Set on a static error Triton's front end has not confirmed (yet): why it shows as a warning.
    unconfirmed: str | None = None


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
    """Apply the `index`-th rewrite offered for `kernel` (only the best proven one is offered, so 0
    today; the index keeps older actions unambiguous). `candidate` is the optimizer's verdict
    and evidence for a client to preview before applying, without the rewritten source and its
    diff (the edit carries them): see `preview_of`."""

    kernel: str
    index: int
    candidate: CandidateReport | None = None


_NOT_PREVIEWED = ("source", "diff")


def preview_of(candidate: CandidateReport) -> CandidateReport:
    """The candidate as a rewrite action carries it: no source, no diff."""
    return dataclasses.replace(candidate, source=None, diff="")


def _candidate_to_json(candidate: CandidateReport) -> dict:
    return {k: v for k, v in candidate.to_json().items() if k not in _NOT_PREVIEWED}


def _candidate_from_json(data: Any, _cls) -> CandidateReport:
    try:
        return preview_of(CandidateReport.from_json(data, "rewrite candidate"))
    except MessageError as exc:  # cattrs reports it as a failed field of the action's data
        raise ValueError(str(exc)) from exc


CONVERTER.register_unstructure_hook(CandidateReport, _candidate_to_json)
CONVERTER.register_structure_hook(CandidateReport, _candidate_from_json)


@attrs.frozen
class FixAll(_ForVersion):
    """Every deterministic fix of the document."""


CodeActionData = RuleFix | RuleIgnore | Rewrite | FixAll
ACTION_TAGS: dict[type, str] = {RuleFix: "fix", RuleIgnore: "ignore", Rewrite: "rewrite", FixAll: "fixAll"}

configure_tagged_union(CodeActionData, CONVERTER, tag_name="action", tag_generator=ACTION_TAGS.__getitem__)
