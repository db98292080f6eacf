"""pygls protocol with two holes closed.

1. pygls 2.1 deserializes a message inside `json.loads(object_hook=structure_message)`; when a
   request's params do not fit the lsprotocol type it raises there, `io_.run_async` logs the
   exception and the request id is lost: the client waits forever. Here such a request is answered
   with an InvalidParams error carrying its id, and a response the server cannot read fails the
   server's own pending request instead of leaving it hanging.
2. `workspace/executeCommand` hands command handlers only the arguments; the client's
   `workDoneToken` is kept in a context variable so long commands can report progress on it.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import traceback
import uuid
from concurrent.futures import Future
from typing import Any

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

log = logging.getLogger(__name__)

work_done_token: contextvars.ContextVar[types.ProgressToken | None] = contextvars.ContextVar(
    "tritonlens_work_done_token", default=None
)


class PreSerialized:
    """A result already in JSON form: sent as is, skipping cattrs (diagnostic lists of large files
    cost tens of milliseconds to unstructure on every publish)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Answered:
    """Stands for a message that was already dealt with while deserializing it."""

    jsonrpc = "answered"


class TritonLensProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if not isinstance(data, dict):
                raise
            cause = exc.__cause__ or exc
            detail = f"{type(cause).__name__}: {cause}"
            if "id" in data and "method" in data:
                err = JsonRpcInvalidParams(message=f"invalid params for {data['method']!r}: {detail}")
                log.error("answering request %s (%s) with InvalidParams: %s", data["id"], data["method"], detail)
                self._send_response(data["id"], error=err.to_response_error())
                return _Answered()
            if "id" in data and "method" not in data:
                # A response to one of our requests that we cannot read: fail that request.
                future = self._request_futures.pop(data["id"], None)
                self._result_types.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_exception(JsonRpcInternalError(message=f"unreadable response: {detail}"))
                return _Answered()
            log.error("dropping notification %s with invalid params: %s", data.get("method"), detail)
            return _Answered()

    def handle_message(self, message):
        if isinstance(message, _Answered):
            return
        try:
            return super().handle_message(message)
        except Exception:  # never let one message take the reader loop's error path
            log.error("failed to handle message: %s", traceback.format_exc())

    def _send_response(self, msg_id, result=None, error=None):
        if error is None and isinstance(result, PreSerialized):
            self._result_types.pop(msg_id, None)
            self._send_data({"jsonrpc": self.VERSION, "id": msg_id, "result": result.value})
            return
        super()._send_response(msg_id, result, error)

    def notify_json(self, method: str, params: dict) -> None:
        """A notification whose params are already JSON-ready."""
        self._send_data({"jsonrpc": self.VERSION, "method": method, "params": params})

    def request_json(self, method: str, params: dict):
        """A request whose params are already JSON-ready (a message action item carrying the
        client's command beside its title, which lsprotocol's types would drop); the answer is
        read as the method's result type. Awaitable."""
        msg_id = str(uuid.uuid4())
        future: Future = Future()
        self._request_futures[msg_id] = future
        self._result_types[msg_id] = self.get_result_type(method)
        self._send_data({"jsonrpc": self.VERSION, "id": msg_id, "method": method, "params": params})
        return asyncio.wrap_future(future)

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams):
        # Set inside the request's own context: the command's task copies it when created.
        work_done_token.set(params.work_done_token)
        return (yield from super().lsp_workspace__execute_command(params))
