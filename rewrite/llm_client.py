"""The LLM endpoint: settings, and the real `openai` client with bounded retries.

Any OpenAI-compatible server is meant to work (OpenAI, vLLM, SGLang, llama.cpp, Ollama), so the
request is kept to what they all accept: model, messages, temperature and, when set, max_tokens
(never response_format, never the API's `n`, which many servers ignore).
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass, field
from typing import ClassVar

SYSTEM_ROLES = ("auto", "system", "user")


class LLMError(Exception):
    """The endpoint could not be used (no key, unreachable, timeouts/rate limits after retries)."""


@dataclass
class LLMSettings:
    base_url: str | None = None
    model: str = "gpt-4o"
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 300.0  # seconds per request: reasoning models think for minutes
    retries: int = 2  # extra attempts after a timeout / rate limit / connection error
    backoff: float = 1.0  # seconds before the first retry; doubles each time
    temperature: float = 0.6  # n candidates a round want variety; what reasoning models are tuned for
    max_tokens: int | None = None  # None: the server's default
    candidates: int = 4  # parallel requests per round
    token_budget: int | None = 1_000_000  # total_tokens over the whole optimize; None: no limit
    time_budget_s: float | None = 1800  # seconds for the whole LLM loop; None: no limit
    # "auto": send a system message, fold it into the user's when the server refuses the role;
    # "user": always fold (templates of some reasoning models have no system role); "system": never fold
    system_role: str = "auto"

    # the keys the editor settings and the CLI use, where they differ from the field names
    _ALIASES: ClassVar[dict[str, str]] = {"timeout_s": "timeout"}

    @classmethod
    def from_dict(cls, d: dict | None) -> LLMSettings:
        """Settings from snake_case or camelCase keys; 0 for a limit means none."""
        kwargs = {}
        for key, value in dict(d or {}).items():
            name = re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()
            name = cls._ALIASES.get(name, name)
            if name in cls.__dataclass_fields__:
                kwargs[name] = value
        for limit in ("max_tokens", "token_budget", "time_budget_s"):
            if not kwargs.get(limit):
                kwargs[limit] = None
        kwargs["base_url"] = kwargs.get("base_url") or None
        settings = cls(**kwargs)
        if settings.system_role not in SYSTEM_ROLES:
            raise ValueError(f"systemRole must be one of {', '.join(SYSTEM_ROLES)}, got {settings.system_role!r}")
        settings.candidates = max(1, int(settings.candidates))
        return settings


@dataclass
class LLMReply:
    """One chat completion: the answer text and what the server said about it."""

    content: str
    finish_reason: str | None = None
    reasoning: str | None = None  # reasoning_content (vLLM, DeepSeek): recorded, never parsed for code
    usage: dict = field(default_factory=dict)  # prompt_tokens, completion_tokens, total_tokens
    elapsed_s: float = 0.0
    started: float = 0.0  # time.time() when the request was sent (the transcript's timeline)

    @property
    def total_tokens(self) -> int:
        return int(self.usage.get("total_tokens") or 0)


def fold_system(messages: list[dict]) -> list[dict]:
    """The conversation without a system message: its text opens the first user message."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if system:
        first = next((m for m in rest if m["role"] == "user"), None)
        if first is None:
            rest.insert(0, {"role": "user", "content": system})
        else:
            first["content"] = f"{system}\n\n{first['content']}"
    return rest


def _refuses_system_role(exc) -> bool:
    return getattr(exc, "status_code", None) == 400 and "system" in str(exc).lower()


class LLMClient:
    """The real `openai` client with bounded retries (the client's own retries are off).

    One client serves one optimize: once the server refuses a system role, every later request of
    it folds the system text into the user message. Safe to call from several threads.
    """

    def __init__(self, settings: LLMSettings):
        import openai

        self.openai = openai
        self.settings = settings
        self.fold = settings.system_role == "user"
        self._lock = threading.Lock()
        key = os.environ.get(settings.api_key_env or "OPENAI_API_KEY")
        if not key:
            if not settings.base_url:
                raise LLMError(f"no API key: set ${settings.api_key_env} (or point --llm-base-url at a "
                               "local OpenAI-compatible server)")
            key = "unused"  # local servers usually need none; the client insists on a value
        self.client = openai.OpenAI(api_key=key, base_url=settings.base_url, timeout=settings.timeout,
                                    max_retries=0)

    def complete(self, messages: list[dict], cancel=None, timeout: float | None = None) -> LLMReply:
        """One completion. `timeout` caps this request below the setting (what a time budget has left)."""
        s = self.settings
        retryable = (self.openai.APITimeoutError, self.openai.RateLimitError, self.openai.APIConnectionError,
                     self.openai.InternalServerError)
        delay = s.backoff
        last = None
        attempt = 0
        folded_now = False
        while attempt <= s.retries:
            if cancel is not None and cancel.is_set():
                raise LLMError("cancelled")
            started = time.time()
            try:
                return self._create(messages, timeout, started)
            except retryable as exc:
                last = exc
                attempt += 1
                if attempt <= s.retries:
                    time.sleep(delay)
                    delay *= 2
            except self.openai.APIStatusError as exc:  # 4xx other than 429: retrying the same will not help
                if s.system_role == "auto" and not folded_now and _refuses_system_role(exc):
                    with self._lock:
                        self.fold = True
                    folded_now = True  # one retry with the role folded: the same refusal twice is final
                    continue
                raise LLMError(f"the endpoint refused the request: HTTP {exc.status_code}: {str(exc)[:300]}") from exc
        kind = ("timed out" if isinstance(last, self.openai.APITimeoutError) else
                "rate-limited" if isinstance(last, self.openai.RateLimitError) else "unreachable")
        raise LLMError(f"the LLM endpoint {kind} on {s.retries + 1} attempts: {type(last).__name__}: {last}")

    def _create(self, messages: list[dict], timeout: float | None, started: float) -> LLMReply:
        s = self.settings
        sent = fold_system(messages) if self.fold else messages
        kwargs = {"model": s.model, "messages": sent, "temperature": s.temperature}
        if s.max_tokens:
            kwargs["max_tokens"] = s.max_tokens
        if timeout is not None:
            kwargs["timeout"] = max(1.0, min(s.timeout, timeout))
        t0 = time.monotonic()
        response = self.client.chat.completions.create(**kwargs)
        choice = response.choices[0] if response.choices else None
        message = choice.message if choice is not None else None
        usage = response.usage.model_dump(include={"prompt_tokens", "completion_tokens", "total_tokens"}) \
            if response.usage is not None else {}
        return LLMReply(content=(message.content or "") if message is not None else "",
                        finish_reason=choice.finish_reason if choice is not None else None,
                        reasoning=getattr(message, "reasoning_content", None) if message is not None else None,
                        usage=usage, elapsed_s=round(time.monotonic() - t0, 3), started=started)
