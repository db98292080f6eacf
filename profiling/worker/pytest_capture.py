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

    def pytest_runtest_logfinish(self, nodeid, location):
        self.recorder.current_test = None
        self.recorder.checkpoint()

    def pytest_collectreport(self, report):
        if report.outcome == "failed":  # a test module that cannot even be imported
            self.failed += 1
