"""A harness as people write one: a relative --harness path, a kernel file with a test call at its
top level, a harness that imports the kernel file by module name, by its package path or by
importlib from its path, and wraps its functions in its own. Real worker processes in Triton's
interpreter, and the worker's own modules loading real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tritonlens.rewrite.api import OptimizeOptions, optimize_file

from tritonlens.cli import main

WORKER = Path(__file__).resolve().parents[2] / "profiling" / "worker"

KERNEL = '''import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton
import triton.language as tl


@triton.jit
def triple_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * FACTOR, mask=mask)


FACTOR = 3.0


def triple(x):
    out = torch.empty_like(x)
    triple_kernel[(triton.cdiv(x.numel(), 32),)](x, out, x.numel(), BLOCK=32)
    return out
'''


def test_a_relative_harness_path_is_the_callers(tmp_path, monkeypatch, capsys):
    """Reproduces the relative `--harness` path that failed: the worker runs in a folder of its own."""
    (tmp_path / "triple.py").write_text(KERNEL, encoding="utf-8")
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "cases.py").write_text(textwrap.dedent('''
        import torch
        import triple

        def cases():
            yield triple.triple, (torch.randn(100),)
            yield triple.triple, (torch.randn(7),)
    '''), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the command line's own process; the worker's is another
    status = main(["optimize", "triple.py", "--harness", os.path.join("bench", "cases.py") + "::cases",
                   "--proposers", "config", "--format", "json"])
    out = capsys.readouterr()
    assert status == 0, out.err
    report = json.loads(out.out)
    literal = next(c for c in report["candidates"] if c["title"].startswith("config "))
    assert literal["accepted"], literal["reason"]



def test_profile_takes_a_relative_harness_path_too(tmp_path, monkeypatch, capsys):
    """`tritonlens profile --harness` takes a relative path against the caller's folder, with the one resolver
    optimize uses: the harness's own case (100 elements: 4 programs of 32) is what ran."""
    (tmp_path / "triple.py").write_text(KERNEL, encoding="utf-8")
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "cases.py").write_text(textwrap.dedent('''
        import torch
        import triple

        def cases():
            yield triple.triple, (torch.randn(100),)
    '''), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    status = main(["profile", "triple.py", "--harness", os.path.join("bench", "cases.py") + "::cases",
                   "--format", "json"])
    out = capsys.readouterr()
    assert status == 0, out.err
    report = json.loads(out.out)
    assert report["source"] == "harness"
    assert [(k["name"], k["launches"][0]["grid"]) for k in report["kernels"]] == [("triple_kernel", [4, 1, 1])]

def test_a_test_call_at_the_top_level_is_not_run_by_the_verifier(tmp_path):
    """Reproduces the import failure of a kernel file that calls its own test at the top level (here
    one that needs a GPU): importing the file to verify it ran the test."""
    text = KERNEL + '''

def test_triple():
    x = torch.randn(64, device="cuda")
    assert torch.allclose(triple(x), x * 3)


test_triple()
torch.manual_seed(0)  # a library's setup still runs


def tritonlens_cases():
    yield triple, (torch.randn(100, device=DEVICE),)
    yield triple, (torch.randn(7, device=DEVICE),)
'''
    path = tmp_path / "triple_script.py"
    path.write_text(text, encoding="utf-8")
    report = optimize_file(str(path), OptimizeOptions(proposers=("config",), job_timeout_s=300, budget_s=0))
    literal = next(c for c in report.candidates if c.title.startswith("config "))
    assert literal.accepted, literal.reason


HARNESSES = {
    "by_module_name": '''
        import torch
        import triple

        def cases():
            yield triple.triple, (X,)
    ''',
    "by_package_path": '''
        import torch
        from triplepkg import triple as kernels

        def cases():
            yield kernels.triple, (X,)
    ''',
    "by_importlib": '''
        import importlib.util
        import torch

        spec = importlib.util.spec_from_file_location("my_triple", KERNEL_PATH)
        mine = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mine)

        def cases():
            yield mine.triple, (X,)
    ''',
    "own_wrapper": '''
        import torch
        from triplepkg.triple import triple, triple_kernel

        def checked(x):
            return twice_then(x)

        def twice_then(x):
            assert triple_kernel is not None
            return triple(x)

        def cases():
            yield checked, (X,)
    ''',
    "closure": '''
        import importlib
        import torch

        def cases():
            mod = importlib.import_module("triplepkg.triple")

            def run(x):
                return mod.triple(x)
            yield run, (X,)
    ''',
}


def test_the_candidate_takes_the_originals_place_however_the_harness_imports_it(tmp_path):
    """The harness may import the kernel file any way it likes; the candidate must run in its place
    (a wrapper of the harness's own included), or the verifier checks the original against itself."""
    pkg = tmp_path / "triplepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    user = pkg / "triple.py"
    user.write_text(KERNEL, encoding="utf-8")
    script = textwrap.dedent(f'''
        import os, sys, textwrap
        os.environ["TRITON_INTERPRET"] = "1"
        sys.path[:0] = [{str(WORKER)!r}, {str(tmp_path)!r}]
        import torch
        import harness

        user = {str(user)!r}
        work = {str(tmp_path / "work")!r}
        os.makedirs(os.path.join(work, "orig"))
        os.makedirs(os.path.join(work, "cand"))
        text = open(user).read()
        sides = {{}}
        for tag, body in (("orig", text), ("cand", text.replace("FACTOR = 3.0", "FACTOR = 5.0"))):
            path = os.path.join(work, tag, "triple.py")
            open(path, "w").write(body)
            sides[tag] = (path, harness.load_module(path, name="verify_" + tag, package_path=user))
        sys.modules["triple"] = sides["orig"][1]  # as the verify session does
        x = torch.arange(4.0)
        harnesses = {HARNESSES!r}
        for name, body in harnesses.items():
            hfile = os.path.join(work, name + ".py")
            open(hfile, "w").write(textwrap.dedent(body).replace("X", "torch.arange(4.0)")
                                   .replace("KERNEL_PATH", repr(user)))
            module = harness.load_module(hfile)
            fn, args = next(module.cases())
            assert fn(*args).tolist() == [0.0, 3.0, 6.0, 9.0], name  # the original
            swapped = harness.counterpart(fn, sides["cand"][1], [sides["orig"][0], user])
            assert swapped is not None, name
            assert swapped(*args).tolist() == [0.0, 5.0, 10.0, 15.0], name
            assert fn(*args).tolist() == [0.0, 3.0, 6.0, 9.0], name  # the harness itself is untouched
        print("ok", len(harnesses))
    ''')
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["ok", str(len(HARNESSES))]


def test_optimize_verifies_through_a_harness_of_its_own_wrapper(tmp_path):
    """End to end: a harness that imports the kernel file by its package path and calls it through a
    wrapper of its own. The candidate must run in that wrapper (the config rewrite is accepted, having
    been compared with the original) rather than be refused for not defining the harness's function."""
    pkg = tmp_path / "triplepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    user = pkg / "triple.py"
    user.write_text(KERNEL, encoding="utf-8")
    (tmp_path / "cases.py").write_text(textwrap.dedent(HARNESSES["own_wrapper"]).replace(
        "(X,)", "(torch.randn(100),)").replace("def cases():", "def cases():\n    yield checked, (torch.randn(7),)"),
        encoding="utf-8")
    report = optimize_file(str(user), OptimizeOptions(proposers=("config",), harness=f"{tmp_path / 'cases.py'}::cases",
                                                 job_timeout_s=300, budget_s=0))
    literal = next(c for c in report.candidates if c.title.startswith("config "))
    assert literal.accepted, literal.reason
