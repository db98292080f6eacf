"""The text rules every hover follows: user text escaped in markdown (code spans a message marks
kept), the same text in plain text, an error as its one telling line, at most n lines."""

from __future__ import annotations

from tritonlens.server.kernel_card import one_line
from tritonlens.server.markup import clip, escape, plain

TRACEBACK = """Traceback (most recent call last):
  File "/home/user/project/src/pkg/ops/very/long/path/to/the/module/that/failed_to_compile.py", line 12, in <module>
    from fla.ops.utils import chunk_indices
  File "<frozen importlib._bootstrap>", line 1176, in _find_and_load
ModuleNotFoundError: No module named 'fla'
"""


def test_an_error_is_its_last_telling_line_never_a_frame():
    assert one_line(TRACEBACK) == "ModuleNotFoundError: No module named 'fla'"
    assert one_line("x" * 300).endswith("…") and len(one_line("x" * 300)) == 110


def test_names_are_escaped_and_marked_code_spans_kept():
    assert escape("_rms_norm_forward_kernel") == r"\_rms\_norm\_forward\_kernel"
    assert escape("a*b|c `x_y` [d] <e>") == r"a\*b\|c `x_y` \[d\] \<e\>"
    # plain text gets the characters back, without escapes, emphasis or ticks
    assert plain("**" + escape("_rms_norm*") + "** with `x_y`") == "_rms_norm* with x_y"
    assert plain("[Full report](command:x?%5B%5D)") == "Full report"


def test_clip_keeps_code_blocks_whole():
    text = "title\n```python\na\n```\nm1\nm2\n\n```python\nsig\n```\n\ndoc"
    assert clip(text, 20) == text
    cut = clip(text, 9)
    assert cut.splitlines() == ["title", "```python", "a", "```", "m1", "m2", "…"]
