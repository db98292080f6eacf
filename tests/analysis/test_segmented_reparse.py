"""An edit inside one top-level statement re-parses that statement alone (SegmentedTree); the
result must be the tree a full parse gives, node for node, or the edit falls back."""

import random
import re
from pathlib import Path

import pytest

from tritonlens.analysis.engine import Analyzer
from tritonlens.analysis.source import SegmentedTree, captures, new_parser, reparse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _sig(root):
    return [(n.type, n.start_byte, n.end_byte, tuple(n.start_point), tuple(n.end_point), str(n))
            for n in root.named_children]


def _edit(parser, old: str, new: str):
    tree = parser.parse(old.encode())
    got, reused = reparse(parser, old.encode(), tree, new.encode())
    full = parser.parse(new.encode())
    assert _sig(got.root_node) == _sig(full.root_node)
    assert got.root_node.has_error == full.root_node.has_error
    return got


def test_edit_inside_a_kernel_reparses_that_statement_alone():
    text = (EXAMPLES / "softmax.py").read_text()
    new = text.replace("BLOCK_SIZE = triton.next_power_of_2(n_cols)", "BLOCK_SIZE = triton.next_power_of_2(n_cols) * 2", 1)
    assert new != text
    got = _edit(new_parser(), text, new)
    assert isinstance(got, SegmentedTree)
    # Statements after the edit moved by the inserted bytes, from trees that were not re-parsed.
    last_old = new_parser().parse(text.encode()).root_node.named_children[-1]
    assert got.root_node.named_children[-1].start_byte == last_old.start_byte + 4


def test_edits_in_sequence_keep_matching_a_full_parse():
    text = (EXAMPLES / "matmul.py").read_text()
    parser = new_parser()
    data, tree = text.encode(), parser.parse(text.encode())
    rng = random.Random(7)
    segmented = 0
    for _ in range(60):
        nums = [m.span() for m in re.finditer(r"(?<=[ (=,*+])\d+\b", text)]
        a, b = rng.choice(nums)
        text = text[:a] + str(rng.choice([1, 16, 64, 1000, 123456])) + text[b:]
        new_data = text.encode()
        tree, _ = reparse(parser, data, tree, new_data)
        segmented += isinstance(tree, SegmentedTree)
        assert _sig(tree.root_node) == _sig(parser.parse(new_data).root_node)
        data = new_data
    assert segmented > 30  # most number edits sit inside one statement


@pytest.mark.parametrize("change", [
    ("\n\ndef block_sum(", "\n\nx = 1\ndef block_sum("),  # a new top-level statement: not inside one
    ("    return out\n", "    return out\nfoo(\n"),  # runs on past the statement, with an error
    ("partial = tl.sum(x, axis=0)", "partial = tl.sum(x, axis=0"),  # an error inside the kernel
])
def test_edits_that_are_not_inside_one_statement_fall_back(change):
    text = (EXAMPLES / "reduction_atomic.py").read_text()
    old, new = change
    assert old in text
    got = _edit(new_parser(), text, text.replace(old, new, 1))
    assert not isinstance(got, SegmentedTree)


def test_root_of_pieces_answers_queries_and_positions():
    text = (EXAMPLES / "vector_add.py").read_text()
    new = text.replace("BLOCK_SIZE=", "BLOCK_SIZE =", 1)
    got = _edit(new_parser(), text, new)
    assert isinstance(got, SegmentedTree)
    full = new_parser().parse(new.encode())
    q = "(call) @c"
    assert [(n.start_byte, n.end_byte) for n in captures(got.root_node, q, "c")] == \
        [(n.start_byte, n.end_byte) for n in captures(full.root_node, q, "c")]
    line = next(i for i, l in enumerate(new.splitlines()) if "tl.arange" in l)
    col = new.splitlines()[line].index("tl.arange") + 3
    a = got.root_node.descendant_for_point_range((line, col), (line, col))
    b = full.root_node.descendant_for_point_range((line, col), (line, col))
    assert (a.type, a.start_byte, a.end_byte) == (b.type, b.start_byte, b.end_byte)


def test_analysis_after_segmented_edits_equals_a_fresh_analysis():
    text = (EXAMPLES / "layernorm.py").read_text()
    az = Analyzer()
    az.analyze(text, doc_id="doc")
    for block in ("BLOCK_SIZE=4", "BLOCK_SIZE=8", "BLOCK_SIZE=16"):
        edited = re.sub(r"BLOCK_SIZE=\w+", block, text, count=1)
        mine = az.analyze(edited, doc_id="doc")
        assert isinstance(az._trees["doc"][1], SegmentedTree)
        fresh = Analyzer().analyze(edited)
        assert [(f.code, f.range, f.message) for f in mine.findings] == \
            [(f.code, f.range, f.message) for f in fresh.findings]
