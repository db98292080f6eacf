import shutil
import sys
from pathlib import Path

import pytest

PY = sys.executable
REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


@pytest.fixture(autouse=True)
def _interpreter_env(monkeypatch):
    # No GPU here: every worker runs Triton's interpreter on CPU tensors.
    monkeypatch.setenv("TRITON_INTERPRET", "1")


@pytest.fixture
def worker_copy(tmp_path):
    """A copy of the worker folder that tests may add job modules to."""
    from tritonlens.profiling.client import WORKER_DIR

    dest = tmp_path / "worker"
    shutil.copytree(WORKER_DIR, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest

