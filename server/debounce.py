"""Per-key debouncing on the asyncio loop: the last call within the delay wins."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable

log = logging.getLogger(__name__)


class Debouncer:
    def __init__(self):
        self._pending: dict[Hashable, asyncio.Task] = {}

    def schedule(self, key: Hashable, delay_s: float, action: Callable[[], Awaitable[None]]) -> asyncio.Task:
        """Run `action` after `delay_s` unless `schedule` is called again for `key` first."""
        self.cancel(key)

        async def run():
            try:
                if delay_s > 0:
                    await asyncio.sleep(delay_s)
            except asyncio.CancelledError:
                return
            # From here on the action runs to completion: a newer schedule does not cancel it,
            # the action itself checks whether its result is still current.
            if self._pending.get(key) is task:
                del self._pending[key]
            try:
                await action()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("debounced action for %s failed", key)

        task = asyncio.ensure_future(run())
        self._pending[key] = task
        return task

    def cancel(self, key: Hashable) -> None:
        task = self._pending.pop(key, None)
        if task is not None and not task.done():
            task.cancel()

    def pending(self, key: Hashable) -> bool:
        task = self._pending.get(key)
        return task is not None and not task.done()

    def cancel_all(self) -> None:
        for key in list(self._pending):
            self.cancel(key)
