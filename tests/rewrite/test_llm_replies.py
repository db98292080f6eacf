"""What real models reply, through the real `openai` client against the scripted local server:
reasoning before the answer, cut-off replies, usage examples after the file, diffs. The code
verified is the final answer's, and a reply that holds none is refused for what it is."""

from __future__ import annotations

import shutil

import pytest
from rewrite_support import FIXTURES, WRAPPER_256, fenced
from tritonlens.rewrite.api import OptimizeOptions, optimize_file
from tritonlens.rewrite.candidate import NOT_TIMED
from tritonlens.rewrite.context import ProposalContext
from tritonlens.rewrite.llm_reply import extract_source, strip_reasoning
from tritonlens.rewrite.propose_llm import LLMProposer, LLMSettings


def _wrong_file(original: str) -> str:
    """A complete file, longer than any answer below, that computes the wrong sum."""
    wrong = original.replace("x + y, mask=mask)", "x + 1.001 * y, mask=mask)")
    assert wrong != original
    return wrong


def _optimize(llm_server, tmp_path, **llm):
    path = tmp_path / "vadd.py"
    shutil.copy(FIXTURES / "vadd.py", path)
    result = optimize_file(str(path), OptimizeOptions(
        proposers=("llm",), rounds=1,
        llm={"base_url": llm_server.base_url, "model": "reasoner", "timeout": 30, "candidates": 1, **llm}))
    return result, path


def test_think_block_draft_is_ignored_and_the_final_function_only_answer_is_verified(llm_server, tmp_path):
    original = (FIXTURES / "vadd.py").read_text()
    reply = ("<think>\nFirst a draft of the whole file:\n```python\n" + _wrong_file(original) + "```\n"
             "No: scaling y changes the result. Only the wrapper's block size should change.\n</think>\n\n"
             + fenced(WRAPPER_256, "A 256-element block amortises per-program overhead."))
    llm_server.script = [reply]
    result, _ = _optimize(llm_server, tmp_path)
    (cand,) = result.candidates
    assert cand.accepted, cand.reason
    assert cand.reason.startswith(NOT_TIMED)
    assert "BLOCK_SIZE = 256" in cand.source and "1.001" not in cand.source
    assert cand.more["meta"]["note"] == "merged 1 function(s) by name: add"
    # the whole reply, the draft included, is in the report; the conversation keeps no reasoning
    assert cand.more["meta"]["reply"] == reply and cand.more["meta"]["finish_reason"] == "stop"
    assert cand.more["meta"]["usage"] == {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    assert "LLM: correct, not timed: run on a GPU to prove it faster" in result.notes


def test_reasoning_content_is_never_read_for_code(llm_server, tmp_path):
    original = (FIXTURES / "vadd.py").read_text()
    llm_server.script = [{"reasoning_content": "Let me write it all out:\n```python\n" + _wrong_file(original) + "```",
                          "content": fenced(WRAPPER_256)}]
    result, _ = _optimize(llm_server, tmp_path)
    (cand,) = result.candidates
    assert cand.accepted, cand.reason
    assert "BLOCK_SIZE = 256" in cand.source and "1.001" not in cand.source
    assert cand.more["meta"]["reasoning_chars"] > len(original)


def _never_verify(_):
    raise AssertionError("nothing should reach the verifier")


def _run(llm_server, fixture_text, rounds=1, **settings):
    s = LLMSettings(base_url=llm_server.base_url, model="m", timeout=10, **{"candidates": 1, **settings})
    ctx = ProposalContext("vadd.py", fixture_text("vadd.py"))
    return LLMProposer(s).run(ctx, _never_verify, rounds=rounds)


@pytest.mark.parametrize(("max_tokens", "limit"), [(64, "max_tokens=64"), (None, "max_tokens=the server's default")])
def test_cut_off_reply_is_refused_as_cut_at_the_token_limit(llm_server, fixture_text, max_tokens, limit):
    original = fixture_text("vadd.py")
    llm_server.script = [{"content": "Here is the faster file:\n```python\n" + original[:400], "finish_reason": "length"}]
    run = _run(llm_server, fixture_text, max_tokens=max_tokens)
    (verdict,) = run.verdicts
    assert verdict.reason == (f"unusable reply: the reply was cut at the token limit ({limit}): "
                              "raise tritonlens.llm.maxTokens (CLI: --llm-max-tokens)")
    assert llm_server.requests[0]["body"].get("max_tokens") == max_tokens


@pytest.mark.parametrize(("content", "why"), [
    ("Here:\n```python\nimport torch\n\n@triton.jit\ndef add_kernel(", "the reply ends inside an unclosed code fence"),
    ("<think>\nThe block size is small, so first let me", "the reply is all reasoning (<think> never closed)"),
])
def test_unfinished_reply_without_length_is_refused_as_probably_cut(llm_server, fixture_text, content, why):
    llm_server.script = [content]
    (verdict,) = _run(llm_server, fixture_text, max_tokens=512).verdicts
    assert verdict.reason == (f"unusable reply: {why}: probably cut at the token limit (max_tokens=512): "
                              "raise tritonlens.llm.maxTokens (CLI: --llm-max-tokens)")


def test_full_file_followed_by_usage_blocks_verifies_the_file(llm_server, tmp_path):
    original = (FIXTURES / "vadd.py").read_text()
    rewritten = original.replace("BLOCK_SIZE = 64", "BLOCK_SIZE = 128")
    # a usage example longer than the file: the longest block is not the answer
    usage = "import torch\nfrom vadd import add\n\n" + "".join(
        f"x{i} = torch.randn({1000 + i}, device='cuda')\nout{i} = add(x{i}, x{i})\nprint(out{i}.sum())\n"
        for i in range(40))
    assert len(usage) > len(rewritten)
    reply = (fenced(rewritten, "Doubled the block.") + "\nUse it like this:\n\n```python\n" + usage + "```\n"
             "\nand run it with\n\n```bash\npython vadd.py\n```\n")
    llm_server.script = [reply]
    result, _ = _optimize(llm_server, tmp_path)
    (cand,) = result.candidates
    assert cand.accepted, cand.reason
    assert cand.more["meta"]["note"] == "complete file"
    assert "BLOCK_SIZE = 128" in cand.source and "print(out0" not in cand.source


DIFF = """--- a/vadd.py
+++ b/vadd.py
@@ -27,7 +27,7 @@ def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
     out = torch.empty_like(x)
     n = out.numel()
-    BLOCK_SIZE = 64
+    BLOCK_SIZE = 256
     grid = (triton.cdiv(n, BLOCK_SIZE),)
"""


@pytest.mark.parametrize("reply", [f"Apply this patch:\n```diff\n{DIFF}```\n",
                                   f"Apply this patch:\n```\n{DIFF}```\n",
                                   f"Apply this patch:\n\n{DIFF}"], ids=["diff-block", "bare-block", "unfenced"])
def test_diff_reply_is_refused_as_a_diff(llm_server, fixture_text, reply):
    llm_server.script = [reply]
    (verdict,) = _run(llm_server, fixture_text).verdicts
    assert verdict.reason.startswith("unusable reply: the reply is a diff, which is not applied: "
                                     "ask for whole functions or the file"), verdict.reason


@pytest.mark.parametrize(("reply", "answer"), [
    # the opening tag was in the chat template: all before </think> is reasoning
    ("a draft:\n```python\ndef add(x, y):\n    return x - y\n```\n</think>\n```python\ndef add(x, y):\n    return x\n```",
     "\n```python\ndef add(x, y):\n    return x\n```"),
    ("<think>one</think>A<think>two</think>B", "AB"),
    ("answer first <think>then thinking that never ends", "answer first "),
])
def test_strip_reasoning(reply, answer):
    assert strip_reasoning(reply) == answer


def test_function_only_answer_in_two_blocks_merges_both(fixture_text):
    original = fixture_text("vadd.py")
    kernel = original[original.index("@triton.jit"):original.index("def add(")].replace("x + y", "y + x")
    source, note = extract_source(fenced(kernel) + "\nand the wrapper:\n" + fenced(WRAPPER_256), original)
    assert note == "merged 2 function(s) by name: add, add_kernel"
    assert "y + x" in source and "BLOCK_SIZE = 256" in source


def test_blocks_defining_none_of_the_files_functions_are_not_an_answer(fixture_text):
    source, note = extract_source("```python\ndef bench():\n    return 1\n```", fixture_text("vadd.py"))
    assert source is None
    assert note == "no code block defines a function of the file (add, add_kernel): the reply holds examples, not a rewrite"


def test_fence_indented_in_a_list_item_is_dedented(fixture_text):
    original = fixture_text("vadd.py")
    indented = "".join(f"   {line}" if line.strip() else line for line in WRAPPER_256.splitlines(keepends=True))
    source, note = extract_source(f"1. Raise the block:\n\n   ```python\n{indented}   ```\n", original)
    assert note == "merged 1 function(s) by name: add" and "    BLOCK_SIZE = 256\n" in source
