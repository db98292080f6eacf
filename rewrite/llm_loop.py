"""The LLM loop: rounds of n candidates asked concurrently, verified, the best kept and improved on.

Before the first accept, the round's refusals go back to the model. After it, the best rewrite so
far is the base: the next round is asked to beat it, with its figures, and the loop stops when a
round gains less than MIN_GAIN over it. Correctness is always judged against the original file
(the verifier is built on it); speedups are the verifier's, over the original, so two rounds
compare by their ratio. Without timings (no GPU) nothing can be compared: the first correct
rewrite ends the loop.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .candidate import NOT_TIMED, Candidate, Verdict
from .context import ProposalContext
from .llm_client import LLMClient, LLMError, LLMReply, LLMSettings
from .llm_prompts import build_messages, feedback_message, figures_of, improve_message
from .llm_reply import explanation, extract_source, strip_reasoning
from .llm_transcript import Transcript

MIN_GAIN = 0.02
TOKEN_SETTING = "tritonlens.llm.tokenBudget (CLI: --llm-token-budget)"
TIME_SETTING = "tritonlens.llm.timeBudgetS (CLI: --llm-time-budget)"


@dataclass
class LLMRun:
    verdicts: list[Verdict] = field(default_factory=list)
    messages: list[dict] = field(default_factory=list)  # the conversation as it ended
    notes: list[str] = field(default_factory=list)  # why it stopped, where the transcript is
    best: Verdict | None = None
    tokens: int = 0
    transcript: Path | None = None


class LLMProposer:
    def __init__(self, settings: LLMSettings, client: LLMClient | None = None):
        self.settings = settings
        self._client = client

    @property
    def client(self) -> LLMClient:
        if self._client is None:
            self._client = LLMClient(self.settings)
        return self._client

    def run(self, ctx: ProposalContext, verify, rounds: int = 3, kernel: str | None = None, progress=None,
            cancel=None, figures=None, transcript: Transcript | None = None) -> LLMRun:
        """Up to `rounds` rounds of `settings.candidates` candidates each.

        verify(list[Candidate]) -> list[Verdict], one per candidate, in order.
        figures(Verdict) -> list[str]: what to tell the model about an accepted rewrite (default:
        the verdict's own numbers). `transcript`: where the conversation is saved (None: nowhere).
        """
        s = self.settings
        n = max(1, int(s.candidates))
        out = LLMRun(messages=build_messages(ctx, kernel or ctx.kernel))
        figures = figures or figures_of
        best_source, base_name = ctx.text, "the original"
        sent_from = 0
        seen: dict[str, Verdict] = {}  # source → its verdict: a rewrite sampled twice is verified once
        started = time.monotonic()
        stopped = None
        for round_no in range(1, max(1, int(rounds)) + 1):
            if cancel is not None and cancel.is_set():
                stopped = "cancelled"
                break
            stopped = self._spent(out.tokens, started)
            if stopped:
                break
            if progress:
                progress(f"LLM round {round_no}/{rounds}: asking {s.model} for {n} candidate(s)")
            left = s.time_budget_s - (time.monotonic() - started) if s.time_budget_s else None
            replies = self._ask(out.messages, n, cancel, left)
            out.tokens += sum(r.total_tokens for r in replies if isinstance(r, LLMReply))
            cands: list[Candidate | Verdict] = [self._candidate(ctx, r, round_no, i, n, best_source, kernel)
                                                for i, r in enumerate(replies)]
            verdicts = self._verify_new(cands, verify, seen)
            out.verdicts += verdicts
            if transcript is not None:
                transcript.add_round(round_no, out.messages[sent_from:], replies, verdicts, base_name)
                sent_from = len(out.messages)
            if all(isinstance(r, LLMError) for r in replies):
                stopped = f"the LLM requests failed: {replies[0]}"
                break
            accepted = [v for v in verdicts if v.accepted]
            if accepted and all(v.speedup is None for v in accepted):
                out.best = accepted[0]
                stopped = NOT_TIMED
                break
            timed = [v for v in accepted if v.speedup is not None]
            top = max(timed, key=lambda v: v.speedup) if timed else None
            if out.best is not None:
                gain = (top.speedup / out.best.speedup - 1) if top is not None else None
                if gain is None or gain < MIN_GAIN:
                    stopped = (f"round {round_no} found nothing faster than the best so far: stopped" if gain is None
                               else f"round {round_no} gained {max(gain, 0):.1%} over the best so far (less than "
                               f"{MIN_GAIN:.0%}): stopped" if gain > -0.001 else
                               f"round {round_no}'s best was {-gain:.1%} slower than the best so far: stopped")
                    break
            else:
                gain = None
            if top is not None:
                out.best, best_source = top, top.candidate.source
                base_name = f"the best of round {round_no} ({top.speedup:.3g}x)"
                if round_no < rounds:
                    if progress:
                        progress(f"LLM round {round_no}: {top.speedup:.3g}x; measuring it for the next round")
                    out.messages += [self._assistant(top), improve_message(round_no, top, figures(top), gain)]
                continue
            shown = _most_informative(verdicts)
            others = [v for v in verdicts if v is not shown]
            out.messages += [self._assistant(shown), feedback_message(shown, round_no, others)]
        else:
            stopped = stopped or (f"{rounds} round(s) done" if out.best is not None else None)
        if stopped:
            out.notes.append(f"LLM: {stopped}")
        if transcript is not None:
            out.transcript = transcript.save(out.tokens, getattr(self._client, "fold", False), stopped)
            out.notes.append(f"LLM transcript: {out.transcript}")
        return out

    @staticmethod
    def _verify_new(cands: list, verify, seen: dict[str, Verdict]) -> list[Verdict]:
        """Verdicts in candidate order; each source is verified once, a repeat gets the first one's word."""
        first: dict[str, int] = {}
        for i, c in enumerate(cands):
            if isinstance(c, Candidate) and c.source not in seen:
                first.setdefault(c.source, i)
        todo = list(first.values())
        results = dict(zip(todo, verify([cands[i] for i in todo]))) if todo else {}
        for v in results.values():
            seen[v.candidate.source] = v
        return [c if isinstance(c, Verdict) else results.get(i) or _repeat(c, seen[c.source])
                for i, c in enumerate(cands)]

    def _spent(self, tokens: int, started: float) -> str | None:
        s = self.settings
        if s.token_budget and tokens >= s.token_budget:
            return f"token budget spent: {tokens} of {s.token_budget} tokens (raise {TOKEN_SETTING})"
        if s.time_budget_s and time.monotonic() - started >= s.time_budget_s:
            return f"time budget spent: {time.monotonic() - started:.0f} of {s.time_budget_s:g} s (raise {TIME_SETTING})"
        return None

    def _ask(self, messages: list[dict], n: int, cancel, left: float | None) -> list[LLMReply | LLMError]:
        """n concurrent requests (not the API's `n`, which many servers ignore)."""
        try:
            client = self.client
        except LLMError as exc:
            return [exc] * n

        def one(_):
            try:
                return client.complete(messages, cancel=cancel, timeout=left)
            except LLMError as exc:
                return exc

        if n == 1:
            return [one(0)]
        with ThreadPoolExecutor(n) as pool:
            return list(pool.map(one, range(n)))

    def _candidate(self, ctx: ProposalContext, reply, round_no: int, index: int, n: int, base: str,
                   kernel: str | None) -> Candidate | Verdict:
        """A candidate to verify, or the verdict on a reply that holds none."""
        s = self.settings
        title = f"LLM rewrite (round {round_no}{f', candidate {index + 1}/{n}' if n > 1 else ''}, {s.model})"
        meta = {"round": round_no, "candidate": index + 1}
        if isinstance(reply, LLMError):
            cand = Candidate("llm", title, ctx.text, str(reply), kernel=kernel, meta=meta)
            return Verdict(cand, False, f"LLM request failed: {reply}", mode="none", evidence={"llm_error": str(reply)})
        meta.update(reply=reply.content, finish_reason=reply.finish_reason, usage=reply.usage,
                    elapsed_s=reply.elapsed_s)
        if reply.reasoning:
            meta["reasoning_chars"] = len(reply.reasoning)
        source, note = extract_source(reply.content, base, reply.finish_reason, s.max_tokens)
        meta["note"] = note
        if source is None:
            cand = Candidate("llm", title, ctx.text, note, kernel=kernel, meta=meta)
            return Verdict(cand, False, f"unusable reply: {note}", mode="none", evidence={"reply": reply.content[:2000]})
        if source in (ctx.text, base):
            cand = Candidate("llm", title, source, "no change", kernel=kernel, meta=meta)
            return Verdict(cand, False, "the reply changes nothing", mode="none")
        return Candidate("llm", title, source, explanation(reply.content), kernel=kernel, meta=meta)

    @staticmethod
    def _assistant(verdict: Verdict) -> dict:
        """The reply kept in the conversation: its reasoning left out (the model need not reread it)."""
        reply = verdict.candidate.meta.get("reply")
        content = strip_reasoning(reply).strip() if reply is not None else f"(no reply: {verdict.reason})"
        return {"role": "assistant", "content": content or "(empty reply)"}


def _repeat(cand: Candidate, first: Verdict) -> Verdict:
    """Models often answer the same rewrite twice, within a round or across rounds: verified once."""
    meta = first.candidate.meta
    return Verdict(cand, False, f"the same rewrite as round {meta.get('round')}'s candidate {meta.get('candidate')}"
                   f" ({'accepted' if first.accepted else 'refused: ' + first.reason})", mode="none")


# how far a refused candidate got: the one that got furthest teaches the model most
_PROGRESS = ("not faster", "slower", "wrong result", "fails only", "torch fallback", "runtime error", "compile error",
             "import failed", "refused before running", "syntax error", "unusable reply", "the reply changes nothing")


def _most_informative(verdicts: list[Verdict]) -> Verdict:
    def rank(v: Verdict) -> int:
        return next((i for i, p in enumerate(_PROGRESS) if v.reason.startswith(p) or p in v.reason[:40]),
                    len(_PROGRESS))

    return min(verdicts, key=rank)
