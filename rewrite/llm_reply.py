"""From an LLM reply to a candidate source: the final answer's code, never a draft.

The reply is untrusted text: it is parsed here, never executed. Reasoning models write drafts
before answering (inside <think>…</think>, or in a separate reasoning_content field, which is not
read here), and answers often close with a usage example; so the code taken is that of the final
answer, the last block that defines functions of the original, merged onto the base by name.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from tritonlens.analysis.python_ast import parse as parse_python

from .edits import merge_functions, top_level_defs

PYTHON_LANGS = ("python", "py", "python3", "")
DIFF_LANGS = ("diff", "patch", "udiff")
MAX_TOKENS_SETTING = "tritonlens.llm.maxTokens (CLI: --llm-max-tokens)"
# functions a harness defines: a block defining only these is an example, not a rewrite
_HARNESS = re.compile(r"^(tritonlens_cases$|test_|main$)")

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+.-]*)[^\n]*$")
_DEF_TEXT = re.compile(r"^(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_DIFF_HUNK = re.compile(r"^@@ .*@@", re.MULTILINE)
_DIFF_FILES = re.compile(r"^--- .*\n\+\+\+ ", re.MULTILINE)


@dataclass
class Block:
    lang: str
    body: str
    closed: bool


def strip_reasoning(text: str) -> str:
    """The answer without its reasoning: <think> blocks removed; text before a lone </think> (its
    <think> was in the prompt template) is reasoning; an unclosed <think> runs to the end."""
    text = _THINK.sub("", text or "")
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[:opened.start()]
    return text


def fenced_blocks(text: str) -> list[Block]:
    """Fenced blocks in order; the last one is `closed=False` when the text ends inside it."""
    blocks: list[Block] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i].rstrip("\r\n"))
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        indented = lines[i][:1] in (" ", "\t")  # a fence indented in a list item: so is its code
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        i += 1
        while i < len(lines) and not close.match(lines[i].rstrip("\r\n")):
            body.append(lines[i])
            i += 1
        text = textwrap.dedent("".join(body)) if indented else "".join(body)
        blocks.append(Block(lang, text, closed=i < len(lines)))
        i += 1
    return blocks


def _is_diff(block: Block) -> bool:
    return block.lang in DIFF_LANGS or bool(_DIFF_HUNK.search(block.body) or _DIFF_FILES.search(block.body))


def cut_note(max_tokens: int | None, finish_reason: str | None, why: str | None = None) -> str:
    """Why a reply holds no whole answer, naming the limit and the setting that raises it."""
    limit = f"max_tokens={max_tokens}" if max_tokens else "max_tokens=the server's default"
    how = f"raise {MAX_TOKENS_SETTING}"
    if finish_reason == "length":
        return f"the reply was cut at the token limit ({limit}): {how}"
    return f"{why or 'the reply ends inside an unclosed code fence'}: probably cut at the token limit ({limit}): {how}"


DIFF_NOTE = ("the reply is a diff, which is not applied: ask for whole functions or the file "
             "(answer with the changed functions or the complete file in a ```python block)")


def _defined(body: str) -> tuple[ast.Module | None, list[str]]:
    """(tree or None when it does not parse, names of the top-level defs)."""
    try:
        tree = parse_python(body)
    except SyntaxError:
        return None, _DEF_TEXT.findall(body)
    return tree, list(top_level_defs(tree))


def _complete(body: str) -> str:
    return body if body.endswith("\n") else body + "\n"


def extract_source(reply: str, base: str, finish_reason: str | None = None,
                   max_tokens: int | None = None) -> tuple[str | None, str]:
    """(complete candidate source or None, note) from the reply's content.

    `base` is what function-only blocks are merged onto (the original, or the best rewrite so far).
    A block that does not parse is returned as it is, for the verifier to refuse as a syntax error.
    """
    if finish_reason == "length":
        return None, cut_note(max_tokens, finish_reason)
    answer = strip_reasoning(reply)
    blocks = fenced_blocks(answer)
    if blocks and not blocks[-1].closed:
        return None, cut_note(max_tokens, finish_reason)
    code = [b for b in blocks if b.lang in PYTHON_LANGS and not _is_diff(b)]
    if not code:
        if any(_is_diff(b) for b in blocks) or _DIFF_HUNK.search(answer):
            return None, DIFF_NOTE
        if not answer.strip() and _THINK_OPEN.search(reply or "") and not _THINK_CLOSE.search(reply or ""):
            return None, cut_note(max_tokens, finish_reason, "the reply is all reasoning (<think> never closed)")
        return None, "the reply holds no fenced ```python code block"
    wanted = {n for n in top_level_defs(parse_python(base)) if not _HARNESS.match(n)}
    parsed = [(b.body, *_defined(b.body)) for b in code]
    answers = [(body, tree, names) for body, tree, names in parsed if wanted & set(names)]
    if not answers:
        broken = [body for body, tree, _ in parsed if tree is None]
        if broken:
            return broken[-1], _syntax_note(broken[-1])
        if not any(names for _, _, names in parsed):
            return None, "the code block defines no function"
        return None, (f"no code block defines a function of the file ({', '.join(sorted(wanted))}): "
                      "the reply holds examples, not a rewrite")
    body, tree, names = answers[-1]
    if tree is None:
        return body, _syntax_note(body)
    # a function-only answer may come in several blocks (the kernel, then the wrapper): the blocks
    # since the last complete file are merged in order, a later one winning
    start = len(answers) - 1
    while start > 0 and not _is_file(answers[start][1], base) and answers[start - 1][1] is not None:
        start -= 1
    source, merged = base, []
    for body, tree, names in answers[start:]:
        if _is_file(tree, base):
            source, merged = _complete(body), []
        else:
            source = merge_functions(source, body)
            merged += [n for n in names if n not in merged]
    if not merged:
        return source, "complete file"
    return source, f"merged {len(merged)} function(s) by name: {', '.join(sorted(merged))}"


def _is_file(tree: ast.Module, base: str) -> bool:
    has_imports = any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body)
    return has_imports and set(top_level_defs(parse_python(base))) <= set(top_level_defs(tree))


def _syntax_note(body: str) -> str:
    try:
        parse_python(body)
    except SyntaxError as exc:
        return f"syntax error in the reply: line {exc.lineno}: {exc.msg}"
    return "syntax error in the reply"


def explanation(reply: str) -> str:
    """The answer's prose (code and reasoning left out), as the candidate's description."""
    text = strip_reasoning(reply)
    kept = []
    inside = False
    for line in text.splitlines():
        if _FENCE_OPEN.match(line):
            inside = not inside
            continue
        if not inside:
            kept.append(line)
    return " ".join(" ".join(kept).split())[:500]
