"""Every request gets an answer: bad params, bad command arguments, unknown commands."""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from lsp_helpers import Doc, pulls
from test_diagnostics import copy

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def client(module_client):
    """This module's tests share one server per client profile."""
    return module_client


async def test_request_with_unreadable_params_is_answered(client, tmp_path):
    # pygls 2.1 logs such a request and never answers it; the server must answer InvalidParams.
    # Sent raw: the client's own types would refuse to serialize these params.
    msg_id = "tritonlens-test-bad-params"
    fut = concurrent.futures.Future()
    client.protocol._request_futures[msg_id] = fut
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": types.TEXT_DOCUMENT_HOVER,
                                "params": {"textDocument": {"uri": 5}, "position": "nowhere"}})
    fut = asyncio.wrap_future(fut)
    with pytest.raises(JsonRpcInvalidParams, match="textDocument/hover"):
        await asyncio.wait_for(fut, 10)
    # and the server keeps working
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    assert await doc.diagnostics()


async def test_command_argument_errors(client, tmp_path):
    with pytest.raises(JsonRpcException, match=r"expected arguments \[uri, kernelName\]"):
        await asyncio.wait_for(client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tritonlens.server.profile", arguments=[])), 10)
    with pytest.raises(JsonRpcException, match="not defined"):
        await asyncio.wait_for(client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tritonlens.server.nope", arguments=[])), 10)


async def test_commands_are_advertised(client):
    caps = client.init_result.capabilities
    cmds = set(caps.execute_command_provider.commands)
    assert {"tritonlens.server.profile", "tritonlens.server.optimize", "tritonlens.server.report",
            "tritonlens.server.showIr"} <= cmds
    assert caps.hover_provider and caps.code_lens_provider
    kinds = set(caps.code_action_provider.code_action_kinds)
    assert {"quickfix", "source.fixAll.tritonlens"} <= kinds
    resolves = bool(client.capabilities.text_document.code_action.resolve_support)
    assert bool(caps.code_action_provider.resolve_provider) == resolves
    # pull diagnostics are offered exactly to the clients that pull and take a refresh
    assert (caps.diagnostic_provider is not None) == pulls(client)


async def test_logs_reach_the_client(client):
    # window/logMessage carries the server's log (the initialize line at least)
    assert any("tritonlens" in m.message and "initializing" in m.message for m in client.log_messages)
