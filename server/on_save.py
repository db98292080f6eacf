"""Profile-on-save: debounced, only kernels whose source changed since their last measurement,
cancellable, with progress. Off unless the `profileOnSave` setting is true."""

from __future__ import annotations

import asyncio
import logging

from . import profiling_bridge
from .diagnostics import kernel_hash
from .documents import snapshot_of
from .engines import EngineUnavailable
from .progress import Cancelled

log = logging.getLogger(__name__)

_KEY = "profile-on-save"


def saved(ls, uri: str) -> None:
    settings = ls.settings.for_uri(uri)
    if not settings.profile_on_save:
        return
    # A newer save supersedes a profile still waiting or running for an older one.
    cancel(ls, uri)
    ls.debouncer.schedule((_KEY, uri), settings.debounce_ms / 1000, lambda: _run(ls, uri))


async def changed_kernels(ls, uri: str) -> list[str]:
    snap = snapshot_of(ls, uri)
    if snap is None:
        return []
    result = await ls.analysis.analyze(snap, ls.settings.for_uri(uri))
    module = getattr(result, "module", None)
    if module is None:
        return []
    out = []
    for k in module.kernels:
        m = ls.measurements.latest(uri, k.name)
        if m is None or m.kernel_hash != kernel_hash(k.text):
            out.append(k.name)
    return out


async def _run(ls, uri: str) -> None:
    kernels = await changed_kernels(ls, uri)
    if not kernels:
        log.info("profile on save: no kernel of %s changed since its last measurement", uri)
        return
    task = asyncio.current_task()
    ls.on_save_tasks[uri] = task
    try:
        # One changed kernel: profile just it. Several: the whole file, where the engine's cache
        # skips the timing of every launch whose kernel source did not change.
        await profiling_bridge.profile(ls, uri, kernels[0] if len(kernels) == 1 else None,
                                       title=f"tritonlens: profiling {', '.join(kernels)} on save")
    except EngineUnavailable as exc:
        log.warning("profile on save: %s", exc)
    except (Cancelled, asyncio.CancelledError):
        log.info("profile on save of %s cancelled", uri)
    except Exception as exc:
        ls.show_error(f"profile on save failed: {exc}")
    finally:
        if ls.on_save_tasks.get(uri) is task:
            del ls.on_save_tasks[uri]


def cancel(ls, uri: str) -> None:
    ls.debouncer.cancel((_KEY, uri))
    task = ls.on_save_tasks.pop(uri, None)
    if task is not None and not task.done():
        task.cancel()


def closed(ls, uri: str) -> None:
    cancel(ls, uri)


def cancel_all(ls) -> None:
    for uri in list(ls.on_save_tasks):
        cancel(ls, uri)
