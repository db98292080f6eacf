"""Fixtures of the VS Code tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from vscode_env import CLIENT, newest_source_mtime, npm, require


@pytest.fixture(scope="session")
def vsix() -> Path:
    """The packaged extension, rebuilt when a source is newer than it (a developer's edit loop)."""
    require((CLIENT / "node_modules" / ".bin" / "vsce").exists(), "client-vscode/node_modules is missing")
    out = CLIENT / "tritonlens.vsix"
    if not out.exists() or out.stat().st_mtime < newest_source_mtime():
        subprocess.run([npm(), "run", "--silent", "package"], cwd=CLIENT, check=True, capture_output=True, timeout=300)
    return out
