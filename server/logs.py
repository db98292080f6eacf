"""Logging: the tritonlens loggers go to the client (window/logMessage) and optionally a file.

pygls logs every message it sends at INFO; forwarding those to the client would send a log
message about each log message, so only the "tritonlens" loggers reach window/logMessage.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from lsprotocol import types

_LEVELS = [
    (logging.ERROR, types.MessageType.Error),
    (logging.WARNING, types.MessageType.Warning),
    (logging.INFO, types.MessageType.Info),
    (0, types.MessageType.Log),
]


class ClientLogHandler(logging.Handler):
    def __init__(self, server, level=logging.INFO):
        super().__init__(level)
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None
        self.loop_thread: int | None = None
        self._busy = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._busy, "on", False) or self.server.protocol.writer is None:
            return
        try:
            msg = self.format(record)
            kind = next(t for lvl, t in _LEVELS if record.levelno >= lvl)
            params = types.LogMessageParams(type=kind, message=msg)
            if self.loop is None:
                try:
                    self.loop = asyncio.get_running_loop()
                    self.loop_thread = threading.get_ident()
                except RuntimeError:
                    return  # before the server loop runs: the log file has it
            if threading.get_ident() == self.loop_thread:
                self._send(params)
            else:  # writes to the client happen on the loop's thread only
                self.loop.call_soon_threadsafe(self._send, params)
        except Exception:
            self.handleError(record)

    def _send(self, params) -> None:
        self._busy.on = True
        try:
            self.server.window_log_message(params)
        finally:
            self._busy.on = False


def setup_logging(server, log_file: str | None, level: str = "INFO") -> None:
    lvl = getattr(logging, level.upper(), logging.INFO)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    root = logging.getLogger()
    root.setLevel(logging.DEBUG if log_file else logging.WARNING)
    if log_file:
        fh = logging.FileHandler(log_file, encoding="utf-8")
        fh.setLevel(lvl)
        fh.setFormatter(fmt)
        root.addHandler(fh)
    else:
        # stderr is the client's log pane for most editors; keep it to problems.
        sh = logging.StreamHandler()
        sh.setLevel(logging.WARNING)
        sh.setFormatter(fmt)
        root.addHandler(sh)
    ours = logging.getLogger("tritonlens")
    ours.setLevel(min(lvl, logging.INFO))
    client = ClientLogHandler(server, lvl)
    client.setFormatter(logging.Formatter("%(message)s"))
    ours.addHandler(client)
