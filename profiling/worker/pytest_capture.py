"""A pytest plugin for launch capture: which test is running (each launch is tagged with the node
that first made it), how the tests ended, and a checkpoint after every test so that launches seen
before a crash or a timeout survive. Standalone (pytest only), shipped with the worker folder.

    recorder = ...   # has .current_test (str | None) and .checkpoint()
    pytest.main(args, plugins=[CapturePlugin(recorder)])

The plugin never changes how a test runs or what it reports; a failing test is counted and the
run goes on, so its launches before the failure are kept.
"""

from __future__ import annotations


class CapturePlugin:
    def __init__(self, recorder):
        self.recorder = recorder
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.first_failure: str | None = None  # "node: last line of its error"

    def pytest_runtest_logstart(self, nodeid, location):
        self.recorder.current_test = nodeid

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            if report.outcome == "passed":
                self.passed += 1
            elif report.outcome == "skipped":
                self.skipped += 1
            else:
                self.failed += 1
                self._note(report)

    def pytest_runtest_logfinish(self, nodeid, location):
        self.recorder.current_test = None
        self.recorder.checkpoint()

    def pytest_collectreport(self, report):
        if report.outcome == "failed":  # a test module that cannot even be imported
            self.failed += 1
            self._note(report)

    def _note(self, report):
        if self.first_failure is None:
            lines = [ln.strip() for ln in (report.longreprtext or "").splitlines() if ln.strip()]
            self.first_failure = f"{report.nodeid}: {lines[-1] if lines else report.outcome}"[:300]
