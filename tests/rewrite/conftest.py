"""Fixtures of the rewrite tests: a scripted OpenAI-compatible HTTP server on 127.0.0.1, and the
kernel fixture files (small shapes, so the interpreter verifies them in seconds)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from rewrite_support import FIXTURES, fenced  # noqa: F401  (names shared with the test modules)


class ScriptedLLM:
    """Serves /v1/chat/completions with scripted replies, in order, recording every request body.

    A script entry is a string (the assistant's content) or a dict:
    {"content": str, "sleep": seconds, "finish_reason": "stop" | "length",
     "reasoning_content": str, "usage": {"prompt_tokens", "completion_tokens", "total_tokens"}}
    or {"status": 429 | 500, "body": {...}}. With `reject_system` set (an error message), a request
    holding a system message is answered HTTP 400 with it, as servers whose chat template has no
    system role do, and consumes no entry. Requests may come concurrently: each is recorded with
    the times it arrived and was answered (time.monotonic()).
    """

    def __init__(self):
        self.script: list = []
        self.requests: list[dict] = []
        self.reject_system: str | None = None
        self.rejected = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output clean
                pass

            def do_POST(self):
                arrived = time.monotonic()
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                system = any(m.get("role") == "system" for m in body.get("messages") or [])
                with outer._lock:
                    if outer.reject_system and system:
                        outer.rejected += 1
                        step = {"status": 400, "body": {"error": {"message": outer.reject_system, "type": "BadRequestError",
                                                                  "code": 400}}}
                        record = None
                    else:
                        record = {"path": self.path, "body": body, "auth": self.headers.get("Authorization"),
                                  "arrived": arrived, "answered": None}
                        outer.requests.append(record)
                        step = outer.script.pop(0) if outer.script else {"status": 500, "body": {"error": "script exhausted"}}
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                if isinstance(step, str):
                    step = {"content": step}
                if step.get("sleep"):
                    time.sleep(step["sleep"])
                if record is not None:
                    record["answered"] = time.monotonic()
                if step.get("status"):
                    self._send(step["status"], step.get("body") or {"error": {"message": "scripted error"}})
                    return
                message = {"role": "assistant", "content": step["content"]}
                if "reasoning_content" in step:
                    message["reasoning_content"] = step["reasoning_content"]
                self._send(200, {
                    "id": f"chatcmpl-{len(outer.requests)}", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "scripted"),
                    "choices": [{"index": 0, "finish_reason": step.get("finish_reason", "stop"), "message": message}],
                    "usage": step.get("usage") or {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def llm_server():
    server = ScriptedLLM()
    yield server
    server.close()


@pytest.fixture
def fixture_text():
    def read(name: str) -> str:
        return (FIXTURES / name).read_text(encoding="utf-8")

    return read
