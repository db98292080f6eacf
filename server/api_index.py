"""The Triton API of the session, as a service: the one index the API rules (TL020/TL021) check
against and completion, signature help and hover read.

It is the project's own Triton, introspected in a subprocess through the configured `python` (the
server's interpreter when none is set), else the packaged snapshot nearest to that Triton's
version (tritonlens.analysis.tlapi). Resolution starts when the session is up and again whenever
the settings name another interpreter, off the event loop; until it answers, the snapshot for the
server's Triton serves. When it arrives it becomes the active index for the rules too, and every
open document is analysed again, since its findings may now read differently.

The rules read one process-wide index, so a workspace has one project interpreter: the global
`python`, else the first folder's that sets one.
"""

from __future__ import annotations

import asyncio
import logging

from tritonlens.analysis import tlapi

from .feature import LanguageFeature

log = logging.getLogger(__name__)


class ApiIndexService(LanguageFeature):
    name = "api-index"

    def __init__(self, ls):
        super().__init__(ls)
        self.python: str | None = None  # the interpreter asked for last ("" = the server's); None: not yet
        self._pending: asyncio.Future | None = None

    def for_uri(self, uri: str) -> tlapi.ApiIndex:
        """The API a document is checked and completed against: the same one for every document."""
        return tlapi.active()

    def initialized(self) -> None:
        self._start(self._project_python())

    def settings_changed(self) -> None:
        self._start(self._project_python())

    def shutdown(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    def _project_python(self) -> str:
        settings = self.ls.settings
        configured = [s.python for s in settings.all() if s.python]
        if len(set(configured)) > 1:
            log.warning("folders name different interpreters %s; the Triton API comes from %r",
                        sorted(set(configured)), configured[0])
        return configured[0] if configured else ""

    def _start(self, python: str) -> None:
        if python == self.python:
            return  # resolved or resolving already
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._pending is not None:
            self._pending.cancel()  # its answer is for an interpreter no longer configured
        self.python = python
        # A subprocess and JSON, no analysis caches: the default pool, not the analysis thread.
        fut = self._pending = loop.run_in_executor(None, _resolve, python)
        fut.add_done_callback(lambda f, python=python: self._arrived(python, f))

    def _arrived(self, python: str, fut: asyncio.Future) -> None:
        if fut is self._pending:
            self._pending = None
        if fut.cancelled() or python != self.python:
            return
        where = python or "the server's Python"
        try:
            index = fut.result()
        except Exception as exc:  # noqa: BLE001 (any failure keeps the snapshot in use; it is logged)
            log.warning("Triton API introspection failed for %s: %s", where, exc)
            return
        log.info("Triton API %s (%s) for %s", index.version, index.source, where)
        if index is tlapi.active():
            return
        tlapi.set_active(index)
        self.ls.refresh_all()


def _resolve(python: str) -> tlapi.ApiIndex:
    """The project's API; the one in use when they read the same, so that nothing is analysed
    again for an API that did not change (the server's own Triton at start-up, typically)."""
    index, current = tlapi.resolve(python or None), tlapi.active()
    return current if index.same_api(current) else index
