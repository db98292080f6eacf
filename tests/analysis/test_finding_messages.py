"""Every rule's messages on its fixtures are one sentence plus the values seen: at most 160
characters on one line. The detail belongs in the rule's page, which the finding links to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tritonlens.analysis.engine import Analyzer

FIXTURES = Path(__file__).parent.parent / "fixtures" / "rules"
LIMIT = 160
# A sentence ends at '. ' or '; ' followed by more prose; values in parentheses or backticks do not count.
_SECOND_SENTENCE = re.compile(r"[.;]\s+[A-Za-z]")


def _messages(code: str) -> list[tuple[str, str]]:
    out = []
    for path in sorted((FIXTURES / code).glob("*.py")):
        result = Analyzer().analyze(path.read_text(encoding="utf-8"), path=str(path), select=[code])
        out += [(f"{path.name}:{f.range.start.line + 1}", f.message) for f in result.findings if f.code == code]
    return out


def _prose(message: str) -> str:
    """`message` without its quoted code and parenthesized values."""
    text = re.sub(r"`[^`]*`", "x", message)
    while True:
        shorter = re.sub(r"\([^()]*\)", "", text)
        if shorter == text:
            return text
        text = shorter


@pytest.mark.parametrize("code", sorted(d.name for d in FIXTURES.iterdir() if d.is_dir()))
def test_messages_are_one_short_line(code: str):
    bad = [f"{where}: {len(m)} chars: {m}" for where, m in _messages(code) if len(m) > LIMIT or "\n" in m]
    assert not bad, f"{code} messages over {LIMIT} characters or on several lines:\n" + "\n".join(bad)


@pytest.mark.parametrize("code", sorted(d.name for d in FIXTURES.iterdir() if d.is_dir()))
def test_messages_are_one_sentence(code: str):
    bad = [f"{where}: {m}" for where, m in _messages(code) if len(_SECOND_SENTENCE.findall(_prose(m))) > 1]
    assert not bad, f"{code} messages of several sentences:\n" + "\n".join(bad)
