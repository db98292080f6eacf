"""The extension's TypeScript unit tests (node --test), run through pytest so CI runs them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile

from vscode_env import CLIENT, npm, require


def test_typescript_unit_tests():
    require((CLIENT / "node_modules" / ".bin" / "tsc").exists(), "client-vscode/node_modules is missing")
    env = {**os.environ, "TRITONLENS_TEST_PYTHON": sys.executable, "NO_COLOR": "1"}
    run = subprocess.run([npm(), "test"], cwd=CLIENT, env=env, check=False, capture_output=True, text=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    passed = int(re.search(r"^# pass (\d+)", out, re.MULTILINE).group(1))
    failed = int(re.search(r"^# fail (\d+)", out, re.MULTILINE).group(1))
    skipped = int(re.search(r"^# skipped (\d+)", out, re.MULTILINE).group(1))
    assert failed == 0 and skipped == 0, out[-6000:]
    assert passed >= 20, out[-6000:]


def test_typecheck():
    require((CLIENT / "node_modules" / ".bin" / "tsc").exists(), "client-vscode/node_modules is missing")
    run = subprocess.run([npm(), "run", "--silent", "typecheck"], cwd=CLIENT, check=False, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


def test_vsix_holds_the_bundle_and_no_node_modules(vsix):
    names = zipfile.ZipFile(vsix).namelist()
    assert "extension/dist/extension.js" in names, names
    assert "extension/package.json" in names, names
    assert not [n for n in names if "node_modules" in n or n.endswith(".ts") or "/src/" in n], names
    manifest = zipfile.ZipFile(vsix).read("extension/package.json").decode()
    assert '"untrustedWorkspaces"' in manifest
