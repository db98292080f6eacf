"""Every LSP handler answers: a failure inside one is logged and the client gets what is known.

Editors ask for hovers, hints, lenses and diagnostics on every keystroke, on text that is
mid-edit and often broken; an error answer surfaces as a toast the user did not ask for, and a
failed diagnostic pull makes VS Code stop pulling that document. So a handler that raises answers
with its method's empty result (a resolve with the item it was given, a pull with "unchanged"
when the client holds a report), and the traceback goes to the log.

Errors a handler raises on purpose (pygls' JsonRpcException: a stale code action, bad params)
are answers, and pass through. Methods outside the LSP specification (tritonlens/showIr) and
workspace/executeCommand are explicit user actions whose failure the user must see: not guarded.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

log = logging.getLogger(__name__)


def _empty_list(_params) -> list:
    return []


def _nothing(_params) -> None:
    return None


def _same_item(item):
    return item


def _pull_fallback(params: types.DocumentDiagnosticParams):
    # "unchanged" keeps what the client shows; an empty full report would wipe it.
    if params is not None and params.previous_result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=params.previous_result_id)
    return types.RelatedFullDocumentDiagnosticReport(items=[])


FALLBACKS: dict[str, Callable[[Any], Any]] = {
    types.TEXT_DOCUMENT_INLAY_HINT: _empty_list,
    types.TEXT_DOCUMENT_CODE_LENS: _empty_list,
    types.TEXT_DOCUMENT_DOCUMENT_SYMBOL: _empty_list,
    types.TEXT_DOCUMENT_COMPLETION: _empty_list,
    types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL: lambda _p: types.SemanticTokens(data=[]),
    types.CODE_ACTION_RESOLVE: _same_item,
    types.CODE_LENS_RESOLVE: _same_item,
    types.INLAY_HINT_RESOLVE: _same_item,
    types.COMPLETION_ITEM_RESOLVE: _same_item,
    types.TEXT_DOCUMENT_DIAGNOSTIC: _pull_fallback,
}


def guarded(method: str, fn: Callable) -> Callable:
    """`fn` as a handler of `method` that never raises an unexpected exception to the client.

    The wrapper keeps `fn`'s signature (pygls passes the server to handlers that name it) and
    its kind (pygls awaits coroutine functions)."""
    if method not in types.METHOD_TO_TYPES or method == types.WORKSPACE_EXECUTE_COMMAND:
        return fn
    fallback = FALLBACKS.get(method, _nothing)
    is_request = types.METHOD_TO_TYPES[method][1] is not None

    def failed(args) -> Any:
        params = args[-1] if args else None
        uri = getattr(getattr(params, "text_document", None), "uri", None)
        log.exception("%s failed%s; answered with %s", method, f" for {uri}" if uri else "",
                      "what is known" if is_request else "nothing (a notification)")
        try:
            return fallback(params) if is_request else None
        except Exception:  # a fallback must never be the next failure
            log.exception("the fallback answer of %s failed", method)
            return None

    if asyncio.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def guard_async(*args, **kwargs):
            try:
                return await fn(*args, **kwargs)
            except (JsonRpcException, asyncio.CancelledError):
                raise
            except Exception:  # noqa: BLE001 - logged with its traceback by `failed`
                return failed(args)

        return guard_async

    @functools.wraps(fn)
    def guard(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except JsonRpcException:
            raise
        except Exception:  # noqa: BLE001 - logged with its traceback by `failed`
            return failed(args)

    return guard
