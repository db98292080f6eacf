"""LLM proposals through the real `openai` client against a scripted local server: every kind of
bad reply is refused for the right reason, and round N's refusal is in round N+1's prompt."""

from __future__ import annotations

import shutil

import pytest
from rewrite_support import FIXTURES, WRAPPER_256, fenced
from tritonlens.rewrite.api import OptimizeOptions, optimize_file
from tritonlens.rewrite.candidate import NOT_TIMED
from tritonlens.rewrite.context import ProposalContext
from tritonlens.rewrite.propose_llm import LLMProposer, LLMSettings, extract_source

GOOD_WRAPPER = WRAPPER_256


def _replies(original: str) -> list:
    syntax = "def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor\n    return x\n"
    compile_error = '''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.fused_add_fast(x, y), mask=mask)
'''
    wrong = original.replace("x + y, mask=mask)", "x + 1.001 * y, mask=mask)")
    no_mask = (original.replace("x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets)")
               .replace("y = tl.load(y_ptr + offsets, mask=mask)", "y = tl.load(y_ptr + offsets)")
               .replace("tl.store(out_ptr + offsets, x + y, mask=mask)", "tl.store(out_ptr + offsets, x + y)"))
    fallback_dynamic = original.replace("    return out\n\n\ndef tritonlens_cases",
                                        "    return x + y\n\n\ndef tritonlens_cases")
    fallback_static = "def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n    return torch.add(x, y)\n"
    assert wrong != original and no_mask != original and fallback_dynamic != original
    return [fenced(syntax), fenced(compile_error), fenced(wrong), fenced(no_mask), fenced(fallback_dynamic),
            fenced(fallback_static), "Sorry, as a language model I would rather talk about the weather.",
            fenced(GOOD_WRAPPER, "A 256-element block amortises per-program overhead.")]


def test_llm_rounds_refuse_each_bad_reply_for_its_reason_then_accept_good(llm_server, tmp_path):
    path = tmp_path / "vadd.py"
    shutil.copy(FIXTURES / "vadd.py", path)
    original = path.read_text()
    llm_server.script = _replies(original)
    result = optimize_file(str(path), OptimizeOptions(
        proposers=("llm",), rounds=8,
        llm={"base_url": llm_server.base_url, "model": "scripted-coder", "api_key_env": "TRITONLENS_TEST_NO_SUCH_KEY",
             "timeout": 30, "candidates": 1}))
    reasons = [c.reason for c in result.candidates]
    accepted = [c.accepted for c in result.candidates]
    assert accepted == [False] * 7 + [True], reasons
    assert reasons[0].startswith("syntax error"), reasons[0]
    assert reasons[1].startswith("compile error") and "fused_add_fast" in reasons[1], reasons[1]
    assert reasons[2].startswith("wrong result on case 0"), reasons[2]
    assert reasons[3].startswith("fails only on the ragged shape") and "out-of-bounds" in reasons[3], reasons[3]
    assert reasons[4].startswith("torch fallback") and "add" in reasons[4], reasons[4]
    assert "torch fallback: calls add()" in reasons[5], reasons[5]
    assert reasons[6].startswith("unusable reply"), reasons[6]
    assert reasons[7].startswith(NOT_TIMED) and result.candidates[7].speedup is None
    best = result.best
    assert best is not None and "BLOCK_SIZE = 256" in best.source
    assert best.quick_fix_title.endswith(NOT_TIMED)
    assert "+    BLOCK_SIZE = 256" in best.diff
    assert result.mode == "interpreter"
    assert "8 candidates" not in (result.refusals or "") and result.refusals.startswith("7 candidates refused")

    # the prompts: the first one carries the kernel, wrapper, diagnostics and device ...
    assert len(llm_server.requests) == 8
    first = llm_server.requests[0]["body"]["messages"]
    assert first[0]["role"] == "system" and "```python" in first[0]["content"]
    user = first[1]["content"]
    assert "add_kernel" in user and "launched by: add" in user and "Device: cpu (triton interpreter)" in user
    assert "Diagnostics:" in user and original.strip().splitlines()[0] in user
    # ... and each round's refusal is fed back in the next round's prompt
    second = llm_server.requests[1]["body"]["messages"]
    assert second[2]["role"] == "assistant"
    assert second[3]["role"] == "user" and second[3]["content"].startswith("Round 1 was refused by the verifier: syntax error")
    fourth = llm_server.requests[3]["body"]["messages"]
    assert "Round 3 was refused by the verifier: wrong result" in fourth[-1]["content"]
    assert "Failing check: case 0" in fourth[-1]["content"]
    assert llm_server.requests[0]["body"]["model"] == "scripted-coder"
    assert path.read_text() == original  # nothing applied without --apply


def test_llm_slower_but_correct_is_accepted_on_cpu_without_any_speed_claim(llm_server, tmp_path):
    """On the CPU nothing can be timed: a correct but slower rewrite (block 16) passes correctness,
    says it is correct, not timed, and claims no speedup. (The "slower" refusal itself needs timings:
    see test_rewrite_verdicts.py::test_decide_refuses_slower_candidate_with_injected_gpu_timings.)"""
    path = tmp_path / "vadd.py"
    shutil.copy(FIXTURES / "vadd.py", path)
    llm_server.script = [fenced(GOOD_WRAPPER.replace("BLOCK_SIZE = 256", "BLOCK_SIZE = 16"))]
    result = optimize_file(str(path), OptimizeOptions(
        proposers=("llm",), rounds=1,
        llm={"base_url": llm_server.base_url, "model": "m", "timeout": 30, "candidates": 1}))
    (cand,) = result.candidates
    assert cand.accepted and cand.speedup is None and cand.reason.startswith(NOT_TIMED)
    assert "x faster" not in cand.quick_fix_title


def _never_verify(_):
    raise AssertionError("nothing should reach the verifier")


def test_llm_timeout_is_retried_with_backoff_then_reported(llm_server, fixture_text):
    llm_server.script = [{"sleep": 2.0, "content": "late"}, {"sleep": 2.0, "content": "late"}]
    settings = LLMSettings(base_url=llm_server.base_url, model="m", timeout=0.4, retries=1, backoff=0.05,
                           candidates=1)
    ctx = ProposalContext("vadd.py", fixture_text("vadd.py"), device={"name": "cpu", "mode": "interpreter"})
    verdicts = LLMProposer(settings).run(ctx, _never_verify, rounds=3).verdicts
    assert len(verdicts) == 1 and not verdicts[0].accepted
    assert "timed out on 2 attempts" in verdicts[0].reason
    assert len(llm_server.requests) == 2  # one try + one retry, then no further rounds


def test_llm_rate_limit_is_retried_and_the_key_comes_from_the_named_variable(llm_server, fixture_text, monkeypatch):
    monkeypatch.setenv("TL_TEST_LLM_KEY", "sk-test-123")
    llm_server.script = [{"status": 429, "body": {"error": {"message": "slow down"}}},
                         {"status": 429, "body": {"error": {"message": "slow down"}}},
                         "no code at all"]
    settings = LLMSettings(base_url=llm_server.base_url, model="m", api_key_env="TL_TEST_LLM_KEY",
                           timeout=5, retries=2, backoff=0.05, candidates=1)
    ctx = ProposalContext("vadd.py", fixture_text("vadd.py"))
    verdicts = LLMProposer(settings).run(ctx, _never_verify, rounds=1).verdicts
    assert len(llm_server.requests) == 3
    assert all(r["auth"] == "Bearer sk-test-123" for r in llm_server.requests)
    assert verdicts[0].reason.startswith("unusable reply: the reply holds no fenced")


def test_partial_block_replaces_functions_by_name(fixture_text):
    original = fixture_text("vadd.py")
    source, note = extract_source(fenced(GOOD_WRAPPER), original)
    assert note.startswith("merged 1 function")
    assert "BLOCK_SIZE = 256" in source and "BLOCK_SIZE = 64" not in source
    # everything else is byte-identical
    assert source.split("def add(")[0] == original.split("def add(")[0]
    assert source.split("def tritonlens_cases")[1] == original.split("def tritonlens_cases")[1]
    full, note = extract_source(fenced(original.replace("64", "128")), original)
    assert note == "complete file" and "BLOCK_SIZE = 128" in full


@pytest.mark.parametrize(("reply", "source", "note"), [
    ("", None, "the reply holds no fenced ```python code block"),
    ("```cpp\nint main() { return 0; }\n```", None, "the reply holds no fenced ```python code block"),
    # a block that does not parse goes on to the verifier, which refuses it as a syntax error
    ("```\nnot python at all (\n```", "not python at all (\n", "syntax error in the reply: line 1: invalid syntax"),
    ("```python\nx = 1\n```", None, "the code block defines no function"),
])
def test_unusable_replies(reply, source, note, fixture_text):
    assert extract_source(reply, fixture_text("vadd.py")) == (source, note)
