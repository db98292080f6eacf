"""Per-document analysis: one analyzer, run on its own thread, results kept per version.

The engine's analyzer parses each document incrementally from its previous tree (keyed by URI)
and keeps a per-kernel cache; every analysis, and every feature's work on the `Kernel`/`Module`
objects it hands out (`run`), goes through one single-thread executor, so the event loop only
awaits and those objects are touched by one thread.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from concurrent.futures import ThreadPoolExecutor

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.prefilter import may_hold_kernels

from .documents import DocumentState, Snapshot

log = logging.getLogger(__name__)

# The server's heap holds every open document's trees and kernel models, and each edit that moves
# lines rebuilds some models. With Python's default thresholds (700, 10, 10) the collector scanned
# that heap in full every few edits: on the 2,100-line benchmark file, pauses of ~100 ms that made
# the 95th percentile of typing 4x its median. At these thresholds it runs a few times per hundred
# edits there (cyclic garbage, such as scopes' closures, is still collected).
GC_THRESHOLDS = (10_000, 10, 10)


class AnalysisService:
    def __init__(self):
        gc.set_threshold(*GC_THRESHOLDS)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tritonlens-analysis")
        self._analyzer = Analyzer()
        self.docs: dict[str, DocumentState] = {}
        # (uri, version, settings_key) -> future of the analysis in flight, so that a hover and a
        # publish asking for the same version share one run.
        self._inflight: dict[tuple, asyncio.Future] = {}
        self.last_duration_ms: float = 0.0

    def state(self, uri: str) -> DocumentState:
        st = self.docs.get(uri)
        if st is None:
            st = self.docs[uri] = DocumentState(uri)
        return st

    def forget(self, uri: str) -> None:
        self.docs.pop(uri, None)
        self._pool.submit(self._analyzer.forget, uri)

    def _analyze_sync(self, snap: Snapshot, select, ignore, target=None):
        t0 = time.perf_counter()
        result = self._analyzer.analyze(snap.text, path=snap.path, select=list(select) or None,
                                        ignore=list(ignore) or None, doc_id=snap.uri, target=target)
        self.last_duration_ms = (time.perf_counter() - t0) * 1000
        log.debug("analyzed %s v%s in %.1f ms: %d kernels re-analysed, %d moved", snap.uri, snap.version,
                  self.last_duration_ms, len(result.reanalyzed), len(result.remodeled))
        return result

    async def analyze(self, snap: Snapshot, settings) -> object | None:
        """The analysis of `snap` under `settings`; cached while the version and settings hold.

        Files that cannot hold a kernel skip the analyzer; their result is None.
        """
        st = self.state(snap.uri)
        key = settings.analysis_key()
        if st.current_for(snap, key):
            return st.result
        if not may_hold_kernels(snap.text):
            st.analyzed, st.result, st.settings_key = snap, None, key
            return None
        flight_key = (snap.uri, snap.version, hash(snap.text), key)
        fut = self._inflight.get(flight_key)
        if fut is None:
            loop = asyncio.get_running_loop()
            fut = loop.run_in_executor(self._pool, self._analyze_sync, snap, settings.select, settings.ignore,
                                       settings.target_gpu)
            self._inflight[flight_key] = fut
            fut.add_done_callback(lambda _f: self._inflight.pop(flight_key, None))
        result = await asyncio.shield(fut)
        # Only a newer-or-equal snapshot may replace what is stored.
        if st.analyzed is None or st.analyzed.version is None or snap.version is None or snap.version >= st.analyzed.version:
            st.analyzed, st.result, st.settings_key = snap, result, key
        return result

    async def run(self, fn, *args):
        """Run `fn(*args)` on the analysis thread: shape inference and estimates read and fill
        caches on the shared `Kernel`/`Module` objects, which only that thread may touch."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

