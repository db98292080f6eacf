"""Settings: initializationOptions (dict or per-folder list), workspace/configuration,
didChangeConfiguration; invalid values give an error message and defaults, never a crash."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import Doc, pulls
from lsprotocol import types
from test_diagnostics import copy, tl001

# Computed here: `from conftest import` finds whichever conftest.py pytest imported first.
REPO = Path(__file__).resolve().parents[2]


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
        # A publication already under way for other reasons (the Triton API index arriving) may
        # land first, under the settings of its time; the change's own one follows.
        assert await _wait(lambda: len(client.publications) > before
                           and tl001(client.published[doc.uri].diagnostics) == [])
        assert tl001(client.published[doc.uri].diagnostics) == []
        assert client.published[doc.uri].version == doc.version


async def test_workspace_configuration_pull(bare_client, tmp_path):
    # The client holds the settings; the server asks for them after `initialized`.
    await bare_client.initialize_for_test({"debounceMs": 20}, configuration={"ignore": ["TL001"], "debounceMs": 20})
    doc = Doc(bare_client, copy(tmp_path, "scale.py")).open()

    async def settles_at(count: int) -> bool:  # the configuration round trip takes its time under load
        for _ in range(40):
            if len(tl001(await doc.diagnostics())) == count:
                return True
            await asyncio.sleep(0.25)
        return False

    assert await settles_at(0)
    # the user changes the setting; the client says so without a payload (pull model)
    bare_client.set_configuration({"ignore": [], "debounceMs": 20}, section="tritonlens")
    n = len(bare_client.publications)
    bare_client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    if pulls(bare_client):
        assert await settles_at(1)
    else:
        assert await _wait(lambda: len(bare_client.publications) > n
                           and tl001(bare_client.published[doc.uri].diagnostics))


async def test_debounce_is_honoured(bare_client, tmp_path):
    await bare_client.initialize_for_test({"debounceMs": 600})
    if pulls(bare_client):
        pytest.skip("pull clients decide when to ask; the server does not debounce them")
    doc = Doc(bare_client, copy(tmp_path, "scale.py")).open()
    await doc.settled()  # its error judged by Triton's front end, and published again
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


# -- one schema: Settings is the source of package.json, the client's types and the README ----------

def _schema_module():
    import importlib.util


    spec = importlib.util.spec_from_file_location("gen_settings", REPO / "scripts" / "gen_settings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_client_files_are_current():
    gen = _schema_module()
    assert gen.PACKAGE_JSON.read_text(encoding="utf-8") == gen.render_package(), "run scripts/gen_settings.py"
    assert gen.SCHEMA_TS.read_text(encoding="utf-8") == gen.schema_ts(), "run scripts/gen_settings.py"


def test_package_json_agrees_with_settings():
    import json

    from tritonlens.analysis import gpus
    from tritonlens.server.config import meta_of

    gen = _schema_module()
    props = json.loads(gen.PACKAGE_JSON.read_text(encoding="utf-8"))["contributes"]["configuration"]["properties"]
    leaves = {f"tritonlens.{key}": (field, default) for key, field, default in gen.flat_fields()
              if meta_of(field).contributed}
    assert set(props) - set(leaves) == set(gen.CLIENT_SETTINGS)
    for key, (field, default) in leaves.items():
        schema, prop = meta_of(field).schema, props[key]
        assert prop["type"] == schema["type"], key
        assert prop["default"] == (list(default) if isinstance(default, tuple) else default), key
        assert prop.get("enum") == schema.get("enum"), key
    assert props["tritonlens.targetGpu"]["enum"] == list(gpus.GPUS)
    assert props["tritonlens.compileTarget"]["enum"] == list(gpus.ARCHS)
    assert "tritonlens.trusted" not in props  # the client sets it from workspace trust


def test_readmes_name_every_setting():
    import re

    from tritonlens.server.config import meta_of

    gen = _schema_module()

    def named(path, start: str) -> set:
        text = path.read_text(encoding="utf-8")
        paragraph = text[text.index(start):]
        return {n.removeprefix("tritonlens.") for n in re.findall(r"`([A-Za-z.]+)`", paragraph[:paragraph.index("\n\n")])}

    server = named(REPO / "README.md", "Settings (section `tritonlens`")
    client = named(REPO / "client-vscode" / "README.md", "`tritonlens.select`")
    for key, field, _default in gen.flat_fields():
        assert set(key.split(".")) <= server, key
        assert not meta_of(field).contributed or key in client, key


def test_bad_values_are_reported_one_by_one_and_lose_nothing():
    from tritonlens.server.config import parse_settings

    settings, problems = parse_settings({"targetGpu": "V100", "debounceMs": 50, "select": ["tl013"],
                                         "compileTarget": "sm_75", "llm": {"model": "m", "apiKeyEnv": "1x"}})
    assert (settings.target_gpu, settings.compile_target, settings.llm.api_key_env) == ("H100", "sm_90",
                                                                                        "OPENAI_API_KEY")
    assert (settings.debounce_ms, settings.select, settings.llm.model) == (50, ("TL013",), "m")
    assert problems == [
        "`targetGpu`: must be one of H100, H200, A100, L40S, B200, got 'V100'; using 'H100'",
        "`compileTarget`: must be one of sm_80, sm_86, sm_89, sm_90, sm_100, sm_120, got 'sm_75'; using 'sm_90'",
        "`llm.apiKeyEnv`: must be an environment variable name, got '1x'; using 'OPENAI_API_KEY'",
    ]
    lower, problems = parse_settings({"targetGpu": "l40s"})
    assert lower.target_gpu == "L40S" and not problems


SIX_STAGE = Path(__file__).parents[1] / "fixtures" / "gpus" / "six_stage_matmul.py"


async def test_target_gpu_l40s_then_h200_judges_with_each_limit(bare_client, tmp_path):
    """A GPU that was missing from the table used to be judged as an H100: the L40S flags the
    6-stage matmul with its own 99 KB limit, the H200 (227 KB) does not."""
    client = bare_client
    await client.initialize_for_test({"select": ["TL013"], "targetGpu": "L40S", "debounceMs": 20})
    target = tmp_path / "six.py"
    target.write_text(SIX_STAGE.read_text())
    doc = Doc(client, target).open()
    (finding,) = [d for d in await doc.diagnostics() if d.code == "TL013"]
    assert "L40S allows 101,376" in finding.message
    # The kernel's full report (its hover card's link) estimates for the same GPU.
    rep = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="tritonlens.server.report", arguments=[doc.uri, "mm"]))
    card = rep["markdown"].split("**Static estimates**", 1)[1]
    assert "L40S" in card and "H100" not in card, card
    before = len(client.publications)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"tritonlens": {"select": ["TL013"], "targetGpu": "H200", "debounceMs": 20}}))
    if pulls(client):
        await asyncio.sleep(0.3)
        assert await doc.diagnostics() == []
    else:
        assert await _wait(lambda: len(client.publications) > before and not client.published[doc.uri].diagnostics)
    assert not client.messages


async def test_unknown_gpu_is_refused_with_a_message_and_falls_back(bare_client, tmp_path):
    await bare_client.initialize_for_test({"select": ["TL013"], "targetGpu": "L4", "debounceMs": 20})
    assert await _wait(lambda: bare_client.messages)
    assert "targetGpu" in bare_client.messages[0].message and "L40S" in bare_client.messages[0].message
    target = tmp_path / "six.py"
    target.write_text(SIX_STAGE.read_text())
    # The H100 it falls back to fits the 6-stage kernel; `select` still applies.
    assert [d.code for d in await Doc(bare_client, target).open().diagnostics()] == []


def test_any_json_settles_into_settings_with_one_line_per_bad_key():
    from hypothesis import given
    from hypothesis import settings as hsettings
    from hypothesis import strategies as st
    from tritonlens.server.config import DEFAULTS, Settings, parse_settings

    keys = ["select", "ignore", "targetGpu", "debounceMs", "profileOnSave", "compileOnSave", "compileTarget",
            "backend", "python", "ncu", "inlayHints", "timeoutS", "trusted", "llm"]
    json_values = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=12),
                               lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                           max_size=3),
                               max_leaves=6)

    @hsettings(max_examples=300, deadline=None)
    @given(st.dictionaries(st.sampled_from(keys), json_values, max_size=6), st.sampled_from(keys))
    def check(raw, kept):
        raw = {**raw, "debounceMs": 321} if kept == "debounceMs" else raw
        result, problems = parse_settings(raw)
        assert isinstance(result, Settings)
        assert all(len(p) < 300 for p in problems)
        for key in set(raw) - {"llm"}:
            assert sum(p.startswith(f"`{key}`") for p in problems) <= 1, problems
        if kept == "debounceMs":
            assert result.debounce_ms == 321
        assert parse_settings({})[0] == DEFAULTS

    check()
