"""Incremental parsing gives exactly the tree a full parse gives, whatever the edits."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from tritonlens.analysis.source import new_parser
from tritonlens.server.incremental import IncrementalParser

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from gen_kernels import generate  # noqa: E402

PIECES = ["", "x", "\n", "  # é😀", "(", ")", ":", "'''", "def f():\n    pass\n", "tl.arange(0, 100)", "\t", "\r\n"]


def test_random_edits_match_a_full_parse():
    rng = random.Random(1234)
    inc, full = IncrementalParser(), new_parser()
    inc.current = "file:///k.py"
    text = generate(3)
    inc.parse(text.encode())
    for i in range(100):
        pos = rng.randrange(len(text) + 1)
        text = text[:pos] + rng.choice(PIECES) + text[pos + rng.randrange(0, 20):]
        data = text.encode("utf-8", errors="surrogatepass")
        assert str(inc.parse(data).root_node) == str(full.parse(data).root_node), f"edit {i}"
    assert inc.reused > 0  # valid intermediate texts reused the previous tree


def test_valid_edits_reuse_the_tree():
    inc, full = IncrementalParser(), new_parser()
    inc.current = "file:///k.py"
    lines = generate(8).split("\n")
    inc.parse("\n".join(lines).encode())
    for i in range(10, len(lines), 25):
        lines[i] += "  # edited"
        data = "\n".join(lines).encode()
        assert str(inc.parse(data).root_node) == str(full.parse(data).root_node)
    assert inc.reused == len(range(10, len(lines), 25))


def test_documents_do_not_share_trees():
    inc, full = IncrementalParser(), new_parser()
    a, b = generate(2).encode(), b"import triton\nx = 1\n"
    inc.current = "a"
    inc.parse(a)
    inc.current = "b"
    inc.parse(b)
    inc.current = "a"
    edited = a.replace(b"BLOCK_SIZE", b"BLOCK", 1)
    assert str(inc.parse(edited).root_node) == str(full.parse(edited).root_node)
    inc.forget("a")
    assert str(inc.parse(b).root_node) == str(full.parse(b).root_node)
