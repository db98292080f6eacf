"""LLM proposals through any OpenAI-compatible endpoint, in a propose → verify → feedback loop.

The reply is untrusted text: it is parsed here (never executed) and the resulting source goes to
the verifier, which screens it statically and runs it only in a worker process. Each refusal
(syntax, compile error, wrong result, slower, ...) goes back to the model as the next round's
feedback, the conversation kept whole, up to `rounds` rounds.
"""

from __future__ import annotations

import ast
import json
import os
import re
import time
from dataclasses import dataclass

from tritonlens.profiling.worker.reports import ProfileReport

from .candidate import Candidate, Verdict
from .context import ProposalContext
from .edits import kernels, launch_sites, merge_functions, top_level_defs

SYSTEM = """You are an expert in Triton GPU kernels. You rewrite a kernel file so that it runs faster \
on the given GPU while computing exactly the same function.
Rules (a strict verifier enforces them; breaking one wastes the round):
- Keep every public wrapper function's name and signature, and its outputs' shapes and dtypes.
- The work must stay in Triton kernels: no torch ops (matmul, softmax, sum, ...) doing it in the wrapper.
- Handle every shape: sizes that are not multiples of any block size must be masked.
- Do not change tritonlens_cases() or the tests, do not time anything, do not touch global state,
  files, processes or the environment; import only torch, triton, triton.language and math.
Answer with the complete rewritten file in ONE fenced ```python block (or a block holding only the
top-level functions you changed: they replace the functions of the same name), then at most three
sentences on what you changed and why it is faster."""


class LLMError(Exception):
    """The endpoint could not be used (no key, unreachable, timeouts/rate limits after retries)."""


@dataclass
class LLMSettings:
    base_url: str | None = None
    model: str = "gpt-4o"
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 120.0  # seconds per request
    retries: int = 2  # extra attempts after a timeout / rate limit / connection error
    backoff: float = 1.0  # seconds before the first retry; doubles each time
    temperature: float = 0.2
    max_tokens: int | None = None

    @classmethod
    def from_dict(cls, d: dict | None) -> LLMSettings:
        d = dict(d or {})
        mapping = {"baseUrl": "base_url", "apiKeyEnv": "api_key_env"}
        kwargs = {mapping.get(k, k): v for k, v in d.items() if mapping.get(k, k) in cls.__dataclass_fields__}
        return cls(**kwargs)


class LLMClient:
    """The real `openai` client with bounded retries (the client's own retries are off)."""

    def __init__(self, settings: LLMSettings):
        import openai

        self.openai = openai
        self.settings = settings
        key = os.environ.get(settings.api_key_env or "OPENAI_API_KEY")
        if not key:
            if not settings.base_url:
                raise LLMError(f"no API key: set ${settings.api_key_env} (or point --llm-base-url at a "
                               "local OpenAI-compatible server)")
            key = "unused"  # local servers usually need none; the client insists on a value
        self.client = openai.OpenAI(api_key=key, base_url=settings.base_url, timeout=settings.timeout,
                                    max_retries=0)

    def complete(self, messages: list[dict], cancel=None) -> str:
        s = self.settings
        retryable = (self.openai.APITimeoutError, self.openai.RateLimitError, self.openai.APIConnectionError,
                     self.openai.InternalServerError)
        delay = s.backoff
        last = None
        for attempt in range(s.retries + 1):
            if cancel is not None and cancel.is_set():
                raise LLMError("cancelled")
            try:
                kwargs = {"model": s.model, "messages": messages, "temperature": s.temperature}
                if s.max_tokens:
                    kwargs["max_tokens"] = s.max_tokens
                response = self.client.chat.completions.create(**kwargs)
                choice = response.choices[0] if response.choices else None
                return (choice.message.content or "") if choice is not None else ""
            except retryable as exc:
                last = exc
                if attempt < s.retries:
                    time.sleep(delay)
                    delay *= 2
            except self.openai.APIStatusError as exc:  # 4xx other than 429: retrying will not help
                raise LLMError(f"the endpoint refused the request: HTTP {exc.status_code}: {str(exc)[:300]}") from exc
        kind = ("timed out" if isinstance(last, self.openai.APITimeoutError) else
                "rate-limited" if isinstance(last, self.openai.RateLimitError) else "unreachable")
        raise LLMError(f"the LLM endpoint {kind} on {s.retries + 1} attempts: {type(last).__name__}: {last}")


# -- the prompt ---------------------------------------------------------------------------------
def _profile_lines(profile: ProfileReport | None, kernel: str | None) -> list[str]:
    if not profile:
        return ["(no GPU profile taken)"]
    out = [f"mode: {profile.mode}, device: {(profile.device or {}).get('name', '?')}"]
    for k in profile.kernels:
        if kernel and k.name != kernel:
            continue
        for launch in k.launches[:3]:
            fields = {key: getattr(launch, key) for key in ("time_ms", "gbps", "tflops", "pct_of_peak", "bound",
                                                            "registers", "spills", "shared_bytes", "num_warps",
                                                            "num_stages", "grid", "constexprs")
                      if getattr(launch, key) is not None}
            out.append(f"{k.name}: " + json.dumps(fields))
            if launch.ncu:
                out.append("  ncu: " + json.dumps(launch.ncu)[:800])
    return out


def build_messages(ctx: ProposalContext, kernel: str | None) -> list[dict]:
    tree = ast.parse(ctx.text)
    names = [k.name for k in kernels(tree)]
    target = kernel or (names[0] if names else None)
    wrappers = sorted({s.function.name for s in launch_sites(tree, target) if s.function is not None}) if target else []
    findings = [f"line {f.range.start.line + 1}: {f.code} {f.severity.value}: {f.message}"
                for f in ctx.findings() if f.kernel in (None, target)]
    tried = [f"- {v.candidate.proposer}: {v.candidate.title} → {'accepted' if v.accepted else 'refused'}: {v.reason}"
             for v in ctx.history]
    device = ctx.device or {}
    parts = [
        f"Device: {device.get('name', 'unknown')} (mode: {device.get('mode', 'unknown')}).",
        f"Kernel to optimize: {target}; launched by: {', '.join(wrappers) or '?'}.",
        "", "Diagnostics:", *(findings or ["(none)"]),
        "", "Profile:", *_profile_lines(ctx.profile, target),
        "", "Tried before (do not repeat what was refused):", *(tried or ["(nothing yet)"]),
        "", f"The file ({os.path.basename(ctx.path)}):", "```python", ctx.text.rstrip("\n"), "```",
    ]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(parts)}]


def feedback_message(verdict: Verdict, round_no: int) -> dict:
    ev = verdict.evidence or {}
    lines = [f"Round {round_no} was refused by the verifier: {verdict.reason}"]
    failing = next((c for c in ev.get("checks") or [] if not c.get("ok")), None)
    if failing:
        lines.append(f"Failing check: {failing.get('label')} with inputs {failing.get('shapes')} "
                     f"(seed {failing.get('seed')}): {failing.get('reason')}")
    err = ev.get("error") or {}
    if err.get("traceback"):
        lines.append("Traceback (end):\n" + err["traceback"][-1500:])
    if ev.get("static"):
        lines.append("Static check: " + "; ".join(ev["static"][:5]))
    lines.append("Fix this and answer again with the complete file in one ```python block.")
    return {"role": "user", "content": "\n".join(lines)}


# -- the reply ------------------------------------------------------------------------------------
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)


def extract_source(reply: str, original: str) -> tuple[str | None, str]:
    """(complete candidate source or None, note). A partial block is merged function by function."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(reply or "")]
    code = [b for lang, b in blocks if lang in ("python", "py", "python3", "")]
    if not code:
        return None, "the reply holds no fenced ```python code block"
    block = max(code, key=len)
    try:
        tree = ast.parse(block)
    except SyntaxError as exc:
        return block, f"syntax error in the reply: line {exc.lineno}: {exc.msg}"
    orig_defs = set(top_level_defs(ast.parse(original)))
    block_defs = set(top_level_defs(tree))
    has_imports = any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body)
    if not block_defs:
        return None, "the code block defines no function"
    if has_imports and orig_defs <= block_defs:
        return block if block.endswith("\n") else block + "\n", "complete file"
    return merge_functions(original, block), f"merged {len(block_defs)} function(s) by name: {', '.join(sorted(block_defs))}"


class LLMProposer:
    def __init__(self, settings: LLMSettings, client: LLMClient | None = None):
        self.settings = settings
        self._client = client

    @property
    def client(self) -> LLMClient:
        if self._client is None:
            self._client = LLMClient(self.settings)
        return self._client

    def run(self, ctx: ProposalContext, verify, rounds: int = 3, kernel: str | None = None,
            progress=None, cancel=None) -> tuple[list[Verdict], list[dict]]:
        """Up to `rounds` propose → verify rounds; stops at the first accepted rewrite.

        verify(list[Candidate]) -> list[Verdict]. Returns (verdicts, transcript of messages).
        """
        messages = build_messages(ctx, kernel or ctx.kernel)
        verdicts: list[Verdict] = []
        for round_no in range(1, max(1, int(rounds)) + 1):
            if cancel is not None and cancel.is_set():
                break
            if progress:
                progress(f"LLM round {round_no}/{rounds}: asking {self.settings.model}")
            try:
                reply = self.client.complete(messages, cancel=cancel)
            except LLMError as exc:
                cand = Candidate("llm", f"LLM round {round_no}", ctx.text, str(exc), kernel=kernel,
                                 meta={"round": round_no})
                verdicts.append(Verdict(cand, False, f"LLM request failed: {exc}", mode="none",
                                        evidence={"llm_error": str(exc)}))
                break
            messages.append({"role": "assistant", "content": reply})
            source, note = extract_source(reply, ctx.text)
            title = f"LLM rewrite (round {round_no}, {self.settings.model})"
            if source is None:
                cand = Candidate("llm", title, ctx.text, note, kernel=kernel, meta={"round": round_no, "reply": reply[:4000]})
                verdict = Verdict(cand, False, f"unusable reply: {note}", mode="none", evidence={"reply": reply[:2000]})
            elif source == ctx.text:
                cand = Candidate("llm", title, source, "no change", kernel=kernel, meta={"round": round_no})
                verdict = Verdict(cand, False, "the reply changes nothing", mode="none")
            else:
                cand = Candidate("llm", title, source, _explanation(reply), kernel=kernel,
                                 meta={"round": round_no, "note": note})
                verdict = verify([cand])[0]
            verdicts.append(verdict)
            if verdict.accepted:
                break
            messages.append(feedback_message(verdict, round_no))
        return verdicts, messages


def _explanation(reply: str) -> str:
    text = _FENCE.sub("", reply or "").strip()
    return " ".join(text.split())[:500]
