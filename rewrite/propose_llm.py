"""LLM proposals through any OpenAI-compatible endpoint, in a propose → verify → improve loop.

The parts live in modules of their own; this one names them for the callers:
    llm_client     the endpoint: settings, the real `openai` client, retries, the system-role fallback
    llm_reply      from a reply to a candidate source: the final answer's code, cut-off and diff replies
    llm_prompts    what the model is told: the task, the file, each round's verdicts, the best so far
    llm_loop       rounds of n concurrent candidates, the best kept and improved on, budgets
    llm_figures    registers, spills, roofline of the best rewrite, measured in workers
    llm_transcript the saved record of every message and reply

The reply is untrusted text: it is parsed (never executed) and the resulting source goes to the
verifier, which screens it statically and runs it only in a worker process.
"""

from __future__ import annotations

from .llm_client import LLMClient, LLMError, LLMReply, LLMSettings
from .llm_loop import LLMProposer, LLMRun
from .llm_prompts import SYSTEM, build_messages, feedback_message
from .llm_reply import extract_source

__all__ = ["SYSTEM", "LLMClient", "LLMError", "LLMProposer", "LLMReply", "LLMRun", "LLMSettings",
           "build_messages", "extract_source", "feedback_message"]
