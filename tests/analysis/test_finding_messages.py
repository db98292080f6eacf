"""Every rule's messages are one plain line within findings.MESSAGE_LIMIT: one sentence plus the
values seen, no markdown (LSP clients show messages as plain text, so backticks would show). The
detail belongs in the rule's page, which the finding links to."""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
from pathlib import Path

import pytest
from tritonlens.analysis import message_text as mt
from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.findings import MESSAGE_LIMIT

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "rules"
CODES = sorted(d.name for d in FIXTURES.iterdir() if d.is_dir())
# A sentence ends at '. ' or '; ' followed by more prose; values in parentheses or quotes do not count.
_SECOND_SENTENCE = re.compile(r"[.;]\s+[A-Za-z]")


def _messages(code: str) -> list[tuple[str, str]]:
    out = []
    for path in sorted((FIXTURES / code).glob("*.py")):
        result = Analyzer().analyze(path.read_text(encoding="utf-8"), path=str(path), select=[code])
        out += [(f"{path.name}:{f.range.start.line + 1}", f.message) for f in result.findings if f.code == code]
    return out


def _prose(message: str) -> str:
    """`message` without its quoted code and parenthesized values."""
    text = re.sub(r"(?<!\w)'[^']*'(?!\w)", "x", message)
    while True:
        shorter = re.sub(r"\([^()]*\)", "", text)
        if shorter == text:
            return text
        text = shorter


def _bad(messages: list[tuple[str, str]]) -> list[str]:
    return [f"{where}: {len(m)} chars: {m}" for where, m in messages
            if len(m) > MESSAGE_LIMIT or "\n" in m or "`" in m]


@pytest.mark.parametrize("code", CODES)
def test_messages_are_one_short_plain_line(code: str):
    messages = _messages(code)
    assert messages, f"{code}'s fixtures give no finding to check"
    bad = _bad(messages)
    assert not bad, f"{code} messages over {MESSAGE_LIMIT} characters, on several lines or with backticks:\n" + "\n".join(bad)


@pytest.mark.parametrize("code", CODES)
def test_messages_are_one_sentence(code: str):
    bad = [f"{where}: {m}" for where, m in _messages(code) if len(_SECOND_SENTENCE.findall(_prose(m))) > 1]
    assert not bad, f"{code} messages of several sentences:\n" + "\n".join(bad)


@pytest.mark.parametrize("folder", ["tests/fixtures/rules", "examples"])
def test_merged_messages_of_every_rule_stay_within_the_limit(folder: str):
    """All rules at once, as `tritonlens check --select ALL` runs them: what merging adds (other
    configurations, other subjects on the line, other uses in the file) stays within the limit too."""
    messages = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        result = Analyzer().analyze(path.read_text(encoding="utf-8"), path=str(path), select=["ALL"])
        messages += [(f"{path.name}:{f.range.start.line + 1} {f.code}", f.message) for f in result.findings]
    assert messages
    bad = _bad(messages)
    assert not bad, "\n".join(bad)


def _long_names(text: str, suffix: str = "_of_a_rather_long_name") -> str:
    """`text` with every name it defines (functions, parameters, variables) made longer; keywords
    of calls into Triton (`mask=`) and attributes (`tl.load`) stay as they are."""
    tree = ast.parse(text)
    names, params = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef):
            names.add(n.name)
            params |= {a.arg for a in n.args.args + n.args.kwonlyargs}
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
    names |= params
    toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    out = []
    for i, t in enumerate(toks):
        prev, after = toks[i - 1].string if i else "", toks[i + 1].string if i + 1 < len(toks) else ""
        keyword_arg = after == "=" and prev in ("(", ",") and t.string not in params
        if t.type == tokenize.NAME and t.string in names and not keyword.iskeyword(t.string) and prev != "." \
                and not keyword_arg:
            t = t._replace(string=t.string + suffix)
        out.append(t)
    return tokenize.untokenize(out)


def test_messages_stay_within_the_limit_with_long_names_and_four_digit_lines():
    """Real code has longer names than the fixtures and kernels deep in long files: every part of a
    message that quotes the code is bounded, and shorter forms take over when the full one is long."""
    bad, count = [], 0
    for path in sorted(FIXTURES.glob("*/positive*.py")):
        text = "\n" * 1000 + _long_names(path.read_text(encoding="utf-8"))
        result = Analyzer().analyze(text, path=str(path), select=["ALL"])
        count += len(result.findings)
        bad += _bad([(f"{path.name}:{f.range.start.line + 1} {f.code}", f.message) for f in result.findings])
    assert count > 100  # the renaming keeps most findings: the test reaches most rules
    assert not bad, "\n".join(bad)


def test_quoted_code_and_optional_detail_are_bounded():
    long_expr = "offs_m[:, None].to(tl.int64) * stride_output_row_major_with_padding"
    quoted = mt.code(long_expr)
    assert quoted == "'offs_m[:, None].to(tl.int64) *…'" and len(quoted) <= mt.CODE_WIDTH + 2
    assert mt.name("out_ptr") == "out_ptr" and mt.name("x + 1") == "'x + 1'"
    assert mt.fit("a" * 100, " (fits)", " (this one does not fit)") == "a" * 100 + " (fits)"
    assert mt.shortest_needed("x" * 200, "y" * 90) == "y" * 90


def test_tl006_names_the_dtype_the_launch_passes_and_no_other():
    path = FIXTURES / "TL006" / "positive_half_precision_tensors.py"
    result = Analyzer().analyze(path.read_text(encoding="utf-8"), path=str(path), select=["TL006"])
    by_kernel = {f.kernel: f.message for f in result.findings}
    assert "(4 GiB of fp16)" in by_kernel["write_pages"]
    assert "(4 GiB of bf16)" in by_kernel["scale_logits"]
    # Two launches with fp16 and fp32 tensors: no dtype is the tensor's, so none is named.
    assert "GiB" not in by_kernel["batch_copy"] and "fp" not in by_kernel["batch_copy"]
    for path in sorted((FIXTURES / "TL006").glob("positive_*.py")):
        result = Analyzer().analyze(path.read_text(encoding="utf-8"), path=str(path), select=["TL006"])
        assert not [f for f in result.findings if "fp32" in f.message], path.name
