"""A raw JSON-RPC peer for `tritonlens serve`: writes frames byte for byte (malformed ones too) and
reads what comes back, so no client library smooths over what the server really does."""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
import time

from rel_client import SERVER


def _key(msg_id):
    return json.dumps(msg_id, sort_keys=True)  # ids of any JSON type, even invalid ones


class RawServer:
    def __init__(self, args: list[str] | None = None, env: dict | None = None, cwd: str | None = None):
        self.proc = subprocess.Popen([*SERVER, *(args or [])], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.messages: queue.Queue = queue.Queue()
        self.responses: dict = {}
        self.notifications: list[dict] = []
        self.stderr = bytearray()
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # -- transport ------------------------------------------------------------------------
    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self._cond:
                        self._cond.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = json.loads(out.read(length))
            with self._cond:
                if "id" in body and "method" not in body:
                    self.responses[_key(body["id"])] = body
                elif "id" in body:  # a request from the server: answer it so it does not wait
                    self._write_obj({"jsonrpc": "2.0", "id": body["id"], "result": None})
                    self.notifications.append(body)
                else:
                    self.notifications.append(body)
                self._cond.notify_all()

    def _drain_stderr(self) -> None:
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            self.stderr += chunk

    def write_bytes(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def frame(self, body: bytes) -> None:
        self.write_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _write_obj(self, obj) -> None:
        self.frame(json.dumps(obj).encode())

    # -- JSON-RPC -------------------------------------------------------------------------
    def request(self, method: str, params=None, *, msg_id=None, omit_params: bool = False):
        msg_id = next(self._ids) if msg_id is None else msg_id
        msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if not omit_params:
            msg["params"] = params
        self._write_obj(msg)
        return msg_id

    def notify(self, method: str, params=None) -> None:
        self._write_obj({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, msg_id, timeout: float = 20) -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            while _key(msg_id) not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"no answer to request {msg_id!r} (server exit code {self.proc.poll()}); "
                                       f"stderr tail: {bytes(self.stderr[-2000:]).decode(errors='replace')}")
                self._cond.wait(min(left, 0.2))
            return self.responses.pop(_key(msg_id))

    def call(self, method: str, params=None, timeout: float = 20, **kw) -> dict:
        return self.wait(self.request(method, params, **kw), timeout)

    def initialize(self, capabilities: dict | None = None, options=None, root_uri: str | None = None) -> dict:
        reply = self.call("initialize", {"processId": None, "rootUri": root_uri, "capabilities": capabilities or {},
                                         "initializationOptions": options}, timeout=60)
        self.notify("initialized", {})
        return reply

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> int | None:
        if self.alive():
            try:
                self.call("shutdown", None, timeout=10)
                self.notify("exit", None)
                self.proc.stdin.close()
                return self.proc.wait(10)
            except (OSError, TimeoutError, subprocess.TimeoutExpired):
                pass  # killed below
        if self.proc.poll() is None:
            self.proc.kill()
        return self.proc.wait(10)


def pygls_capabilities(name: str) -> dict:
    """A pytest-lsp client capability profile as the JSON an editor would send."""
    from pygls.protocol import default_converter
    from pytest_lsp import client_capabilities

    return default_converter().unstructure(client_capabilities(name))
