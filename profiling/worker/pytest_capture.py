"""A pytest plugin for launch capture: which test is running (each launch is tagged with the node
that first made it), how the tests ended and why they failed, and a checkpoint after every test so
that launches seen before a crash or a timeout survive. Shipped with the worker folder.

    recorder = ...   # has .current_test (str | None), .checkpoint(), .until and .waiting
    pytest.main(args, plugins=[CapturePlugin(recorder)])

The plugin never changes how a test runs or what it reports; a failing test is counted and the
run goes on, so its launches before the failure are kept. When the recorder waits for kernels
(`until`: how many, `waiting`: those still without a record), it ends the session once the last of
them is recorded and the test function that recorded it has run all its parameter sets (its other
shapes, the largest the performance case), or after PATIENCE tests in a row that recorded none of
the kernels still missing: the rest would mostly repeat launches already recorded, each under
Triton's slow interpreter on a CPU. While it waits, each test function's smallest parameter set runs
first, one function after another, and the others after them: one launch of every kernel the tests
reach comes before any function's large shapes use the time up; once the last kernel is recorded, the
rest of the function that recorded it runs next (its larger shapes, which profiling replays
first). Each failure's cause is read from the
exception object itself (capture_causes.py), one per test file: a conftest that cannot be imported
stops pytest before any collection, so the configuration step is watched too.
"""

from __future__ import annotations

import sys

import pytest

try:  # imported as tritonlens.profiling.worker.pytest_capture
    from . import capture_causes
    from .project_capture_report import CAUSE_NO_TEST_RAN, CaptureCause
except ImportError:  # a plain file beside capture_causes.py
    import capture_causes
    from project_capture_report import CAUSE_NO_TEST_RAN, CaptureCause

# pytest's options that come from a plugin the project's configuration expects (addopts)
OPTION_PLUGINS = {"--cov": "pytest-cov", "--timeout": "pytest-timeout", "-n": "pytest-xdist",
                  "--dist": "pytest-xdist", "--reruns": "pytest-rerunfailures", "--benchmark": "pytest-benchmark",
                  "--hypothesis": "hypothesis", "--asyncio-mode": "pytest-asyncio", "--forked": "pytest-forked"}


PATIENCE = 30  # tests in a row that record no kernel waited for before the session ends


class CapturePlugin:
    def __init__(self, recorder, root: str | None = None):
        self.recorder = recorder
        self.root = root
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.first_failure: str | None = None  # "node: Type: message"
        self.first_skip: str | None = None  # "node: reason"
        self.causes: list[CaptureCause] = []  # the first failure's cause of each test file, in order
        self._files: set[str] = set()
        self._first_node: str | None = None
        self._session = None
        self._quiet = 0  # tests since one recorded a kernel waited for
        self._done_by: str | None = None  # the test that recorded the last kernel waited for
        self._waiting = len(getattr(recorder, "waiting", ()))
        self.stopped: str | None = None  # why the session ended early, when it did

    # -- configuration: a conftest that cannot be imported, options of a plugin not installed ------------
    @pytest.hookimpl(hookwrapper=True)  # the old style: a project's older pytest has it too
    def pytest_cmdline_parse(self, pluginmanager, args):
        outcome = yield
        if outcome.excinfo is not None:  # pytest goes on to report it as ever
            self._add(None, self._configuration_cause(outcome.excinfo[1]))

    def _configuration_cause(self, exc: BaseException) -> CaptureCause:
        if type(exc).__name__ == "UsageError":
            said = str(exc).strip().splitlines()[-1] if str(exc).strip() else "a usage error"
            plugin = next((p for opt, p in OPTION_PLUGINS.items() if f" {opt}" in f" {said}"), None)
            if plugin:
                fix = f"{sys.executable} -m pip install {plugin}"
                return CaptureCause(kind="missing_module", module=plugin.replace("-", "_"), python=sys.executable,
                                    fix=fix, exception=said,
                                    line=f"the project's pytest configuration needs {plugin} ({said}): {fix}")
            return CaptureCause(kind=CAUSE_NO_TEST_RAN, exception=said,
                                line=f"pytest refused the project's configuration: {said}")
        return capture_causes.cause_of(exc, None, python=sys.executable, root=self.root)

    def pytest_sessionstart(self, session):
        self._session = session

    def pytest_collection_modifyitems(self, session, config, items):
        if getattr(self.recorder, "until", 0):
            items[:] = smallest_first(items)

    # -- tests -------------------------------------------------------------------------------------------
    def pytest_runtest_logstart(self, nodeid, location):
        self.recorder.current_test = nodeid

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            if report.outcome == "passed":
                self.passed += 1
            elif report.outcome == "skipped":
                self.skipped += 1
                if self.first_skip is None:
                    reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else str(report.longrepr)
                    self.first_skip = f"{report.nodeid}: {str(reason).removeprefix('Skipped: ')}"[:300]
            else:
                self.failed += 1
                self._note(report)

    def pytest_runtest_logfinish(self, nodeid, location):
        self.recorder.current_test = None
        self.recorder.checkpoint()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        yield
        until = getattr(self.recorder, "until", 0)
        if not until or self._session is None or self._session.shouldstop:
            return
        waiting = len(self.recorder.waiting)
        self._quiet = 0 if waiting < self._waiting else self._quiet + 1
        self._waiting = waiting
        function = item.nodeid.split("[")[0]
        if not waiting:
            if self._done_by is None:
                self._done_by = item.nodeid
                nextitem = _rest_of_function_next(self._session.items, item) or nextitem
            if nextitem is None or nextitem.nodeid.split("[")[0] != function or self._quiet >= PATIENCE:
                self.stopped = f"each of the {until} kernels was recorded by {self._done_by}"
        elif self._quiet >= PATIENCE:
            self.stopped = (f"{until - waiting} of the {until} kernels were recorded, and the last {PATIENCE} tests "
                            f"recorded none of the others ({', '.join(sorted(self.recorder.waiting)[:3])}"
                            f"{', ...' if waiting > 3 else ''})")
        if self.stopped:
            self._session.shouldstop = self.stopped  # pytest stops before the next test

    def pytest_collectreport(self, report):
        if report.outcome == "failed":  # a test module (or a folder's conftest) that cannot even be imported
            self.failed += 1
            self._note(report)

    def pytest_exception_interact(self, node, call, report):
        """A test or a collector raised: its cause, from the exception object (not the report's text)."""
        if call.excinfo is None:
            return
        cause = capture_causes.cause_of(call.excinfo.value, report.nodeid or None, python=sys.executable,
                                        root=self.root)
        self._add(report.nodeid, cause)
        if report.nodeid == self._first_node and cause.exception:  # pytest reports before it calls this hook
            self.first_failure = f"{report.nodeid}: {cause.exception}"[:300]

    def _add(self, nodeid: str | None, cause: CaptureCause) -> None:
        file = (nodeid or "").split("::")[0]
        if file not in self._files:
            self._files.add(file)
            self.causes.append(cause)
            note = getattr(self.recorder, "note_causes", None)
            if note is not None:
                note(self.causes)

    def _note(self, report):
        if self.first_failure is None:
            self._first_node = report.nodeid
            cause = next((c for c in self.causes if c.test == report.nodeid), None)
            if cause is not None and cause.exception:
                self.first_failure = f"{report.nodeid}: {cause.exception}"[:300]
                return
            lines = [ln.strip() for ln in (report.longreprtext or "").splitlines() if ln.strip()]
            self.first_failure = f"{report.nodeid}: {lines[-1] if lines else report.outcome}"[:300]


def _function(item) -> str:
    return item.nodeid.split("[")[0]


def _size(item) -> int:
    """How large a test's case is: the product of its integer parameters (and of integer tuples, shapes)."""
    size = 1
    for value in getattr(getattr(item, "callspec", None), "params", {}).values():
        values = value if isinstance(value, (tuple, list)) else (value,)
        for v in values:
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                size *= v
    return size


def smallest_first(items: list) -> list:
    """`items` with each test function's smallest case first, in the functions' order, then the rest as they were."""
    firsts: dict[str, object] = {}
    for item in items:
        best = firsts.get(_function(item))
        if best is None or _size(item) < _size(best):
            firsts[_function(item)] = item
    chosen = set(map(id, firsts.values()))
    return list(firsts.values()) + [item for item in items if id(item) not in chosen]


def _rest_of_function_next(items: list, item):
    """Move the cases of `item`'s function still to run to right after it; the one now next, or None."""
    try:
        at = items.index(item)
    except ValueError:
        return None
    rest = [i for i in items[at + 1:] if _function(i) == _function(item)]
    if not rest:
        return None
    keep = set(map(id, rest))
    items[at + 1:] = rest + [i for i in items[at + 1:] if id(i) not in keep]
    return rest[0]
