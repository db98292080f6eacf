"""Optimize and verify with no harness: the cases are the launches `tritonlens capture` recorded
from the project's own tests, replayed at kernel level on fresh data. Real worker processes, real
interpreter runs (no GPU here: correctness only, never a speed claim)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tritonlens.rewrite.candidate import Candidate
from tritonlens.rewrite.verify import Verifier

NORMPKG = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "normpkg"

BIAS = '''
"""y = x + b per row, in BLOCK-wide chunks along the row."""
import torch
import triton
import triton.language as tl

from ._shapes import flat_rows


@triton.jit
def _add_bias_kernel(X, B, Y, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(X + row * stride + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        tl.store(Y + row * stride + cols, x + b, mask=mask)


def add_bias(x, b):
    x2 = flat_rows(x)
    y = torch.empty_like(x2)
    _add_bias_kernel[(x2.shape[0],)](x2, b, y, x2.shape[1], x2.stride(0), BLOCK=128)
    return y.reshape(x.shape)
'''

TEST_BIAS = '''
import pytest
import torch

from biaspkg.ops.bias import add_bias


@pytest.mark.parametrize("shape", [(5, 700), (3, 64)])
def test_add_bias(shape):
    x = torch.randn(*shape, device="cuda")
    b = torch.randn(shape[-1]).cuda()
    torch.testing.assert_close(add_bias(x, b), x + b)
'''


def tritonlens(*args, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, TRITON_INTERPRET="1")
    return subprocess.run([sys.executable, "-m", "tritonlens", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600, check=False)


def write_biaspkg(root: Path) -> Path:
    files = {
        "pyproject.toml": '[project]\nname = "biaspkg"\nversion = "0.1"\n',
        "src/biaspkg/__init__.py": "",
        "src/biaspkg/ops/__init__.py": "",
        "src/biaspkg/ops/_shapes.py": "def flat_rows(x):\n    return x.reshape(-1, x.shape[-1]).contiguous()\n",
        "src/biaspkg/ops/bias.py": BIAS,
        "tests/test_bias.py": TEST_BIAS,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root / "src" / "biaspkg" / "ops" / "bias.py"


@pytest.fixture(scope="module")
def biaspkg(tmp_path_factory) -> Path:
    kernel_file = write_biaspkg(tmp_path_factory.mktemp("biaspkg"))
    proc = tritonlens("capture", str(kernel_file), cwd=kernel_file.parents[3])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return kernel_file


@pytest.fixture(scope="module")
def normpkg(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fixtures") / "normpkg"
    shutil.copytree(NORMPKG, root)
    kernel_file = root / "src" / "normpkg" / "ops" / "rmsnorm.py"
    proc = tritonlens("capture", str(kernel_file), cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return kernel_file


def test_optimize_config_on_records_is_correctness_only(biaspkg):
    root = biaspkg.parents[3]
    proc = tritonlens("optimize", str(biaspkg), "--proposers", "config", "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["mode"] == "interpreter"
    by_title = {c["title"]: c for c in report["candidates"]}
    autotune = by_title["autotune 4 configs"]
    # every config of the autotune list ran (round-robin over the checks) on the 2 recorded launches
    assert autotune["accepted"] and autotune["speedup"] is None
    assert autotune["reason"] == ("correct, not timed: run on a GPU to prove it faster; "
                                  "checked on 3 seeds × 2 recorded launches")
    # a launch-site literal lives in the wrapper, which a recorded kernel launch never runs
    literal = next(c for c in report["candidates"] if c["title"].startswith("config BLOCK="))
    assert not literal["accepted"] and literal["reason"].startswith(
        "not checked: recorded launches replay the kernels, not the wrapper this candidate changes")
    assert all(c["speedup"] is None for c in report["candidates"])
    # the tests' launches are a few KiB: a GPU timing of them would compare launch overheads
    (small,) = [n for n in report["notes"] if "too little to time" in n]
    assert small.startswith("the largest recorded launch moves ") and "tritonlens capture -- python bench.py" in small

    text = tritonlens("optimize", str(biaspkg), "--proposers", "config", cwd=root)
    assert text.returncode == 0, text.stderr
    assert "no GPU: candidates were checked for correctness only, not timed" in text.stdout
    assert "note: the largest recorded launch moves " in text.stdout
    assert "correct, not timed: run on a GPU to prove it faster; checked on 3 seeds × 2 recorded launches" in text.stdout
    assert ("best: autotune 4 configs — correct, not timed: run on a GPU to prove it faster; "
            "checked on 3 seeds × 2 recorded launches") in text.stdout
    correct = sum(c["accepted"] for c in report["candidates"])
    assert text.stdout.splitlines()[-1] == (
        f"result: correct, not timed: run on a GPU to prove it faster ({correct} of {len(report['candidates'])} "
        "rewrites correct)")


def _verify(kernel_file: Path, edits: dict[str, tuple[str, str]]):
    text = kernel_file.read_text()
    candidates = []
    for title, (old, new) in edits.items():
        assert text.count(old) == 1, old
        candidates.append(Candidate("test", title, text.replace(old, new)))
    with Verifier(str(kernel_file), text, timeout=300) as verifier:
        verdicts = verifier.verify(candidates, isolate=False)
    assert verifier.source == "records" and verifier.mode == "interpreter"
    return {v.candidate.title: v for v in verdicts}


def test_wrong_candidates_are_refused_on_the_records_of_normpkg(normpkg):
    verdicts = _verify(normpkg, {
        "reassociated": ("y = x * rstd * w", "y = (x * w) * rstd"),
        "eps dropped in the wrong place": ("1.0 / tl.sqrt(mean_sq + eps)", "1.0 / tl.sqrt(mean_sq + eps + 0.5)"),
        "store without its mask": ("y.to(Y.dtype.element_ty), mask=mask)", "y.to(Y.dtype.element_ty))"),
        "rstd never stored": ("tl.store(RSTD + row, rstd)", "pass"),
    })
    ok = verdicts["reassociated"]
    assert ok.accepted and ok.speedup is None and ok.reason.startswith("correct, not timed: run on a GPU to prove it faster; checked on 3 seeds × ")
    assert ok.shapes >= 6  # every recorded launch (3 shapes x 2 dtypes, and the 3-d input) took part
    wrong = verdicts["eps dropped in the wrong place"]
    assert not wrong.accepted and wrong.reason.startswith("wrong result on case 0"), wrong.reason
    unmasked = verdicts["store without its mask"]
    assert not unmasked.accepted and "out-of-bounds write" in unmasked.reason, unmasked.reason
    unwritten = verdicts["rstd never stored"]
    assert not unwritten.accepted and "NaN (unwritten or invalid)" in unwritten.reason, unwritten.reason


def test_wrong_candidate_is_refused_on_biaspkg(biaspkg):
    verdicts = _verify(biaspkg, {"off by a bias": ("x + b, mask=mask)", "x + b + 0.001, mask=mask)")})
    (wrong,) = verdicts.values()
    assert not wrong.accepted and wrong.reason.startswith("wrong result on case 0"), wrong.reason


def test_which_edits_a_recorded_launch_can_reach():
    """Kernel-level cases never call the wrapper: an edit confined to it is not checked; an edit
    of a Triton function, its decorators or a module-level value is."""
    from tritonlens.profiling.client import WORKER_DIR

    edits = {"launch literal": ("BLOCK=128)", "BLOCK=256)"),
             "kernel body": ("x + b, mask=mask)", "b + x, mask=mask)"),
             "decorator": ("@triton.jit", "@triton.jit(do_not_specialize=['n_cols'])"),
             "module value": ("from ._shapes import flat_rows", "from ._shapes import flat_rows\nEPS = 1e-6")}
    script = (f"import json, sys\nsys.path.insert(0, {str(WORKER_DIR)!r})\nimport record_cases\n"
              "original, edits = json.loads(sys.stdin.read())\n"
              "print(json.dumps({k: record_cases.wrappers_only(original, original.replace(*e)) "
              "for k, e in edits.items()}))")
    proc = subprocess.run([sys.executable, "-c", script], input=json.dumps([BIAS, edits]), capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, TRITON_INTERPRET="1"), check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"launch literal": True, "kernel body": False, "decorator": False,
                                       "module value": False}


def test_optimize_without_records_or_harness_says_how_to_get_them(tmp_path):
    kernel_file = write_biaspkg(tmp_path)
    proc = tritonlens("optimize", str(kernel_file), "--proposers", "config", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip().splitlines()[-1] == (
        "tritonlens optimize: the original cannot be verified: no launch records and no harness for bias.py: "
        "run `tritonlens capture src/biaspkg/ops/bias.py`, define tritonlens_cases(), or pass --harness FILE.py::FUNC")


def test_tritonlens_optimize_on_normpkg_runs_from_its_tests_records(normpkg):
    """The project has no harness and nothing written for tritonlens: the command line's optimize
    verifies on what its own tests launched, and with no GPU claims correctness, never speed."""
    proc = tritonlens("optimize", str(normpkg), "--proposers", "config,rules", cwd=normpkg.parents[3])
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "no GPU: candidates were checked for correctness only, not timed" in out
    assert "recorded launches" in out and "run on a GPU to prove it faster" in out
    assert "x faster" not in out and "x speedup" not in out
