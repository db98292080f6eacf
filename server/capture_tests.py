"""Record launches from the project's own tests when a kernel file without records is opened.

Compile facts, profile and optimize are only as real as the configurations they run; the best
ones are launches the project itself makes. When a file whose kernels have no launch record is
opened (or saved), the tests that reach it (found by their imports, nothing imported here) are run
once in a worker, under Triton's interpreter with "cuda" mapped to the CPU where there is no GPU,
and their launches are kept in the project's `.tritonlens/launches.jsonl`. The file is then
compiled again, now from what the tests launched.

Once per file per session, whatever the outcome: a project whose tests fail here is not run again
on every save. Never in an untrusted workspace (it runs the project's code), and not when the
`captureTests` setting is off.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

from .documents import may_hold_kernels, snapshot_of
from .feature import LanguageFeature
from .progress import Cancelled, Progress

log = logging.getLogger(__name__)
CAPTURE_TIMEOUT = 300.0  # seconds: a test suite slower than that under the interpreter is recorded by hand


class CaptureTests(LanguageFeature):
    name = "capture-tests"

    def __init__(self, ls):
        super().__init__(ls)
        self.tried: set[str] = set()  # files whose tests were run (or found absent) this session
        self.running: set[threading.Event] = set()  # each capture's cancel: setting it stops its worker

    def opened(self, uri: str) -> None:
        self._maybe(uri)

    def saved(self, uri: str) -> None:
        self._maybe(uri)

    def _maybe(self, uri: str) -> None:
        settings = self.ls.settings.for_uri(uri)
        if not settings.capture_tests or not settings.trusted:
            return
        snap = snapshot_of(self.ls, uri)
        if snap is None or not snap.path or not may_hold_kernels(snap.text) or snap.path in self.tried:
            return
        self.tried.add(snap.path)
        self.ls.spawn(self._capture(uri, snap.path, settings))

    async def _capture(self, uri: str, path: str, settings) -> None:
        from tritonlens.profiling.launch_records import records_for
        from tritonlens.profiling.project_capture import capture_for_file
        from tritonlens.profiling.project_tests import find_tests

        if await asyncio.to_thread(records_for, path):
            return  # the project already recorded this file's launches: compile uses them
        tests = await asyncio.to_thread(find_tests, path)
        if not tests:
            log.info("no test of the project reaches %s: its kernels compile from the text", Path(path).name)
            return
        backend = settings.backend if settings.backend != "local" else None
        # The file's compile from its text first: run beside it, the tests' worker (importing the
        # project, running its tests) took the cores the first kernel's facts were waiting for.
        await self.ls.compiles.settled(uri)
        cancel = threading.Event()
        self.running.add(cancel)
        try:
            async with Progress(self.ls, f"tritonlens: recording launches from {len(tests)} test file(s)") as p:
                p.on_cancel(cancel.set)
                outcome = await asyncio.to_thread(capture_for_file, path, python=settings.python or None,
                                                  backend=backend, timeout=CAPTURE_TIMEOUT, cancel=cancel)
        except Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - a capture that breaks costs its records, never the server
            log.warning("recording launches for %s failed: %s", Path(path).name, exc)
            return
        finally:
            self.running.discard(cancel)
        if cancel.is_set():
            return
        if not outcome.recorded:
            log.info("the tests of %s recorded no launch: %s", Path(path).name, outcome.reason or outcome.error)
            return
        kernels = sorted({rec.launch.kernel for rec in outcome.recorded if rec.file.endswith(Path(path).name)})
        self.ls.show_info(f"tritonlens: recorded {len(outcome.recorded)} launch(es) from {len(outcome.tests)} test "
                          f"file(s); compile facts of {', '.join(kernels) or Path(path).name} now use them")
        if uri in self.ls.workspace.text_documents:
            self.ls.compiles.saved(uri)

    def closed(self, uri: str) -> None:
        pass  # the capture finishes in its own worker: its records serve the next open

    def shutdown(self) -> None:
        for cancel in list(self.running):
            cancel.set()
