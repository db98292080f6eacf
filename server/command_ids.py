"""The workspace/executeCommand names the server handles (code lenses and clients send them)."""

PROFILE = "tritonlens.server.profile"
OPTIMIZE = "tritonlens.server.optimize"
REPORT = "tritonlens.server.report"
SHOW_IR = "tritonlens.server.showIr"
APPLY_EDIT = "tritonlens.server.applyEdit"
CAPTURE = "tritonlens.server.capture"  # [uri]: record the launches of the tests that reach the file, now
CAPTURE_COMMAND = "tritonlens.server.captureCommand"  # [uri, "pytest ..."]: record a command of its project
USE_HARNESS = "tritonlens.server.useHarness"  # [uri, "FILE.py::FUNCTION"]: profile the file with it
OPEN_PROFILE = "tritonlens.server.openProfile"  # [uri, "prof.json"]: a recorded ProfileReport as its measurement
