"""A lean LSP client over a server's stdin/stdout for the benchmarks: JSON in, JSON out.

Timestamps are taken when a message's bytes have been read and decoded, so the figures are the
server's latency plus the pipe, not the cost of building typed objects on the client side (an
editor parses JSON natively). Subclasses say what to do with notifications (`on_notification`).
"""

from __future__ import annotations

import asyncio
import json
import os
import time


class WireClient:
    def __init__(self):
        self.pending: dict[int, asyncio.Future] = {}
        self.next_id = 0

    async def spawn(self, argv: list[str], root, capabilities: dict, initialization_options: dict) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL)
        self.reader = asyncio.ensure_future(self._read())
        await self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(),
                                          "capabilities": capabilities,
                                          "initializationOptions": initialization_options})
        self.notify("initialized", {})

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _send(self, msg: dict) -> None:
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def send_request(self, method: str, params) -> asyncio.Future:
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = fut
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return fut

    async def request(self, method: str, params, timeout: float = 60):
        msg = await asyncio.wait_for(self.send_request(method, params), timeout)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg.get("result")

    def on_notification(self, msg: dict, arrived: float) -> None:
        """A notification from the server, read at perf_counter() time `arrived`."""

    async def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = await out.readline()
                if not line:
                    for fut in self.pending.values():
                        if not fut.done():
                            fut.set_exception(ConnectionError("the server exited"))
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(await out.readexactly(length))
            now = time.perf_counter()
            if "method" in msg and "id" in msg:  # a request from the server
                result = [None for _ in msg["params"]["items"]] if msg["method"] == "workspace/configuration" else None
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif "method" in msg:
                self.on_notification(msg, now)
            elif msg.get("id") in self.pending:
                msg["_arrived"] = now  # latency ends here, not when we look at it
                self.pending.pop(msg["id"]).set_result(msg)

    async def stop(self) -> int | None:
        try:
            await self.request("shutdown", None, timeout=20)
            self.notify("exit", None)
            return await asyncio.wait_for(self.proc.wait(), 10)
        finally:
            if self.proc.returncode is None:
                self.proc.kill()
            self.reader.cancel()
