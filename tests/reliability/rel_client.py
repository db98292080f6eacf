"""A real `tritonlens serve` over stdio, driven from a private event loop on a thread.

Hypothesis runs examples synchronously, one after another, while the server must stay the same
process for all of them (the point is that it survives them all). So the pytest-lsp client from
tests/server/conftest.py runs on its own loop in a background thread and each example submits a
coroutine to it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SERVER_TESTS = REPO / "tests" / "server"
if str(SERVER_TESTS) not in sys.path:
    sys.path.insert(0, str(SERVER_TESTS))


def _server_conftest():
    # Loaded under its own name: several test folders have a module called `conftest`.
    spec = importlib.util.spec_from_file_location("tritonlens_server_conftest", SERVER_TESTS / "conftest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


server_conftest = _server_conftest()
make_client = server_conftest.make_client
init_params = server_conftest.init_params
SERVER = server_conftest.SERVER


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


class LiveServer:
    """One server process for a whole test; `call(coro)` runs a coroutine on the client's loop."""

    def __init__(self, profile: str, root: Path, options: dict | None = None, args: list[str] | None = None,
                 env: dict | None = None):
        self.profile = profile
        self.root = root
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="lsp-client", daemon=True)
        self.thread.start()
        self.client = None
        self.init_result = self.call(self._start(options, args or [], env), timeout=60)

    async def _start(self, options, args, env):
        self.client = make_client()
        await self.client.start_io(*SERVER, *args, env=env)
        return await self.client.initialize_session(init_params(self.profile, self.root, options))

    def call(self, coro, timeout: float = 60):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    @property
    def process(self):
        return self.client._server

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.returncode is None and os.path.exists(f"/proc/{self.pid}")

    def rss_kb(self) -> int:
        return rss_kb(self.pid)

    def close(self) -> None:
        try:
            if self.alive():
                self.call(self.client.shutdown_session(), timeout=30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
