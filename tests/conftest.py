"""Suite-wide isolation: no test reads or writes the user's caches.

XDG_CACHE_HOME points at a fresh folder for the whole run (set at import, so worker processes,
language servers and editors started by tests inherit it): compile answers, measured ceilings
and profiles cached by an earlier run, or by the developer's own use, cannot make a test pass or
fail. TRITONLENS_CACHE is left alone: it locates installed tools (code-server), not answers.
"""

from __future__ import annotations

import os
import shutil
import tempfile

_CACHE = tempfile.mkdtemp(prefix="tritonlens-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE, ignore_errors=True)
