"""TL009 on tl.dot operands, AMD wavefronts, and the configuration a finding names (#30)."""

from __future__ import annotations

from pathlib import Path

from tritonlens.analysis.engine import Analyzer

FIXTURES = Path(__file__).parent.parent / "fixtures" / "rules" / "TL009"


def _findings(name: str) -> list:
    text = (FIXTURES / name).read_text()
    return [f for f in Analyzer().analyze(text, path=name, select=["TL009"]).findings if f.code == "TL009"]


def test_dot_operands_are_not_register_tiles():
    # 32,768-element int8 operand tiles on 4 warps: shared memory, not 256 registers a thread.
    assert _findings("negative_dot_operands.py") == []


def test_amd_file_counts_64_lane_wavefronts():
    assert _findings("negative_amd_wavefronts.py") == []
    text = (FIXTURES / "negative_amd_wavefronts.py").read_text().replace("import aiter", "import torch as aiter")
    found = [f for f in Analyzer().analyze(text, select=["TL009"]).findings if f.code == "TL009"]
    assert len(found) == 1 and found[0].data["per_thread"] == 128  # the same kernel on 32-thread warps


def test_finding_names_its_autotune_config():
    (f,) = _findings("positive_names_the_config.py")
    assert "BLOCK_ROWS=128" in f.message and "num_warps=4" in f.message
    assert "(autotune config 3 of 3)" in f.message
    assert f.data["config"].startswith("the launch at line") and "autotune config #3" in f.data["config"]
