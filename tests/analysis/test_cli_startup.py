"""`tritonlens check` on files that cannot hold a kernel answers without loading the analyzer
(its start-up is what a pre-commit hook pays per run), and says the same as the analyzer would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from tritonlens.cli import main
code = main(["check", *sys.argv[1:]])
heavy = [m for m in ("tritonlens.analysis.engine", "tritonlens.analysis.rules", "tree_sitter_python") if m in sys.modules]
print("LOADED=" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


def _check(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120, check=False)


def test_files_without_kernels_skip_the_analyzer(tmp_path: Path):
    empty = tmp_path / "empty.py"
    empty.write_text("")
    plain = tmp_path / "plain.py"
    plain.write_text("import os\n\n\ndef main():\n    print(os.getcwd())\n")
    proc = _check(str(empty), str(plain))
    assert proc.returncode == 0, proc.stderr
    assert "LOADED=\n" in proc.stderr or proc.stderr.rstrip().endswith("LOADED=")
    assert "0 findings in 2 files" in proc.stderr
    as_json = _check("--format", "json", str(empty))
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == []


def test_a_kernel_file_still_loads_the_analyzer_and_reports(tmp_path: Path):
    kernel = tmp_path / "k.py"
    kernel.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, 100), 1.0)\n")
    proc = _check(str(kernel))
    assert proc.returncode == 1, proc.stderr
    assert "TL001" in proc.stdout
    assert "tritonlens.analysis.engine" in proc.stderr.split("LOADED=")[1]
