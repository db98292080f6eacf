"""The Triton API a document is written against, as a feature: the project's own Triton,
introspected in a subprocess through its configured `python`, else the packaged snapshot nearest
to the installed version (tritonlens.analysis.tlapi).

Introspection starts when the session is up and whenever the settings name another interpreter,
not on the first completion; until it answers, the snapshot serves. When it arrives, everything
shown is refreshed, since completions, hovers and the API rules may now read differently.
"""

from __future__ import annotations

import asyncio
import logging

from tritonlens.analysis import tlapi

from .feature import LanguageFeature

log = logging.getLogger(__name__)


class ApiIndexFeature(LanguageFeature):
    name = "api-index"

    def __init__(self, ls):
        super().__init__(ls)
        self._by_python: dict[str, tlapi.ApiIndex] = {}
        self._pending: dict[str, asyncio.Future] = {}

    def for_uri(self, uri: str) -> tlapi.ApiIndex:
        """The API for the document's interpreter; the active snapshot while it is resolved."""
        python = self.ls.settings.for_uri(uri).python or ""
        idx = self._by_python.get(python)
        if idx is None:
            self._resolve(python)
            return tlapi.active()
        return idx

    async def ready(self, python: str = "") -> tlapi.ApiIndex:
        """The resolved API for `python` (waits for a resolution in flight)."""
        if python not in self._by_python:
            fut = self._resolve(python)
            if fut is not None:
                await asyncio.shield(fut)
        return self._by_python.get(python, tlapi.active())

    def initialized(self) -> None:
        for python in self._pythons():
            self._resolve(python)

    def settings_changed(self) -> None:
        self.initialized()

    def shutdown(self) -> None:
        for fut in self._pending.values():
            fut.cancel()
        self._pending.clear()

    def _pythons(self) -> set[str]:
        return {s.python or "" for s in self.ls.settings.all()}

    def _resolve(self, python: str) -> asyncio.Future | None:
        if python in self._by_python:
            return None
        fut = self._pending.get(python)
        if fut is not None:
            return fut
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        # A subprocess and JSON, no analysis caches: the default pool, not the analysis thread.
        fut = self._pending[python] = loop.run_in_executor(None, tlapi.resolve, python or None)
        fut.add_done_callback(lambda f, python=python: self._arrived(python, f))
        return fut

    def _arrived(self, python: str, fut: asyncio.Future) -> None:
        self._pending.pop(python, None)
        if fut.cancelled():
            return
        try:
            idx = fut.result()
        except Exception as exc:
            log.warning("Triton API introspection failed for %r: %s", python or "the server's Python", exc)
            idx = tlapi.active()
        before = tlapi.active()
        self._by_python[python] = idx
        if not python:
            tlapi.set_active(idx)
        log.info("Triton API %s (%s) for %s", idx.version, idx.source, python or "the server's Python")
        if (idx.version, idx.source) != (before.version, before.source):
            self.ls.refresh_all()
