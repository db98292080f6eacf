"""Error diagnostics are promises that Triton refuses the code: each one is put to Triton's front end.

The static findings are published at once, their candidate errors as warnings marked unconfirmed
(`data.unconfirmed`, message unchanged). Meanwhile the confirmation runs in the background
(tritonlens.profiling.confirm_errors): its model-reading step on the analysis thread, the
lowering in a killable worker process on a thread of its own, so typing never waits for it. When
it answers, the document's diagnostics are delivered again: confirmed errors as errors, refuted
ones gone, the rest warnings saying why they stay unconfirmed.

A newer text cancels the confirmation still running for an older one (its worker is killed).
While the new one runs, a finding whose kernel text and position are unchanged keeps the
verdict it had. In an untrusted workspace nothing is lowered: candidate errors stay warnings.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import time
from dataclasses import dataclass, field

from tritonlens.analysis.findings import Finding, Severity

from .diagnostics import kernel_hash
from .feature import LanguageFeature

log = logging.getLogger(__name__)

PENDING = "being confirmed by Triton's front end"
UNTRUSTED = "not confirmed: the workspace is not trusted, so Triton's front end is not run"


def _text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def _shown(findings: list[Finding]) -> list[tuple]:
    """What a client sees of each finding."""
    return [(f.code, f.range, f.message, f.severity, f.data.get("unconfirmed")) for f in findings]


@dataclass
class _Verdicts:
    """The judgements made for one text of a document, with each judged kernel's text hash."""

    text: str  # _text_key of the text they were made for
    judgements: dict = field(default_factory=dict)  # finding key → Judgement
    kernels: dict = field(default_factory=dict)  # kernel name → kernel_hash when judged


@dataclass
class _Run:
    text: str
    cancel: threading.Event
    task: asyncio.Task


class ConfirmErrors(LanguageFeature):
    name = "confirm-errors"

    def __init__(self, ls):
        super().__init__(ls)
        self.verdicts: dict[str, _Verdicts] = {}
        self.running: dict[str, _Run] = {}
        self.rounds = 0  # confirmations that answered (tests wait on the diagnostics instead)

    # -- what diagnostics show ------------------------------------------------------------------------

    def present(self, snap, result, findings: list[Finding]) -> list[Finding]:
        """`findings` as they may be shown now; starts a confirmation when this text has none.
        Only the static analysis' errors are judged: the compile rules' come from the compiler."""
        static = {id(f) for f in getattr(result, "findings", None) or ()}
        if not any(f.severity is Severity.ERROR and id(f) in static for f in findings):
            return findings
        others = [f for f in findings if id(f) not in static]
        return self._judged(snap, result, [f for f in findings if id(f) in static]) + others

    def _judged(self, snap, result, findings: list[Finding]) -> list[Finding]:
        from tritonlens.profiling import confirm_errors as ce

        settings = self.ls.settings.for_uri(snap.uri)
        if not settings.trusted:
            return ce.apply(findings, {}, default=UNTRUSTED)
        key = _text_key(snap.text)
        known = self.verdicts.get(snap.uri)
        if known is None or known.text != key:
            self._start(snap, result, key, settings)
        return self._view(result, findings, known, key)

    @staticmethod
    def _view(result, findings: list[Finding], known: _Verdicts | None, key: str) -> list[Finding]:
        """`findings` as `known` judges them for the text `key`."""
        from tritonlens.profiling import confirm_errors as ce

        if known is not None and known.text == key:
            return ce.apply(findings, known.judgements, default="not confirmed")
        if known is None:
            return ce.apply(findings, {}, default=PENDING)
        # Until the new answer: the old verdict of a finding whose kernel did not change.
        module = getattr(result, "module", None)
        carried = {}
        for f in findings:
            j = known.judgements.get(ce.key_of(f))
            k = module.kernel(f.kernel) if module is not None and f.kernel else None
            if j is not None and k is not None and known.kernels.get(k.name) == kernel_hash(k.text):
                carried[ce.key_of(f)] = j
        return ce.apply(findings, carried, default=PENDING)

    def _start(self, snap, result, key: str, settings) -> None:
        run = self.running.get(snap.uri)
        if run is not None and not run.task.done():
            if run.text == key:
                return
            run.cancel.set()  # an older text: its answer is worthless, its worker is killed
        cancel = threading.Event()
        task = self.ls.spawn(self._confirm(snap, result, key, settings, cancel))
        mine = self.running[snap.uri] = _Run(key, cancel, task)

        def finished(_task):
            if self.running.get(snap.uri) is mine:
                del self.running[snap.uri]

        task.add_done_callback(finished)

    async def _confirm(self, snap, result, key: str, settings, cancel: threading.Event) -> None:
        from tritonlens.profiling import confirm_errors as ce

        t0 = time.perf_counter()
        findings = list(getattr(result, "findings", None) or [])
        module = getattr(result, "module", None)
        # The model belongs to the analysis thread: its configurations are read there.
        request = await self.ls.analysis.run(ce.prepare, findings, module, snap.path or snap.uri)
        kernels = {}
        if module is not None:
            kernels = await self.ls.analysis.run(lambda: {k.name: kernel_hash(k.text) for k in module.kernels})
        try:
            version, lowered = ("", {})
            if request.kernels:  # the worker starts here, with the first error to confirm: most windows have none
                version, lowered = await asyncio.to_thread(ce.lower, request, settings.python or None, cancel,
                                                           float(settings.timeout_s))
            judgements = ce.judge(request, lowered, version)
        except ce.LowerError as exc:
            if cancel.is_set():
                return
            judgements = ce.judge(request, None, failure=f"Triton's front end could not be asked: {exc}")
        if cancel.is_set() or snap.uri not in self.ls.workspace.text_documents:
            return
        before = self._view(result, findings, self.verdicts.get(snap.uri), key)
        self.verdicts[snap.uri] = _Verdicts(key, judgements, kernels)
        self.rounds += 1
        counts = {v.value: sum(1 for j in judgements.values() if j.verdict is v) for v in ce.Verdict}
        log.info("confirmed the errors of %s in %.0f ms: %s", snap.uri, (time.perf_counter() - t0) * 1000, counts)
        if _shown(before) == _shown(self._view(result, findings, self.verdicts[snap.uri], key)):
            return  # the verdicts carried over from the previous text were right: nothing to redraw
        st = self.ls.analysis.docs.get(snap.uri)
        if st is not None:
            st.generation += 1
        self._show(snap.uri)

    def _show(self, uri: str) -> None:
        support = self.ls.client_support
        if not support.pull_diagnostics:
            self.ls.schedule_diagnostics(uri, 0)
        elif support.diagnostic_refresh:
            self.ls.workspace_diagnostic_refresh(None)

    # -- lifecycle ----------------------------------------------------------------------------------------

    def settings_changed(self) -> None:
        for uri in list(self.running):
            if not self.ls.settings.for_uri(uri).trusted:
                self.running.pop(uri).cancel.set()

    def closed(self, uri: str) -> None:
        run = self.running.pop(uri, None)
        if run is not None:
            run.cancel.set()
        self.verdicts.pop(uri, None)

    def shutdown(self) -> None:
        for run in self.running.values():
            run.cancel.set()
        self.running.clear()
        from tritonlens.profiling import confirm_errors as ce

        # Stopping a worker waits for its job, which the cancels above end within a poll.
        t = threading.Thread(target=ce.shutdown, name="tritonlens-confirm-shutdown", daemon=True)
        t.start()
        t.join(timeout=5)
