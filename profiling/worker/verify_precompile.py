"""Job "verify", action "precompile": compile every kernel a batch of candidates will launch, in
parallel threads, before the candidates run one by one.

Why: a candidate's first run compiles its kernels, one after another, and on real code that is
most of an optimize's time (a conv2d's config search spent 98 s of 108 compiling). Triton compiles
a kernel with the GIL released through most of its passes and runs ptxas as a process of its own,
so threads overlap well. Each candidate is run once on the shapes its checks will use, with every
Triton launch turned into a warm-up (compile, no launch) under Triton's AsyncCompileMode, which
hands each compile to the pool; an autotuned kernel warms every config. What the threads build
lands in Triton's cache on disk, where the candidates' own runs, in this job's worker or a fresh
one, find it by the same key (the kernel's source and its specialisation).

Nothing here is evidence: a wrapper whose launches did nothing may fail afterwards (its outputs
were never written), and that failure is ignored; a candidate's real error shows when it runs.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor, wait

from verify_clock import CLOCK
from verify_inputs import clone_tree
from verify_side import Side
from verify_tracking import GPU, GUARDS

try:
    from triton.runtime._async_compile import AsyncCompileMode, active_mode
except ImportError:  # a Triton without it: candidates compile as they run
    AsyncCompileMode = active_mode = None

MAX_THREADS = 16


def threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(MAX_THREADS, cores))


def precompile(session, job, deadline_s: float | None) -> dict:
    """Warm the compile cache for `job.candidates`; returns {"compiled", "threads", "note"}."""
    if not GPU:
        return {"compiled": 0, "threads": 0, "note": "the interpreter compiles nothing"}
    if AsyncCompileMode is None:
        return {"compiled": 0, "threads": 0, "note": "this Triton has no AsyncCompileMode: kernels compile as they run"}
    started = time.perf_counter()
    plan = session.plan()
    if job.tune is not None:  # ahead of "tune" jobs: their quick check runs the first two shapes only
        plan = plan[:2]
    shapes = list(dict.fromkeys(case for _, case in plan))  # one run a distinct shape: seeds share them
    n = threads()
    pool = ThreadPoolExecutor(n, thread_name_prefix="tritonlens-compile")
    mode = AsyncCompileMode(pool, ignore_errors=True)
    tracker = session.tracker
    with CLOCK.phase("compile"):
        mode.__enter__()
        tracker.discover = True
        try:
            for cand in job.candidates:
                try:
                    side = Side(f"pre_{session.tag}_{cand.id}", session.name, cand.source, session.workdir,
                                session.package_path, session.job.sys_path)
                except Exception:
                    continue  # its own check reports the import error
                for case in shapes:
                    fn, args, kwargs = session.inputs(session.seeds[0], case)
                    fn = side.resolve(fn, session.original)
                    if fn is None:
                        break
                    a, k = clone_tree((args, kwargs))
                    try:
                        fn(*a, **k)
                    except Exception:  # outputs nobody wrote, or a real error its check will name
                        pass
                    finally:
                        tracker.local.depth = 0
                        tracker.discovered = 0
                        GUARDS.clear()
        finally:
            tracker.discover = False
            active_mode.set(None)  # the mode's own exit would wait on every compile, past any deadline
        futures = list(mode.raw_futures)
        left = None if deadline_s is None else max(0.0, deadline_s - (time.perf_counter() - started))
        done, pending = wait(futures, timeout=left)
        pool.shutdown(wait=False, cancel_futures=True)  # those running finish in the background
    failed = sum(1 for f in done if f.exception() is not None)
    note = f"compiled {len(done) - failed} kernel(s) ahead in {n} threads"
    if failed:
        note += f"; {failed} failed (their candidates' checks say why)"
    if pending:
        note += f"; {len(pending)} still compiling at the deadline"
    return {"compiled": len(done) - failed, "threads": n, "note": note}
