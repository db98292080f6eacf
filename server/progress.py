"""`$/progress` for long work (profile, optimize), cancellable from the client.

Uses the client's `workDoneToken` when the request carried one, otherwise creates a token with
`window/workDoneProgress/create` when the client supports it; with neither, the work runs
without progress but still stops when the request itself is cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable

from lsprotocol import types

from .protocol import work_done_token

log = logging.getLogger(__name__)


class Cancelled(Exception):
    """The user cancelled the work from the client's progress UI."""


class Progress:
    def __init__(self, ls, title: str, *, cancellable: bool = True):
        self.ls = ls
        self.title = title
        self.cancellable = cancellable
        self.token: types.ProgressToken | None = None
        self.cancelled = asyncio.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._ended = False

    async def __aenter__(self) -> Progress:
        token = work_done_token.get()
        if token is None and self.ls.client_support.work_done_progress:
            token = f"tritonlens-{uuid.uuid4()}"
            try:
                await self.ls.work_done_progress.create_async(token)
            except Exception as exc:  # the client refused: work without a progress bar
                log.info("client refused progress token: %s", exc)
                token = None
        self.token = token
        if token is not None:
            self.ls.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(title=self.title, cancellable=self.cancellable, percentage=0),
            )
            fut = self.ls.work_done_progress.tokens.get(token)
            if fut is not None:
                loop = asyncio.get_running_loop()
                fut.add_done_callback(lambda f: loop.call_soon_threadsafe(self._on_cancel) if f.cancelled() else None)
        return self

    def _on_cancel(self) -> None:
        if self.cancelled.is_set():
            return
        log.info("%s: cancelled by the client", self.title)
        self.cancelled.set()
        for cb in self._callbacks:
            try:
                cb()
            except Exception:
                log.exception("cancel callback failed")

    def on_cancel(self, callback: Callable[[], None]) -> None:
        self._callbacks.append(callback)
        if self.cancelled.is_set():
            callback()

    def report(self, message: str, percentage: int | None = None) -> None:
        if self.token is not None and not self.cancelled.is_set() and not self._ended:
            self.ls.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message, percentage=percentage, cancellable=self.cancellable)
            )

    async def run(self, work: Awaitable):
        """Await `work`; a cancel from the client cancels it and raises Cancelled."""
        task = asyncio.ensure_future(work)
        self.on_cancel(task.cancel)
        try:
            return await task
        except asyncio.CancelledError:
            if self.cancelled.is_set():
                raise Cancelled(f"{self.title}: cancelled") from None
            raise
        finally:
            if not task.done():
                task.cancel()

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        self._ended = True
        if self.token is not None:
            if exc_type is None:
                message = "done"
            elif self.cancelled.is_set() or exc_type in (Cancelled, asyncio.CancelledError):
                message = "cancelled"
            else:
                message = f"failed: {exc}"
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            self.ls.work_done_progress.tokens.pop(self.token, None)
        return False
