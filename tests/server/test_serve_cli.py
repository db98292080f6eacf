"""`tritonlens serve`: TCP for debugging, a log file, usage errors."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _frame(msg: dict) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read(sock_file) -> dict:
    length = None
    while True:
        line = sock_file.readline()
        assert line, "connection closed"
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(sock_file.read(length))


def _until_response(f, msg_id):
    while True:
        msg = _read(f)
        if msg.get("id") == msg_id and "method" not in msg:
            return msg


def test_serve_over_tcp_with_a_log_file(tmp_path):
    port, log = _free_port(), tmp_path / "server.log"
    proc = subprocess.Popen([sys.executable, "-m", "tritonlens", "serve", "--tcp", f"127.0.0.1:{port}",
                             "--log-file", str(log)], stderr=subprocess.PIPE)
    try:
        for _ in range(200):
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("server never listened")
        f = sock.makefile("rb")
        sock.sendall(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}))
        init = _until_response(f, 1)
        assert init["result"]["serverInfo"]["name"] == "tritonlens"
        assert init["result"]["capabilities"]["hoverProvider"]
        sock.sendall(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        kernel = tmp_path / "k.py"
        kernel.write_text("import triton\nimport triton.language as tl\n\n@triton.jit\n"
                          "def k(x_ptr):\n    tl.store(x_ptr + tl.arange(0, 100), 1.0)\n")
        sock.sendall(_frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": kernel.as_uri(), "languageId": "python", "version": 1, "text": kernel.read_text()}}}))
        while True:
            msg = _read(f)
            if msg.get("method") == "textDocument/publishDiagnostics":
                break
        assert "TL001" in {d["code"] for d in msg["params"]["diagnostics"]}
        sock.sendall(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None}))
        _until_response(f, 2)
        sock.sendall(_frame({"jsonrpc": "2.0", "method": "exit", "params": None}))
        sock.close()
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert f"starting on tcp 127.0.0.1:{port}" in text
    assert "initializing for" in text


def test_bad_tcp_address_is_a_usage_error():
    proc = subprocess.run([sys.executable, "-m", "tritonlens", "serve", "--tcp", "nowhere"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "expected HOST:PORT" in proc.stderr
