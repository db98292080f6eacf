"""The analysis of a document's current version, as every request handler starts from it."""

from __future__ import annotations

from .documents import Snapshot, snapshot_of


async def analyzed(ls, uri: str) -> tuple[Snapshot | None, object | None]:
    """(snapshot, AnalysisResult) of the open document `uri`; (None, None) when it is not open,
    (snapshot, None) when it cannot hold a kernel. The analysis runs on the analysis thread."""
    snap = snapshot_of(ls, uri)
    if snap is None:
        return None, None
    return snap, await ls.analysis.analyze(snap, ls.settings.for_uri(uri))


def module_of(result):
    """The analyzed module (kernels, launches, aliases) of a result, or None."""
    return getattr(result, "module", None)
