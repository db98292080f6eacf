"""Settings: initializationOptions (dict or per-folder list), workspace/configuration,
didChangeConfiguration; invalid values give an error message and defaults, never a crash."""

from __future__ import annotations

import asyncio

import pytest

from lsprotocol import types

from lsp_helpers import Doc, pulls
from test_diagnostics import copy, tl001


async def _wait(pred, timeout=10.0):
    for _ in range(int(timeout / 0.05)):
        if pred():
            return True
        await asyncio.sleep(0.05)
    return pred()


async def test_ignore_from_initialization_options(bare_client, tmp_path):
    await bare_client.initialize_for_test({"ignore": ["TL001"], "debounceMs": 20})
    doc = Doc(bare_client, copy(tmp_path, "scale.py")).open()
    diags = await doc.diagnostics()
    assert tl001(diags) == []
    assert not bare_client.messages


async def test_select_and_per_folder_list(bare_client, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    await bare_client.initialize_for_test([
        {"scopeUri": tmp_path.as_uri(), "settings": {"select": ["TL001"], "debounceMs": 20}},
        {"scopeUri": other.as_uri(), "settings": {"ignore": ["TL001"], "debounceMs": 20}},
    ])
    a = Doc(bare_client, copy(tmp_path, "scale.py")).open()
    assert {d.code for d in await a.diagnostics()} == {"TL001"}
    b = Doc(bare_client, copy(other, "scale.py")).open()
    assert tl001(await b.diagnostics()) == []


async def test_invalid_settings_report_and_fall_back(bare_client, tmp_path):
    await bare_client.initialize_for_test({"debounceMs": "fast", "ignore": "TL001", "backend": "ftp://x",
                                           "targetGpu": 7, "surprise": 1})
    assert await _wait(lambda: bare_client.messages)
    msg = bare_client.messages[0]
    assert msg.type == types.MessageType.Error
    for key in ("debounceMs", "ignore", "backend", "targetGpu", "surprise"):
        assert key in msg.message
    # defaults apply: TL001 is not ignored and the server works
    doc = Doc(bare_client, copy(tmp_path, "scale.py")).open()
    assert len(tl001(await doc.diagnostics())) == 1


async def test_did_change_configuration_republishes(bare_client, tmp_path):
    client = bare_client
    await client.initialize_for_test({"debounceMs": 20})
    doc = Doc(client, copy(tmp_path, "scale.py")).open()
    assert len(tl001(await doc.diagnostics())) == 1
    before = len(client.publications)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"tritonlens": {"ignore": ["TL001"], "debounceMs": 20}}))
    if pulls(client):
        assert tl001(await doc.diagnostics()) == []
    else:
        assert await _wait(lambda: len(client.publications) > before)
        assert tl001(client.published[doc.uri].diagnostics) == []
        assert client.published[doc.uri].version == doc.version


async def test_workspace_configuration_pull(bare_client, tmp_path):
    # The client holds the settings; the server asks for them after `initialized`.
    await bare_client.initialize_for_test({"debounceMs": 20}, configuration={"ignore": ["TL001"], "debounceMs": 20})
    doc = Doc(bare_client, copy(tmp_path, "scale.py")).open()
    await asyncio.sleep(0.3)  # the configuration round trip follows `initialized`
    assert tl001(await doc.diagnostics()) == []
    # the user changes the setting; the client says so without a payload (pull model)
    bare_client.set_configuration({"ignore": [], "debounceMs": 20}, section="tritonlens")
    n = len(bare_client.publications)
    bare_client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    if pulls(bare_client):
        await asyncio.sleep(0.3)
        assert len(tl001(await doc.diagnostics())) == 1
    else:
        assert await _wait(lambda: len(bare_client.publications) > n
                           and tl001(bare_client.published[doc.uri].diagnostics))


async def test_debounce_is_honoured(bare_client, tmp_path):
    await bare_client.initialize_for_test({"debounceMs": 600})
    if pulls(bare_client):
        pytest.skip("pull clients decide when to ask; the server does not debounce them")
    doc = Doc(bare_client, copy(tmp_path, "scale.py")).open()
    await doc.diagnostics()
    n = len(bare_client.publications)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    doc.replace(doc.text + "\n")
    await doc.diagnostics()
    elapsed = loop.time() - t0
    assert elapsed >= 0.55, f"published {elapsed:.3f}s after the change, debounce is 0.6s"
    assert len(bare_client.publications) == n + 1


async def test_target_gpu_reaches_the_rules(bare_client, tmp_path):
    """TL013 judges shared memory against the GPU the user targets."""
    from pathlib import Path

    fixture = next((Path(__file__).parents[1] / "fixtures" / "rules" / "TL013").glob("positive*.py"))
    target = tmp_path / "tiles.py"
    target.write_text(fixture.read_text())
    await bare_client.initialize_for_test({"select": ["TL013"], "targetGpu": "A100", "debounceMs": 20})
    diags = await Doc(bare_client, target).open().diagnostics()
    messages = [d.message for d in diags if d.code == "TL013"]
    assert messages and all("A100" in m for m in messages), messages
