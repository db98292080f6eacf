"""Record launches from the project's own tests when a kernel file without records is opened.

Compile facts, profile and optimize are only as real as the configurations they run; the best
ones are launches the project itself makes. When a file whose kernels have no launch record is
opened (or saved), the tests that reach it (found by their imports, nothing imported here) are run
once in a worker, under Triton's interpreter with "cuda" mapped to the CPU where there is no GPU,
and their launches are kept in the project's `.tritonlens/launches.jsonl`. The file is then
compiled again, now from what the tests launched.

Once per file per session, whatever the outcome: a project whose tests fail here is not run again
on every save, and its cause is said once (capture_notices.py: the cause in one line, with a
button for each way out). When `tritonlens.python` changes to another interpreter than the one
that failed, the file's capture runs again. Never in an untrusted workspace (it runs the
project's code), and not when the `captureTests` setting is off.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

from . import capture_notices
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
        self.failed: dict[str, tuple[str, object]] = {}  # path -> (python it ran with, its CaptureCause)
        self.uris: dict[str, str] = {}  # path -> the uri it was opened as
        self.harness: dict[str, str] = {}  # path -> FILE.py::FUNCTION picked for its profile this session

    def opened(self, uri: str) -> None:
        self._maybe(uri)

    def saved(self, uri: str) -> None:
        self._maybe(uri)

    def settings_changed(self) -> None:
        """Another interpreter than the one a capture failed with: that file's tests run again."""
        for path, (python, _cause) in list(self.failed.items()):
            uri = self.uris.get(path)
            if uri is None or (self.ls.settings.for_uri(uri).python or "") == python:
                continue
            del self.failed[path]
            self.tried.discard(path)
            if uri in self.ls.workspace.text_documents:
                self._maybe(uri)

    def cause_for(self, path: str):
        """The cause of the last failed capture of `path` this session, else None."""
        failed = self.failed.get(path)
        return failed[1] if failed else None

    def _maybe(self, uri: str) -> None:
        settings = self.ls.settings.for_uri(uri)
        if not settings.capture_tests or not settings.trusted:
            return
        snap = snapshot_of(self.ls, uri)
        if snap is None or not snap.path or not may_hold_kernels(snap.text) or snap.path in self.tried:
            return
        self.tried.add(snap.path)
        self.ls.spawn(self.capture(uri, snap.path, automatic=True))

    async def capture(self, uri: str, path: str, *, automatic: bool, argv: list[str] | None = None):
        """Record launches for `path`: from the tests that reach it, or by running `argv` in the
        project. Automatic: only when the file has no record yet, after its compile from the text.
        A failure is said with its cause (once per file, when automatic). Returns the outcome."""
        from tritonlens.profiling.launch_records import records_for
        from tritonlens.profiling.project_capture import capture_command, capture_for_file
        from tritonlens.profiling.project_tests import find_tests, layout

        settings = self.ls.settings.for_uri(uri)
        self.uris[path] = uri
        self.tried.add(path)
        if automatic:
            if await asyncio.to_thread(records_for, path):
                return None  # the project already recorded this file's launches: compile uses them
            if not await asyncio.to_thread(find_tests, path):
                # Nothing ran and nothing failed: Profile says so, with its buttons, when asked.
                log.info("no test of the project reaches %s: its kernels compile from the text", Path(path).name)
                return None
            # The file's compile from its text first: run beside it, the tests' worker (importing the
            # project, running its tests) took the cores the first kernel's facts were waiting for.
            await self.ls.compiles.settled(uri)
        backend = settings.backend if settings.backend != "local" else None
        python = settings.python or None
        cancel = threading.Event()
        self.running.add(cancel)
        title = (f"tritonlens: recording launches of `{' '.join(argv)}`" if argv
                 else f"tritonlens: recording launches from the tests that reach {Path(path).name}")
        try:
            async with Progress(self.ls, title) as p:
                p.on_cancel(cancel.set)
                if argv:
                    root = layout(path).root
                    outcome = await asyncio.to_thread(capture_command, root, argv, python=python, backend=backend,
                                                      timeout=CAPTURE_TIMEOUT, cancel=cancel)
                else:
                    outcome = await asyncio.to_thread(capture_for_file, path, python=python, backend=backend,
                                                      timeout=CAPTURE_TIMEOUT, cancel=cancel)
        except Cancelled:
            return None
        except Exception as exc:  # noqa: BLE001 - a capture that breaks costs its records, never the server
            log.warning("recording launches for %s failed: %s", Path(path).name, exc)
            return None
        finally:
            self.running.discard(cancel)
        if cancel.is_set():
            return None
        if not outcome.recorded:
            cause = capture_notices.cause_of(outcome)
            log.info("no launch of %s was recorded: %s", Path(path).name, cause.line)
            if outcome.result is not None and outcome.result.capture_errors:
                log.info("capture errors: %s", "; ".join(map(str, outcome.result.capture_errors[:5])))
            first = path not in self.failed
            self.failed[path] = (settings.python or "", cause)
            if first or not automatic:
                await self._say(uri, path, cause, python or cause.python, automatic)
            return outcome
        self.failed.pop(path, None)
        kernels = sorted({rec.launch.kernel for rec in outcome.recorded if rec.file.endswith(Path(path).name)})
        self.ls.show_info(f"recorded {len(outcome.recorded)} launch(es) from "
                          + (f"`{' '.join(argv)}`" if argv else f"{len(outcome.tests)} test file(s)")
                          + f"; compile facts of {', '.join(kernels) or Path(path).name} now use them")
        if uri in self.ls.workspace.text_documents:
            self.ls.compiles.saved(uri)
        return outcome

    async def _say(self, uri: str, path: str, cause, used: str | None, automatic: bool) -> None:
        other = await asyncio.to_thread(capture_notices.other_environment, path, used, cause.module,
                                        self.ls.client_support.python_candidates)
        notice = capture_notices.capture_notice(
            Path(path).name, uri, cause, other_python=other, automatic=automatic,
            client_commands=self.ls.client_support.message_commands)
        await capture_notices.offer(self.ls, notice)

    def closed(self, uri: str) -> None:
        pass  # the capture finishes in its own worker: its records serve the next open

    def shutdown(self) -> None:
        for cancel in list(self.running):
            cancel.set()
