"""Where scripts/setup.d/40-vscode.sh put code-server, playwright-core and the .vsix (VS Code tests)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "client-vscode"
CACHE = Path(os.environ.get("TRITONLENS_CACHE", Path.home() / ".cache" / "tritonlens")) / "vscode"
OUTPUT = REPO / "tests" / "output" / "vscode"


def require(condition: bool, what: str) -> None:
    """Missing set-up: a failure in CI (scripts/setup.d/40-vscode.sh must have run), a skip elsewhere."""
    if condition:
        return
    message = f"{what}: run scripts/setup.d/40-vscode.sh"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def npm() -> str:
    path = shutil.which("npm")
    require(path is not None, "npm is not installed")
    return path


def newest_source_mtime() -> float:
    files = [CLIENT / "package.json", CLIENT / "esbuild.mjs", *CLIENT.glob("src/*.ts")]
    return max(f.stat().st_mtime for f in files)
