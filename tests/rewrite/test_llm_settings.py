"""Every LLM setting reaches the loop: from the editor's `tritonlens.llm` settings through the
server's optimize, and from the CLI's flags (real `openai` client against the scripted server)."""

from __future__ import annotations

import json
import shutil

import pytest
from rewrite_support import FIXTURES
from tritonlens.rewrite.llm_client import LLMSettings
from tritonlens.server.config import DEFAULTS, as_json, parse_settings
from tritonlens.server.worker_jobs import llm_options

from tritonlens.cli import main as cli_main


def test_every_editor_llm_setting_is_passed_to_the_engine():
    # a new key must be added here and to the engine's LLMSettings (or passed as `rounds` is)
    assert set(as_json(DEFAULTS.llm)) == {"baseUrl", "model", "apiKeyEnv", "candidates", "rounds", "maxTokens",
                                          "tokenBudget", "timeBudgetS", "timeoutS", "systemRole"}
    settings, problems = parse_settings({"llm": {
        "baseUrl": "http://127.0.0.1:9/v1", "model": "qwen3", "apiKeyEnv": "MY_KEY", "candidates": 2, "rounds": 5,
        "maxTokens": 2048, "tokenBudget": 0, "timeBudgetS": 60, "timeoutS": 45, "systemRole": "user"}})
    assert not problems
    engine = LLMSettings.from_dict(llm_options(settings))
    assert (engine.base_url, engine.model, engine.api_key_env) == ("http://127.0.0.1:9/v1", "qwen3", "MY_KEY")
    assert (engine.candidates, engine.max_tokens, engine.token_budget) == (2, 2048, None)  # 0: no limit
    assert (engine.time_budget_s, engine.timeout, engine.system_role) == (60, 45, "user")
    assert settings.llm.rounds == 5  # optimize_file's own argument
    # the engine's defaults are the editor's
    default = LLMSettings.from_dict(as_json(DEFAULTS.llm))
    assert (default.candidates, default.token_budget, default.time_budget_s, default.timeout, default.max_tokens) == \
        (4, 1_000_000, 1800, 300, None)
    assert llm_options(DEFAULTS) is None  # no endpoint: no LLM proposals


def test_bad_engine_settings_are_refused_clearly():
    with pytest.raises(ValueError, match="systemRole must be one of auto, system, user, got 'developer'"):
        LLMSettings.from_dict({"systemRole": "developer"})


def test_cli_flags_reach_the_requests(llm_server, tmp_path, capsys):
    path = tmp_path / "vadd.py"
    shutil.copy(FIXTURES / "vadd.py", path)
    llm_server.script = ["no code here"] * 2
    code = cli_main(["optimize", str(path), "--proposers", "llm", "--llm-base-url", llm_server.base_url,
                     "--llm-model", "m", "--llm-api-key-env", "TRITONLENS_TEST_NO_SUCH_KEY", "--llm-candidates", "2",
                     "--llm-max-tokens", "77", "--llm-temperature", "0.3", "--llm-system-role", "user",
                     "--rounds", "1", "--format", "json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert len(llm_server.requests) == 2
    for request in llm_server.requests:
        body = request["body"]
        assert (body["max_tokens"], body["temperature"], body["model"]) == (77, 0.3, "m")
        assert [m["role"] for m in body["messages"]] == ["user"] and "response_format" not in body and "n" not in body
    assert [c["reason"] for c in report["candidates"]] == ["unusable reply: the reply holds no fenced ```python code block"] * 2
    assert any(n.startswith("LLM transcript: " + str(tmp_path)) for n in report["notes"])


@pytest.mark.parametrize(("flag", "value"), [("--llm-candidates", "0"), ("--llm-token-budget", "-1")])
def test_cli_refuses_bad_llm_flags(tmp_path, capsys, flag, value):
    path = tmp_path / "vadd.py"
    shutil.copy(FIXTURES / "vadd.py", path)
    assert cli_main(["optimize", str(path), "--proposers", "llm", "--llm-base-url", "http://127.0.0.1:9/v1",
                     flag, value]) == 2
    assert f"{flag} must be at least" in capsys.readouterr().err
