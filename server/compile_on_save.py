"""Compile on save: TL101–TL106 from a cross-compile of the saved file.

The cross-compile runs in the compile engine's worker process (tritonlens.profiling.compile_job),
called from a thread so typing never waits: per document it is debounced, and a save of new text
cancels the compile still running for older text (the engine kills its worker). Its findings are
kept apart from the static ones (DocumentState.extra["compile"]), each anchored to the source of
its kernel: a static re-publish shows them moved with their kernel, and drops them once that
kernel's text changed, since they describe the compile of the text they were computed on.

A file is compiled kernel by kernel (compile_stream.py), with `$/progress` naming each: a kernel's
findings and hover facts are shown as soon as it is compiled, not when the whole file is.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

from . import compile_stream, engines
from .analyzed import module_of
from .compile_facts import Compiled, CompileFacts
from .diagnostics import AnchoredFinding, kernel_hash
from .documents import may_hold_kernels, snapshot_of
from .engines import EngineUnavailable
from .feature import LanguageFeature
from .progress import Cancelled, Progress

log = logging.getLogger(__name__)

PRODUCER = "compile"
_DEBOUNCE = "compile"


@dataclass
class _Run:
    seq: int
    key: tuple
    cancel: threading.Event
    task: asyncio.Task


def _publishes(settings) -> bool:
    return settings.compile_on_save and settings.trusted


class CompileOnSave(LanguageFeature):
    name = "compile-on-save"

    def __init__(self, ls):
        super().__init__(ls)
        self.latest: dict[str, Compiled] = {}  # each document's latest complete compile
        self.shown: dict[str, Compiled] = {}  # while a compile streams in: its kernels so far
        self.busy: dict[str, int] = {}  # compiles of a document after an open or a save, until they end
        self.running: dict[str, _Run] = {}
        self.seq = 0
        self.warmed: set = set()  # the interpreters whose compile worker was started
        self.told: set = set()  # problems already shown to the user once

    def facts(self, uri: str) -> CompileFacts:
        return CompileFacts(self.shown.get(uri) or self.latest.get(uri))

    # -- lifecycle ------------------------------------------------------------------------------------

    def _warm_up(self, settings, uri: str) -> None:
        """Start the compile worker (Triton's import costs seconds) as soon as a document with a
        kernel is open, so that its first save pays only for its compile; a window with no Triton
        file never starts one."""
        key = settings.python or None
        if key in self.warmed:
            return
        try:
            api = engines.compiling("Compiling")
        except EngineUnavailable as exc:
            log.info("%s", exc)
            return
        self.warmed.add(key)
        log.info("compile worker starting for %s", Path(uri).name)

        async def warm():
            t0 = time.perf_counter()
            try:
                await asyncio.to_thread(api.warm_up, key)
                log.info("compile worker ready in %.1f s", time.perf_counter() - t0)
            except Exception as exc:  # a broken interpreter shows up again, clearly, on the first save
                log.warning("compile worker did not start: %s", exc)

        self.ls.spawn(warm())

    def settings_changed(self) -> None:
        """Compile findings of a document whose compile settings changed no longer apply."""
        for uri in list(self.ls.workspace.text_documents):
            settings = self.ls.settings.for_uri(uri)
            latest = self.shown.get(uri) or self.latest.get(uri)
            on = _publishes(settings)
            if not on and (latest is not None or uri in self.running):
                log.info("compile findings of %s withdrawn: compile on save is off", uri)
                self.drop(uri)
            elif on and latest is not None and (latest.target, latest.python) != (settings.compile_target,
                                                                                  settings.python):
                log.info("compile findings of %s withdrawn: the compile target or interpreter changed", uri)
                self.drop(uri)
                self.saved(uri)

    def opened(self, uri: str) -> None:
        self.saved(uri)

    def saved(self, uri: str) -> None:
        if self._wanted(uri):
            delay = self.ls.settings.for_uri(uri).debounce_ms / 1000
            self.ls.debouncer.schedule((_DEBOUNCE, uri), delay, lambda: self._compile_saved(uri))

    def closed(self, uri: str) -> None:
        self.ls.debouncer.cancel((_DEBOUNCE, uri))
        run = self.running.pop(uri, None)
        if run is not None:
            run.cancel.set()
        self.latest.pop(uri, None)
        self.shown.pop(uri, None)

    def shutdown(self) -> None:
        for run in self.running.values():
            run.cancel.set()
        self.running.clear()
        try:
            api = engines.compiling("Compiling")
        except EngineUnavailable:
            return
        # Stopping a worker waits for its current job, which the cancels above end within a poll;
        # bounded so that a wedged worker cannot hold the shutdown answer.
        t = threading.Thread(target=api.shutdown, name="tritonlens-compile-shutdown", daemon=True)
        t.start()
        t.join(timeout=5)

    async def settled(self, uri: str) -> None:
        """Return once no compile of `uri` is due or running."""
        while self.ls.debouncer.pending((_DEBOUNCE, uri)) or self.busy.get(uri):
            await asyncio.sleep(0.1)

    async def _compile_saved(self, uri: str) -> None:
        self.busy[uri] = self.busy.get(uri, 0) + 1
        try:
            await self.compile_document(uri)
        finally:
            self.busy[uri] -= 1
            if not self.busy[uri]:
                del self.busy[uri]

    # -- when to compile ------------------------------------------------------------------------------

    def is_python(self, uri: str) -> bool:
        doc = self.ls.workspace.text_documents.get(uri)
        language = getattr(doc, "language_id", None)
        return language == "python" or (language in (None, "") and uri.endswith((".py", ".pyi")))

    def _wanted(self, uri: str) -> bool:
        settings = self.ls.settings.for_uri(uri)
        if not settings.compile_on_save or not self.is_python(uri):
            return False
        if not settings.trusted:
            # Capturing launches runs the file's harness: never in an untrusted workspace.
            self._tell_once(("untrusted",), "compile on save is off in an untrusted workspace: it would run "
                            "the workspace's code", quiet=True)
            return False
        return True

    def drop(self, uri: str) -> None:
        self.latest.pop(uri, None)
        self.shown.pop(uri, None)
        run = self.running.pop(uri, None)
        if run is not None:
            run.cancel.set()
        st = self.ls.analysis.docs.get(uri)
        if st is not None and st.extra.pop(PRODUCER, None) is not None:
            st.generation += 1

    def _tell_once(self, key, message: str, quiet: bool = False) -> None:
        if key in self.told:
            return
        self.told.add(key)
        if quiet:
            log.info(message)
        else:
            log.warning(message)
            self.ls.show_info(message, kind=types.MessageType.Warning)

    # -- compiling ------------------------------------------------------------------------------------

    async def compile_document(self, uri: str) -> Compiled | None:
        """Compile the saved text of `uri` (or join the compile of the same text already running)."""
        ls = self.ls
        snap = snapshot_of(ls, uri)
        if snap is None or not may_hold_kernels(snap.text) or not snap.path or not Path(snap.path).is_file():
            return None
        try:
            on_disk = Path(snap.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        settings = ls.settings.for_uri(uri)
        module = module_of(await ls.analysis.analyze(snap, settings))
        if module is None or not module.kernels:
            return None
        if on_disk != snap.text:
            # The harness that finds the launches runs the file on disk: compiling other text with its
            # launches would describe a kernel that does not exist yet. The worker starts meanwhile.
            log.info("compile of %s waits for a save: the editor's text differs from the file", uri)
            if _publishes(settings):
                self._warm_up(settings, uri)
            return None
        key = (snap.text, settings.compile_target, settings.python)
        run = self.running.get(uri)
        if run is not None and not run.task.done():
            if run.key == key:
                return await asyncio.shield(run.task)  # a save of the same text: that compile answers it
            run.cancel.set()  # newer text: the older compile is worthless, its worker is killed
        self.seq += 1
        cancel = threading.Event()
        task = asyncio.ensure_future(self._compile(uri, snap, module, settings, cancel, self.seq))
        mine = self.running[uri] = _Run(self.seq, key, cancel, task)

        def finished(_task):
            if self.running.get(uri) is mine:
                del self.running[uri]

        task.add_done_callback(finished)
        return await asyncio.shield(task)

    async def _compile(self, uri, snap, module, settings, cancel: threading.Event, seq: int) -> Compiled | None:
        ls = self.ls
        try:
            api = engines.compiling("Compiling")
        except EngineUnavailable as exc:
            self._tell_once(("engine",), str(exc), quiet=True)
            return None
        launchable, harness = await ls.analysis.run(_launchable_and_harness, module, snap.text, api.has_harness)
        hashes = {k.name: kernel_hash(k.text) for k in module.kernels}
        carried = self.shown.get(uri) or self.latest.get(uri)
        if carried is not None and (carried.target, carried.python) != (settings.compile_target, settings.python):
            carried = None
        steps = compile_stream.plan(launchable, harness, compile_stream.up_to_date(carried, hashes))
        reports, anchored, done = [], [], set()
        t0 = time.perf_counter()
        try:
            async with Progress(ls, f"tritonlens: compiling {', '.join(launchable)} for {settings.compile_target}") as p:
                p.on_cancel(cancel.set)
                # The configurations of kernels no captured launch reaches, from the model the
                # analysis already holds for this text (a cold analysis would compete with typing).
                static = await ls.analysis.run(_static_configs, module, snap.path)
                for i, kernel in enumerate(steps):
                    if cancel.is_set():
                        raise Cancelled("cancelled between kernels")
                    if kernel is not None:
                        p.report(f"compiling {i + 1} of {len(steps)} kernels: {kernel}", 100 * i // len(steps))
                    try:
                        result, findings = await asyncio.to_thread(_compile_one, api, snap, settings, cancel, static,
                                                                   kernel)
                    except api.CompileCancelled as exc:
                        raise Cancelled(str(exc)) from exc
                    except api.CompileError as exc:
                        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                        self._tell_once(("error", uri, first), f"cannot compile {Path(snap.path).name}: {first}")
                        log.debug("compile of %s (%s) failed: %s", uri, kernel or "all kernels", exc)
                        continue  # the other kernels may still compile
                    if not self._current(uri, settings, cancel, seq):
                        return None
                    reports.append(result)
                    done.update([kernel] if kernel is not None else launchable)
                    anchored += _anchored(findings, module, hashes)
                    if i + 1 < len(steps):
                        self._shown_so_far(uri, snap, settings, seq, reports, anchored, carried, done, hashes, t0)
        except Cancelled:
            log.info("compile of %s cancelled (a newer save, a close or the user)", uri)
            return None
        if not reports:
            return None
        seconds = time.perf_counter() - t0
        result = compile_stream.merged(reports)
        compiled = Compiled(seq, snap.version, snap.text, settings.compile_target, settings.python, result, hashes,
                            seconds)
        self.latest[uri] = compiled
        self.shown.pop(uri, None)
        if not _publishes(ls.settings.for_uri(uri)):
            # Switched off while it ran, or compiled for Show IR only: the IR and the hover facts
            # stand, the diagnostics are not wanted.
            log.info("compiled %s for %s in %.0f ms (diagnostics off)", Path(snap.path).name,
                     settings.compile_target, seconds * 1000)
            return compiled
        self._publish(uri, anchored)
        for err in result.capture_errors:
            # The harness failed before a launch: that launch has no compile facts. Say why once.
            self._tell_once(("capture", uri, err), f"{Path(snap.path).name}: the harness raised before launching "
                            f"a kernel; kernels it did not reach are compiled from their launch sites and "
                            f"autotune configs with assumed arguments: {err}", quiet=True)
        log.info("compiled %s for %s in %.0f ms%s: %d finding(s)", Path(snap.path).name, settings.compile_target,
                 seconds * 1000, " (cached)" if result.cached else "", len(anchored))
        return compiled

    def _current(self, uri: str, settings, cancel: threading.Event, seq: int) -> bool:
        """Whether a compile started as `seq` with `settings` may still be shown."""
        latest = self.latest.get(uri)
        if cancel.is_set() or uri not in self.ls.workspace.text_documents or (latest is not None and latest.seq > seq):
            return False  # superseded while it ran
        now = self.ls.settings.for_uri(uri)
        return (now.compile_target, now.python) == (settings.compile_target, settings.python)

    def _shown_so_far(self, uri, snap, settings, seq, reports, anchored, carried, done, hashes, t0) -> None:
        """Show the kernels compiled so far, with the previous answer for those still waiting."""
        shown = Compiled(seq, snap.version, snap.text, settings.compile_target, settings.python,
                         compile_stream.merged(reports, carried.result if carried else None, done),
                         compile_stream.hashes_shown(hashes, carried.kernel_hashes if carried else {}, done),
                         time.perf_counter() - t0)
        self.shown[uri] = shown
        log.info("compiled %s of %s for %s", ", ".join(sorted(done)), Path(snap.path).name, settings.compile_target)
        if _publishes(self.ls.settings.for_uri(uri)):
            st = self.ls.analysis.state(uri)
            waiting = [a for a in st.extra.get(PRODUCER, []) if a.kernel not in done]
            self._publish(uri, waiting + anchored)

    def _publish(self, uri: str, anchored: list) -> None:
        st = self.ls.analysis.state(uri)
        st.extra[PRODUCER] = list(anchored)
        st.generation += 1
        self._show(uri)

    def _show(self, uri: str) -> None:
        """Deliver the document's diagnostics again, now with the compile findings."""
        support = self.ls.client_support
        if not support.pull_diagnostics:
            self.ls.schedule_diagnostics(uri, 0)
        else:  # pull is offered only to clients that take a refresh (ClientSupport.pull_diagnostics)
            self.ls.workspace_diagnostic_refresh(None)


def _selected(findings, settings, text: str):
    """The select/ignore settings and `# tritonlens: ignore[...]` comments apply as to static rules."""
    from tritonlens.analysis.rules import is_selected
    from tritonlens.analysis.suppress import is_suppressed, suppressions

    table = suppressions(text)
    for f in findings:
        if not is_selected(f.code, settings.select, settings.ignore):
            continue
        if table and is_suppressed(f, table):
            continue
        yield f


def _static_configs(module, path):
    from tritonlens.profiling.static_configs import static_configs

    try:
        return static_configs(module, path=path)
    except Exception:  # noqa: BLE001 - compile_file then falls back to analysing the text itself
        log.exception("static configurations of the analysed model failed")
        return None


def _launchable_and_harness(module, text: str, has_harness) -> tuple[list[str], bool]:
    """The kernels a compile is about (device helpers are compiled only inside their callers),
    and whether the file has a harness of its own."""
    from tritonlens.analysis.kernel_roles import is_device_helper

    names = [k.name for k in module.kernels if not is_device_helper(module, k)] or [k.name for k in module.kernels]
    return names, has_harness(text)


def _compile_one(api, snap, settings, cancel: threading.Event, static, kernel: str | None):
    """One compile (a kernel, or the file when `kernel` is None) and its findings, on a thread."""
    result = api.compile_file(snap.path, text=snap.text, kernel=kernel, target=settings.compile_target,
                              python=settings.python or None, cancel=cancel, static=static)
    findings = list(_selected(api.findings_from(result, snap.text), settings, snap.text))
    return result, findings


def _anchored(findings, module, hashes: dict[str, str]) -> list[AnchoredFinding]:
    out = []
    for f in findings:
        k = module.kernel(f.kernel) if f.kernel else None
        if k is not None:
            out.append(AnchoredFinding(f, k.name, hashes[k.name], k.range.start.line))
    return out
