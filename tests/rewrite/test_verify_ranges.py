"""Which value ranges the worker picks from an original's kernels, and what a range does to the
inputs. The worker's modules run in a child Python, as in the worker (they set up the interpreter
for themselves)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from rewrite_support import FIXTURES
from tritonlens.profiling.client import WORKER_DIR

PROBE = r"""
import json, sys
import torch
import verify_ranges as vr

texts = json.loads(sys.stdin.read())
out = {name: [r.name for r in vr.ranges_for(text, torch.float32)] for name, text in texts.items()}
out["fp16 softmax"] = [r.name for r in vr.ranges_for(texts["softmax_rows.py"], torch.float16)][:2]
out["no float input"] = [r.name for r in vr.ranges_for(texts["softmax_rows.py"], None)]

gen = torch.Generator().manual_seed(0)
base = torch.randn(6, 8, generator=gen)
x = base[:, :5]  # strided: the range must keep the layout and leave the padding alone
idx = torch.arange(5)
args = (x, idx, 0.5)
ranges = {r.kind + str(r.value): r for r in vr.ranges_for(texts["softmax_rows.py"], torch.float32)}
vr.apply_range(ranges["constant0.0"], args, {}, gen)
out["constant rows"] = [sorted(set(row)) for row in x.tolist()][:2]
out["layout kept"] = [x.stride(), base[:, 5:].abs().sum().item() > 0, idx.tolist()]
vr.apply_range(ranges["exp0.0"], args, {}, gen)
out["exp range"] = [round(float(x.min()), 1), round(float(x.max()), 1)]
vr.apply_range(ranges["tiny1e-30"], args, {}, gen)
out["tiny rms"] = float(x.double().norm() / x.numel() ** 0.5)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def got() -> dict:
    texts = {p.name: p.read_text() for p in FIXTURES.glob("*.py")}
    proc = subprocess.run([sys.executable, "-c", PROBE], check=False, input=json.dumps(texts), cwd=WORKER_DIR,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_ranges_follow_what_the_kernels_compute(got):
    general = ["shifted by +1000", "shifted by -1000", "scaled by 1000"]
    tiny = "tiny values (|x|≈1e-30)"
    assert got["vadd.py"] == general and got["transpose_small.py"] == general  # no exp, log, division
    assert got["softmax_rows.py"] == ["near exp overflow (x≈88)", tiny, "zeros", "constant rows", *general]
    assert got["log_clamped.py"] == [tiny, "zeros", *general]  # a log, no division: no constant rows
    assert got["layernorm_small.py"] == [tiny, "zeros", "constant rows", *general]
    assert got["matmul_small.py"] == general
    assert got["fp16 softmax"] == ["near exp overflow (x≈11)", "tiny values (|x|≈1e-06)"]
    assert got["no float input"] == []


def test_a_range_rewrites_float_inputs_only_and_keeps_their_layout(got):
    assert all(len(values) == 1 and values[0] * 8 == int(values[0] * 8) for values in got["constant rows"])
    stride, padding_untouched, idx = got["layout kept"]
    assert stride == [8, 1] and padding_untouched and idx == [0, 1, 2, 3, 4]
    low, high = got["exp range"]
    assert 83 < low < 88.7 < high < 94  # around log(max fp32): some past the overflow of exp
    assert abs(got["tiny rms"] - 1e-30) < 1e-32
