"""Profile on save: debounced, only kernels whose source changed since their last measurement,
cancellable, with progress. Off unless the `profileOnSave` setting is true."""

from __future__ import annotations

import asyncio
import logging

from . import worker_jobs
from .analyzed import analyzed, module_of
from .diagnostics import kernel_hash
from .engines import EngineUnavailable
from .feature import LanguageFeature
from .progress import Cancelled

log = logging.getLogger(__name__)

_KEY = "profile-on-save"


class ProfileOnSave(LanguageFeature):
    name = "profile-on-save"

    def __init__(self, ls):
        super().__init__(ls)
        self.tasks: dict[str, asyncio.Task] = {}  # uri -> the profile running for its last save

    def saved(self, uri: str) -> None:
        settings = self.ls.settings.for_uri(uri)
        if not settings.profile_on_save:
            return
        # A newer save supersedes a profile still waiting or running for an older one.
        self.cancel(uri)
        self.ls.debouncer.schedule((_KEY, uri), settings.debounce_ms / 1000, lambda: self._run(uri))

    def closed(self, uri: str) -> None:
        self.cancel(uri)

    def settings_changed(self) -> None:
        for uri in list(self.tasks):
            if not self.ls.settings.for_uri(uri).profile_on_save:
                self.cancel(uri)

    def shutdown(self) -> None:
        for uri in list(self.tasks):
            self.cancel(uri)

    def cancel(self, uri: str) -> None:
        self.ls.debouncer.cancel((_KEY, uri))
        task = self.tasks.pop(uri, None)
        if task is not None and not task.done():
            task.cancel()

    async def changed_kernels(self, uri: str) -> list[str]:
        _snap, result = await analyzed(self.ls, uri)
        module = module_of(result)
        if module is None:
            return []
        measurements = self.ls.measurements
        want_lines = self.ls.settings.for_uri(uri).line_samples
        out = []
        for k in module.kernels:
            m = measurements.latest(uri, k.name)
            if m is None or m.kernel_hash != kernel_hash(k.text) or (want_lines and _lacks_lines(m)):
                out.append(k.name)
        return out

    async def _run(self, uri: str) -> None:
        kernels = await self.changed_kernels(uri)
        if not kernels:
            log.info("profile on save: no kernel of %s changed since its last measurement", uri)
            return
        task = asyncio.current_task()
        self.tasks[uri] = task
        try:
            # One changed kernel: profile just it. Several: the whole file, where the engine's cache
            # skips the timing of every launch whose kernel source did not change.
            await worker_jobs.profile(self.ls, uri, kernels[0] if len(kernels) == 1 else None,
                                           title=f"tritonlens: profiling {', '.join(kernels)} on save")
        except EngineUnavailable as exc:
            log.warning("profile on save: %s", exc)
        except (Cancelled, asyncio.CancelledError):
            log.info("profile on save of %s cancelled", uri)
        except Exception as exc:
            self.ls.show_error(f"profile on save failed: {exc}")
        finally:
            if self.tasks.get(uri) is task:
                del self.tasks[uri]


def _lacks_lines(m) -> bool:
    """A GPU measurement taken before per-line samples were switched on: the next save samples it."""
    launch = m.first_launch
    return m.mode == "gpu" and launch is not None and launch.error is None and launch.lines is None
