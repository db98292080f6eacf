"""The record of one LLM optimize, saved beside the user's file for them to read:

    <folder of the file>/.tritonlens/optimize/<stem>-<UTC timestamp>.llm.json

every message sent and every reply (with its finish_reason, usage and the verdict on it), per round
and candidate. It is rewritten after each round, so a crash or a cancel keeps what was done.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tritonlens.profiling.launch_records import private_folder

from .candidate import Verdict
from .llm_client import LLMReply, LLMSettings

FOLDER = os.path.join(".tritonlens", "optimize")


class Transcript:
    def __init__(self, file_path: str, settings: LLMSettings, folder: str | None = None):
        """`folder`: where to write (default: beside `file_path`, under .tritonlens/optimize)."""
        self.folder = Path(folder) if folder else Path(os.path.dirname(os.path.abspath(file_path))) / FOLDER
        stem = Path(file_path).stem
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        base, n = f"{stem}-{stamp}", 1
        while (self.folder / f"{base}.llm.json").exists():  # two optimizes of one file in one second
            n += 1
            base = f"{stem}-{stamp}-{n}"
        self.base = base
        self.path = self.folder / f"{base}.llm.json"
        self.data = {"file": os.path.abspath(file_path), "model": settings.model, "base_url": settings.base_url,
                     "settings": {k: v for k, v in vars(settings).items() if k != "api_key_env"},
                     "rounds": [], "tokens": 0, "system_folded": False, "stopped": None}

    def sibling(self, suffix: str) -> Path:
        """A file of this optimize beside the transcript (the best rewrite: `.best.py`)."""
        return self.folder / f"{self.base}{suffix}"

    def add_round(self, round_no: int, sent: list[dict], replies: list, verdicts: list[Verdict],
                  base: str) -> None:
        """`sent`: the messages new in this round's conversation; `replies`: LLMReply or the error text."""
        candidates = []
        for i, (reply, verdict) in enumerate(zip(replies, verdicts)):
            entry = {"candidate": i + 1, "verdict": {"accepted": verdict.accepted, "reason": verdict.reason,
                                                     "speedup": verdict.speedup, "mode": verdict.mode,
                                                     "note": verdict.candidate.meta.get("note")}}
            if isinstance(reply, LLMReply):
                entry.update(content=reply.content, reasoning_content=reply.reasoning,
                             finish_reason=reply.finish_reason, usage=reply.usage, elapsed_s=reply.elapsed_s)
            else:
                entry["error"] = str(reply)
            candidates.append(entry)
        self.data["rounds"].append({"round": round_no, "base": base, "sent": sent, "candidates": candidates})

    def save(self, tokens: int, system_folded: bool, stopped: str | None = None) -> Path:
        self.data.update(tokens=tokens, system_folded=system_folded, stopped=stopped)
        if self.folder.parent.name == ".tritonlens":
            private_folder(self.folder.parent)
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1, default=str), encoding="utf-8")
        os.replace(tmp, self.path)
        return self.path
