"""The analyzer never raises, and no rule fails, on any text: truncated, mutated or garbage."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tritonlens.analysis.engine import Analyzer

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests" / "fixtures" / "rules").glob("*/*.py"))
TEXTS = [p.read_text() for p in CORPUS] or ["import triton\n"]
TOKENS = ["tl.arange(0, ", "BLOCK", ")", "(", "[", "]", ":", "\n    ", "\n", "tl.dot(", "tl.load(", "mask=", "=", "*",
          "for i in range(", "@triton.jit\n", "def k(", "tl.constexpr", "\"", "'''", "\t", "\r\n", "\ud800", "é", "#",
          "# tritonlens: ignore[", "lambda", "None", "**", "-1", "2**70", "1e400", "tl.full((", "dtype=tl.float64"]

analyzer = Analyzer()


def _check(text: str) -> None:
    result = analyzer.analyze(text)
    assert not result.errors, result.errors
    for f in result.findings:
        assert f.range.start <= f.range.end


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["truncate", "delete", "insert", "duplicate", "swap_lines"]))
        n = len(text)
        i = draw(st.integers(0, n))
        if kind == "truncate":
            text = text[:i]
        elif kind == "delete":
            j = draw(st.integers(i, min(n, i + 40)))
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif kind == "duplicate":
            j = draw(st.integers(i, min(n, i + 200)))
            text = text[:j] + text[i:j] + text[j:]
        else:
            lines = text.splitlines(keepends=True)
            if len(lines) > 2:
                a, b = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
                lines[a], lines[b] = lines[b], lines[a]
                text = "".join(lines)
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_corpus(text):
    _check(text)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_random_text(text):
    _check(text)


def test_every_prefix_of_one_example():
    text = TEXTS[0]
    for i in range(0, len(text), max(1, len(text) // 200)):
        _check(text[:i])


def test_pathological_inputs():
    for text in ["", "\n" * 1000, "x" * 10_000, "@triton.jit\ndef k(" + "a," * 2000 + "):\n  pass\n",
                 "@triton.jit\ndef k(B: tl.constexpr):\n    x = tl.arange(0, B)\n" + "    x = x + 1\n" * 500,
                 "@triton.jit\ndef k(B: tl.constexpr):\n    a = b\n    b = a\n    tl.arange(0, a)\n",
                 "def w():\n    k[(1,)](*args, **kw)\n@triton.jit\ndef k(B: tl.constexpr=2**10000):\n  tl.arange(0, B)\n"]:
        _check(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutated(), min_size=2, max_size=5))
def test_incremental_reparse_matches_a_fresh_parse(texts):
    """Reusing a document's previous tree must give exactly what a fresh analysis gives."""
    az = Analyzer()
    for text in texts:
        incremental = az.analyze(text, doc_id="doc")
        fresh = Analyzer().analyze(text)
        assert [f.to_json() for f in incremental.findings] == [f.to_json() for f in fresh.findings]
        assert str(incremental.module.src.root) == str(fresh.module.src.root)
