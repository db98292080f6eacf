"""Recall beside precision on the judged sample: what the default rules keep, what they report
falsely, and the recall view's list of every judged-true finding no longer reported."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from realworld_precision import judged_sample
from recall_view import overall, score, write_recall_view


def _sample(tmp_path: Path) -> dict:
    (tmp_path / "TL006.md").write_text(
        "| location | verdict | reason |\n|---|---|---|\n"
        "| p/ops/a.py:3 | true | row * stride over a whole activation |\n"
        "| p/ops/a.py:9 | true | same, backward |\n"
        "| p/ops/b.py:4 | false | bounded by a 4096 cap |\n"
        "| p/backend/_ascend/a.py:3 | true | another vendor's copy |\n", encoding="utf-8")
    (tmp_path / "TL008.md").write_text(
        "| location | verdict | reason |\n|---|---|---|\n"
        "| p/mm.py:20 | true | hard-coded tiles |\n", encoding="utf-8")
    return judged_sample(tmp_path)


def test_recall_counts_default_rules_only_and_leaves_other_backends_unread(tmp_path):
    firing = {("p/ops/a.py", 3, "TL006"), ("p/ops/b.py", 4, "TL006"), ("p/mm.py", 20, "TL008")}
    rules = score(firing, _sample(tmp_path), defaults={"TL006"})
    tl006, tl008 = rules["TL006"], rules["TL008"]
    assert (tl006.true, tl006.kept, tl006.recall, tl006.not_read) == (2, 1, 0.5, 1)
    assert (tl006.false, tl006.false_reported, tl006.false_rate) == (1, 1, 1.0)
    assert [(loc, line, why) for loc, line, why, _ in tl006.lost] == [("p/ops/a.py", 9, "no longer fires")]
    # An opt-in rule's true finding is lost to a user of the defaults, even where --select finds it.
    assert (tl008.kept, tl008.lost[0][2]) == (0, "rule is opt-in (fires with --select)")
    assert overall(rules) == {"judged_true": 3, "kept": 1, "recall": 0.333, "judged_false": 1,
                              "false_reported": 1, "false_rate": 1.0}


def test_the_recall_view_lists_every_lost_true_finding_with_its_reason(tmp_path):
    rules = score(set(), _sample(tmp_path), defaults={"TL006"})
    out = tmp_path / "recall.md"
    write_recall_view(rules, out)
    text = out.read_text(encoding="utf-8")
    assert "| p/ops/a.py:3 | no longer fires | row * stride over a whole activation |" in text
    assert "| p/mm.py:20 | rule is opt-in | hard-coded tiles |" in text
    assert "_ascend" not in text
    assert "Default rules keep 0 of 3" in text
