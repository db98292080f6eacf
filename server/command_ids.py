"""The workspace/executeCommand names the server handles (code lenses and clients send them)."""

PROFILE = "tritonlens.server.profile"
OPTIMIZE = "tritonlens.server.optimize"
REPORT = "tritonlens.server.report"
SHOW_IR = "tritonlens.server.showIr"
APPLY_EDIT = "tritonlens.server.applyEdit"
