"""Launch records from a real project's own tests: the normpkg fixture (src layout, settings from a
helper at run time, tests written for device="cuda", nothing added for tritonlens) run under real
pytest in a real worker on this CPU-only machine."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import test_backend_ssh
from tritonlens.profiling import launch_records
from tritonlens.profiling.project_capture import capture_command, capture_for_file
from tritonlens.profiling.project_tests import find_tests, layout

from tritonlens.cli import main

sshd = test_backend_ssh.sshd  # the real OpenSSH server on 127.0.0.1, shared with the backend's tests
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "normpkg"
RMS = "src/normpkg/ops/rmsnorm.py"
SCALE = "src/normpkg/ops/scale.py"


@pytest.fixture
def project(tmp_path):
    dest = tmp_path / "normpkg"
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("__pycache__", ".tritonlens"))
    return dest


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# -- static: root, import paths and the tests that reach a kernel -------------------------------------------
def test_src_layout_and_the_tests_that_import_each_kernel(project):
    lay = layout(project / RMS)
    assert lay.root == project and lay.import_paths == ("src", ".")
    # test_rmsnorm imports the wrapper re-exported by the package __init__; test_scale the module itself
    assert find_tests(project / RMS) == ["tests/test_rmsnorm.py"]
    assert find_tests(project / SCALE) == ["tests/test_scale.py"]
    assert find_tests(project / "src/normpkg/ops/utils.py") == []


def test_relative_star_reexport_and_attribute_use(tmp_path):
    root = tmp_path / "flat"
    _write(root / "setup.py", "from setuptools import setup\nsetup(name='flat')\n")
    _write(root / "flat/__init__.py", "from .kern import *\nfrom . import other\n")
    _write(root / "flat/kern.py", "import triton\n\n@triton.jit\ndef k(X):\n    pass\n\ndef add_one(x):\n    return x\n")
    _write(root / "flat/other.py", "def unrelated():\n    return 1\n")
    _write(root / "tests/test_attr.py", "import flat\n\ndef test_a():\n    flat.add_one(1)\n")
    _write(root / "tests/test_other.py", "import flat\n\ndef test_b():\n    flat.other.unrelated()\n")
    _write(root / "scripts/kern2.py", "import triton\n\n@triton.jit\ndef k2(X):\n    pass\n")
    _write(root / "scripts/test_kern2.py", "from kern2 import k2\n")  # beside it, as pytest imports it
    assert layout(root / "flat/kern.py").import_paths == (".",)
    assert find_tests(root / "flat/kern.py") == ["tests/test_attr.py"]
    assert find_tests(root / "scripts/kern2.py") == ["scripts/test_kern2.py"]
    _write(root / "scripts/test_selfcontained.py", "import triton\n\n@triton.jit\ndef k3(X):\n    pass\n")
    assert find_tests(root / "scripts/test_selfcontained.py") == ["scripts/test_selfcontained.py"]


# -- real runs ----------------------------------------------------------------------------------------------
def test_capture_runs_the_projects_cuda_tests_on_the_cpu(project, tmp_path):
    outcome = capture_for_file(project / RMS, timeout=300, every_launch=True)
    assert outcome.error is None and outcome.reason is None, outcome
    assert outcome.tests == ["tests/test_rmsnorm.py"]
    assert outcome.result.mode == "interpreter" and outcome.result.failed == 0 and outcome.result.passed == 7
    launches = [r.launch for r in outcome.recorded]
    assert {r.file for r in outcome.recorded} == {RMS} and {x.kernel for x in launches} == {"_rms_norm_fwd_kernel"}
    # BLOCK_SIZE and num_warps came from calculate_settings(n_cols) at run time
    settings = {(x.constexprs["BLOCK_SIZE"], x.num_warps) for x in launches}
    assert settings == {(128, 4), (256, 4), (1024, 4), (4096, 8)}
    x = next(x for x in launches if x.constexprs["BLOCK_SIZE"] == 1024 and x.args[2].dtype == "float16")
    assert x.args[2].shape == [3, 1000] and x.args[2].strides == [1000, 1]
    assert x.args[1].kind == "scalar" and x.args[1].value == 1000  # Y_row_stride
    assert x.args[-2].value == pytest.approx(1e-6) and x.grid == [3, 1, 1]
    assert x.more["test"] == "tests/test_rmsnorm.py::test_rms_norm_matches_reference[dtype1-3-1000]"
    assert outcome.kept == 7 and launch_records.records_path(project).is_file()
    assert {r.origin for r in launch_records.load(project)} == {"pytest tests/test_rmsnorm.py"}
    assert (project / ".tritonlens" / ".gitignore").is_file()

    again = capture_for_file(project / RMS, timeout=300, every_launch=True)
    assert again.kept == 7  # deduplicated: the same launches again only add to their counts
    assert {r.launch.count for r in launch_records.load(project)} == {2}

    # another copy of the project (a checkout elsewhere) matches the records by relative path
    other = tmp_path / "elsewhere"
    shutil.copytree(project, other)
    assert len(launch_records.records_for(other / RMS, "_rms_norm_fwd_kernel")) == 7
    assert launch_records.records_for(other / SCALE) == []


def test_capture_any_command(project, capsys):
    _write(project / "train.py", """
        import torch
        from normpkg import rms_norm, scale_rows

        x = torch.randn(8, 512, device="cuda")
        y = rms_norm(x, torch.ones(512, device="cuda"))
        scale_rows(y, torch.ones(8).cuda())
        torch.cuda.synchronize()
    """)
    assert main(["capture", str(project), "--", "python", "train.py"]) == 0
    out = capsys.readouterr().out
    assert f"{RMS}::_rms_norm_fwd_kernel: 1 distinct launch" in out
    assert f"{SCALE}::_scale_rows_kernel: 1 distinct launch" in out
    records = launch_records.load(project)
    assert {r.origin for r in records} == {"python train.py"}
    scale = next(r.launch for r in records if r.file == SCALE)
    assert scale.constexprs == {"BLOCK_N": 512, "EVEN_N": True}  # the heuristic's value, as launched

    assert main(["capture", str(project), "--", "pytest", "-q", "-k", "scale"]) == 0
    assert "_scale_rows_kernel: 1 distinct launch" in capsys.readouterr().out
    code = "import torch, normpkg; normpkg.scale_rows(torch.ones(2, 2048).cuda(), torch.ones(2).cuda())"
    assert main(["capture", str(project), "--", "python", "-c", code]) == 0
    assert {"BLOCK_N": 1024, "EVEN_N": True} in [r.launch.constexprs for r in launch_records.load(project)]


def test_launches_before_a_failing_test_or_a_crash_are_kept(project):
    _write(project / "tests/test_broken.py", """
        import os
        import signal

        import torch
        from normpkg import rms_norm, scale_rows


        def test_wrong_expectation():
            y = rms_norm(torch.randn(2, 64, device="cuda"), torch.ones(64, device="cuda"))
            assert y.sum() == 12345.0


        def test_crash_after_launch():
            scale_rows(torch.randn(2, 64, device="cuda"), torch.ones(2, device="cuda"))
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    failed = capture_command(project, ["pytest", "-q", "tests/test_broken.py", "-k", "wrong"], timeout=300)
    assert failed.result.failed == 1 and failed.result.exit_code == 1
    assert [r.launch.constexprs for r in failed.recorded] == [{"BLOCK_SIZE": 64}]

    crashed = capture_command(project, ["pytest", "-q", "tests/test_broken.py"], timeout=300)
    assert crashed.result is None and "SIGKILL" in crashed.error
    assert sorted(r.file for r in crashed.recorded) == [RMS, SCALE]
    assert len(launch_records.load(project)) == 2


def test_autotuned_kernels_and_unimportable_test_modules(project):
    """Without a GPU nothing can be timed: the autotuner keeps its first config, whose launch is
    recorded. A test module that cannot be imported does not stop the others."""
    _write(project / "src/normpkg/ops/double.py", """
        import torch
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=2), triton.Config({"BLOCK": 1024})],
                         key=["n"])
        @triton.jit
        def _double_kernel(X, Y, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(Y + offs, tl.load(X + offs, mask=offs < n) * 2, mask=offs < n)


        def double(x):
            y = torch.empty_like(x)
            _double_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
            return y
    """)
    _write(project / "tests/test_double.py", """
        import torch
        from normpkg.ops.double import double


        def test_double():
            x = torch.randn(3000, device="cuda")
            assert torch.equal(double(x), x * 2)
    """)
    _write(project / "tests/test_double_extension.py", """
        import normpkg_cuda_extension  # built only on GPU machines
        from normpkg.ops.double import double
    """)
    outcome = capture_for_file(project / "src/normpkg/ops/double.py", timeout=300)
    assert outcome.tests == ["tests/test_double.py", "tests/test_double_extension.py"]
    assert (outcome.result.passed, outcome.result.failed) == (1, 1)
    assert "No module named 'normpkg_cuda_extension'" in outcome.result.first_failure
    [launch] = [r.launch for r in outcome.recorded]
    assert launch.autotuned and launch.constexprs == {"BLOCK": 256} and launch.num_warps == 2
    assert launch.grid == [12, 1, 1]


def test_a_worker_serving_more_jobs_is_left_as_it_was(project):
    from tritonlens.profiling.client import WorkerClient
    from tritonlens.profiling.worker.messages import Job
    from tritonlens.profiling.worker.project_capture_report import (
        ProjectCaptureJob,
        ProjectCaptureResult,
    )

    def warps(client):
        job = ProjectCaptureJob(root=str(project), argv=["pytest", "-q", "tests/test_rmsnorm.py", "-k", "leading"],
                                sys_path=["src", "."])
        reply = client.run(job)
        assert reply.ok, reply
        return [p.launch.num_warps for p in ProjectCaptureResult.from_json(reply.result).launches]

    with WorkerClient(timeout=300) as client:
        assert warps(client) == [4]
        info = client.run(Job("info"))
        assert info.ok and info.result["cuda"] is False  # the cuda mapping is gone again
        utils = project / "src/normpkg/ops/utils.py"
        utils.write_text(utils.read_text().replace("num_warps = 4", "num_warps = 2"))
        assert warps(client) == [2]  # the project's modules were not kept from the first run
        assert client.spawned == 1


def test_nothing_recorded_says_why(project, capsys):
    assert main(["capture", str(project / "src/normpkg/ops/utils.py")]) == 1
    assert "nothing recorded: no test of normpkg imports src/normpkg/ops/utils.py" in capsys.readouterr().out
    assert main(["capture", str(project), "--", "bash", "run.sh"]) == 1
    assert "can only capture `pytest ...`, `python FILE|-m MODULE|-c CODE ...`, not 'bash run.sh'" in \
        capsys.readouterr().out
    assert not launch_records.records_path(project).exists()


def test_cuda_on_cpu_mapping_and_its_limits():
    from tritonlens.profiling.client import WORKER_DIR

    code = textwrap.dedent("""
        import cuda_on_cpu, os, torch
        assert cuda_on_cpu.install() and os.environ["TRITON_INTERPRET"] == "1"
        a = torch.empty(3, device=torch.device("cuda"))
        b = torch.zeros(2, device="cuda:0").to("cuda", torch.float16)
        c = torch.arange(4, device=0).cuda()
        assert a.is_cuda and b.dtype == torch.float16 and c.tolist() == [0, 1, 2, 3]
        assert torch.cuda.is_available() and torch.cuda.device_count() == 1 and torch.cuda.current_device() == 0
        assert torch.cuda.get_device_capability() == (9, 0) and torch.cuda.get_device_properties(0).major == 9
        torch.manual_seed(0); torch.cuda.synchronize()
        with torch.cuda.device(0):
            pass
        torch.set_default_device("cuda")
        assert torch.ones(1).device.type == "cpu"
        print(a.device.type)  # what it cannot map: the device object says cpu
        cuda_on_cpu.uninstall()
        assert not torch.cuda.is_available() and "TRITON_INTERPRET" not in os.environ
        try:
            torch.empty(1, device="cuda")
        except (RuntimeError, AssertionError):
            pass
        else:
            raise AssertionError("still mapped after uninstall")
        with cuda_on_cpu.mapped() as on:
            assert on and torch.zeros(1, device="cuda").is_cuda
        assert not torch.cuda.is_available()
    """)
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120,
                         env={**{k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}, "PYTHONPATH": str(WORKER_DIR)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "cpu"


@pytest.mark.slow
def test_records_made_on_another_host_are_saved_here(project, sshd):
    """Over ssh the project's files travel with the job; the records come back keyed by path
    relative to the project root and are saved in this copy of the project."""
    options = {"known_hosts": str(sshd["dir"] / "known_hosts"), "client_keys": [str(sshd["dir"] / "user_key")]}
    outcome = capture_command(project, ["pytest", "-q", "tests/test_scale.py"], python=sys.executable,
                              backend=f"ssh://root@127.0.0.1:{sshd['port']}", backend_options=options, timeout=300)
    assert outcome.error is None, outcome.error
    assert outcome.result.passed == 1 and outcome.origin.endswith(": pytest -q tests/test_scale.py")
    assert [(r.file, r.launch.kernel) for r in launch_records.load(project)] == [(SCALE, "_scale_rows_kernel")]
    ran_on = outcome.recorded[0].launch.more["file"]  # the shipped copy, in the remote worker's folder
    assert "/project-" in ran_on and not ran_on.startswith(str(project))
    assert len(launch_records.records_for(project / SCALE)) == 1


# -- a capture for a file stops once it has what it is for ----------------------------------------------------
def test_a_capture_for_a_file_stops_once_each_kernel_is_recorded(project, capsys):
    outcome = capture_for_file(project / RMS, timeout=300)
    first = "tests/test_rmsnorm.py::test_rms_norm_matches_reference[dtype0-4-128]"
    assert outcome.result.stopped == f"each of the 1 kernels was recorded by {first}"
    # the test function that recorded it runs its other parameter sets (the largest shape among them)
    assert (outcome.result.passed, outcome.result.failed) == (6, 0) and len(outcome.recorded) == 6
    assert max(r.launch.constexprs["BLOCK_SIZE"] for r in outcome.recorded) == 4096

    assert main(["capture", str(project / RMS)]) == 0
    assert f"  stopped early: each of the 1 kernels was recorded by {first} (--all runs every test)" in \
        capsys.readouterr().out
    assert main(["capture", "--all", str(project / RMS)]) == 0  # every test, every launch they make
    out = capsys.readouterr().out
    assert "7 passed" in out and "stopped early" not in out and f"{RMS}::_rms_norm_fwd_kernel: 7 distinct" in out
    assert main(["capture", "--all", str(project), "--", "pytest"]) == 2


def test_each_test_function_s_smallest_case_runs_first(project):
    """Every kernel's first launch before any function's large shapes; then the rest of the function
    that recorded the last kernel (its large shape, which profiling replays first), and no more."""
    _write(project / "src/normpkg/ops/pair.py", PAIR)
    _write(project / "tests/test_pair.py", """
        import pytest
        import torch
        from normpkg.ops.pair import pair_bwd, pair_fwd


        @pytest.mark.parametrize("n", [1 << 16, 16])
        def test_pair_fwd(n):
            assert pair_fwd(torch.zeros(n, device="cuda")).sum().item() == n


        @pytest.mark.parametrize("n", [1 << 16, 32])
        def test_pair_bwd(n):
            assert pair_bwd(torch.zeros(n, device="cuda")).sum().item() == 0
    """)
    outcome = capture_for_file(project / "src/normpkg/ops/pair.py", timeout=300)
    ran = [(r.launch.kernel, r.launch.constexprs["BLOCK"]) for r in outcome.recorded]
    assert ran == [("_pair_fwd_kernel", 16), ("_pair_bwd_kernel", 32), ("_pair_bwd_kernel", 1 << 16)], ran
    assert outcome.result.stopped == "each of the 2 kernels was recorded by tests/test_pair.py::test_pair_bwd[32]"


PAIR = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _pair_fwd_kernel(X, Y, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(Y + offs, tl.load(X + offs) + 1)


    @triton.jit
    def _pair_bwd_kernel(DY, DX, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(DX + offs, tl.load(DY + offs))


    def pair_fwd(x):
        y = torch.empty_like(x)
        _pair_fwd_kernel[(1,)](x, y, BLOCK=x.numel())
        return y


    def pair_bwd(dy):
        dx = torch.empty_like(dy)
        _pair_bwd_kernel[(1,)](dy, dx, BLOCK=dy.numel())
        return dx
"""


def test_a_capture_for_a_file_stops_when_its_tests_stop_recording(project):
    """A kernel the tests never launch: the run ends PATIENCE tests after the last new kernel."""
    from tritonlens.profiling.worker.pytest_capture import PATIENCE

    _write(project / "src/normpkg/ops/pair.py", PAIR)
    _write(project / "tests/test_pair.py", f"""
        import pytest
        import torch
        from normpkg.ops.pair import pair_fwd


        @pytest.mark.parametrize("i", range({PATIENCE + 10}))
        def test_pair_fwd(i):
            assert pair_fwd(torch.zeros(16, device="cuda")).sum().item() == 16
    """)
    outcome = capture_for_file(project / "src/normpkg/ops/pair.py", timeout=300)
    assert outcome.result.passed == PATIENCE + 1 and [r.launch.kernel for r in outcome.recorded] == ["_pair_fwd_kernel"]
    assert outcome.result.stopped == (f"1 of the 2 kernels were recorded, and the last {PATIENCE} tests recorded none "
                                      f"of the others (src/normpkg/ops/pair.py::_pair_bwd_kernel)")


def test_a_script_imports_the_modules_beside_it(project):
    """`python scripts/x.py` puts scripts/ first on sys.path, as Python does: a benchmark script imports
    its sibling helpers by their bare name."""
    _write(project / "scripts/bench_helpers.py", """
        import torch

        def inputs():
            return torch.randn(4, 256, device="cuda"), torch.ones(256, device="cuda")
    """)
    _write(project / "scripts/bench_rms.py", """
        from bench_helpers import inputs
        from normpkg import rms_norm

        rms_norm(*inputs())
    """)
    outcome = capture_command(project, ["python", "scripts/bench_rms.py"], timeout=300)
    assert outcome.result.error is None and outcome.result.exit_code == 0
    assert [r.file for r in outcome.recorded] == [RMS]


def test_a_test_that_forks_runs_under_capture(project):
    # a multiprocessing pool with the fork start method, as a test's helper uses it: the children are
    # the worker again, under its sandbox; only starting another program stays refused
    _write(project / "tests/test_forks.py", """
        import multiprocessing
        import subprocess

        import pytest
        import torch
        from normpkg import scale_rows


        def _square(n):
            return n * n


        def test_pool_then_launch():
            with multiprocessing.get_context("fork").Pool(2) as pool:
                assert pool.map(_square, range(4)) == [0, 1, 4, 9]
            scale_rows(torch.ones(2, 64, device="cuda"), torch.ones(2, device="cuda"))


        def test_starting_a_program_is_still_refused():
            with pytest.raises(PermissionError, match="tritonlens worker sandbox"):
                subprocess.run(["echo", "hi"], check=False)
    """)
    outcome = capture_command(project, ["pytest", "-q", "tests/test_forks.py"], timeout=300)
    assert outcome.result.passed == 2 and outcome.result.failed == 0, outcome.causes
    assert [r.file for r in outcome.recorded] == [SCALE]
