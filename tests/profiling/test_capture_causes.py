"""Every capture failure says its cause in one line, with its fix: project-shaped fixtures written
here (a conftest importing a module that does not exist, a kernel Triton's interpreter cannot run, a
test failing on its own assert, a kernel launched before a failing assert, a test module that cannot
be imported) run under real pytest in a real worker on this CPU-only machine."""

import json
import textwrap
from pathlib import Path

import pytest
from tritonlens.profiling.project_capture import PYTEST_ARGS, capture_command, capture_for_file
from tritonlens.profiling.worker.capture_causes import distribution

from tritonlens.cli import main

MISSING = "tritonlens_fixture_no_such_module"

KERNELS = {
    "pyproject.toml": """
        [project]
        name = "causepkg"
    """,
    "src/causepkg/__init__.py": "",
    "src/causepkg/ops/__init__.py": "",
    "src/causepkg/ops/double.py": """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def _double_kernel(X, Y, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(Y + offs, tl.load(X + offs, mask=offs < n) * 2, mask=offs < n)


        def double(x):
            y = torch.empty_like(x)
            _double_kernel[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
            return y
    """,
    "src/causepkg/ops/fast_exp.py": """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def _fast_exp_kernel(X, Y, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(X + offs, mask=offs < n)
            y = tl.inline_asm_elementwise("ex2.approx.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
            tl.store(Y + offs, y, mask=offs < n)


        def fast_exp(x):
            y = torch.empty_like(x)
            _fast_exp_kernel[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
            return y
    """,
}
TESTS = {
    "tests/test_fast_exp.py": """
        import torch
        from causepkg.ops.fast_exp import fast_exp


        def test_fast_exp():
            x = torch.randn(200, device="cuda")
            torch.testing.assert_close(fast_exp(x), torch.exp2(x))
    """,
    "tests/test_launch_then_fail.py": """
        import torch
        from causepkg.ops.double import double


        def test_double_wrong_expectation():
            y = double(torch.ones(64, device="cuda"))
            assert y.sum().item() == 12345.0, "expected sum"
    """,
    "tests/test_missing_import.py": f"""
        import {MISSING}.sub
        from causepkg.ops.double import double
    """,
    "tests/test_own_assert.py": """
        from causepkg.ops.double import double


        def test_plain_python():
            assert sorted([3, 1, 2]) == [3, 2, 1], "the list is not reversed"
    """,
}


def _project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path):
    return _project(tmp_path / "causepkg", {**KERNELS, **TESTS})


def _pytest(project, *tests, timeout=300):
    return capture_command(project, ["pytest", *PYTEST_ARGS, *tests], tests=list(tests), timeout=timeout)


def test_a_conftest_importing_a_missing_module_names_it_with_the_install_command(tmp_path, capsys):
    root = _project(tmp_path / "causepkg", {**KERNELS, "tests/test_double.py": TESTS["tests/test_own_assert.py"],
                                            "tests/helpers.py": f"import {MISSING}\n",
                                            "tests/conftest.py": "import helpers  # noqa: F401\n"})
    outcome = capture_for_file(root / "src/causepkg/ops/double.py", timeout=300)
    assert outcome.result.exit_code == 4 and not outcome.recorded  # pytest stopped before collecting
    cause = outcome.cause
    python = cause.python
    assert cause.kind == "missing_module" and cause.module == MISSING
    assert cause.fix == f"{python} -m pip install {MISSING}"
    assert cause.line == (f"conftest tests/conftest.py (through tests/helpers.py) imports {MISSING}, which is "
                          f"not installed in {python}: {cause.fix}")
    assert outcome.reason == cause.line and "exit code" not in outcome.reason
    assert cause.exception == f"ModuleNotFoundError: No module named '{MISSING}'"

    assert main(["capture", str(root / "src/causepkg/ops/double.py"), "--format", "json"]) == 1
    said = json.loads(capsys.readouterr().out)
    assert said["reason"] == cause.line and said["cause"]["fix"] == cause.fix
    assert said["cause"]["kind"] == "missing_module"


def test_each_failing_test_file_says_why_even_when_launches_were_recorded(project, capsys):
    outcome = _pytest(project, *sorted(TESTS))
    assert outcome.reason is None and outcome.cause is None
    # a launch the interpreter cannot finish is recorded too (before it ran), and says what stopped it
    assert [r.launch.kernel for r in outcome.recorded] == ["_fast_exp_kernel", "_double_kernel"]
    assert outcome.result.total_launches == 2
    stopped, done = (r.launch for r in outcome.recorded)
    assert stopped.more["unfinished"] == {
        "error": "InterpreterError: NotImplementedError('inline_asm not supported in interpreter mode')",
        "limit": "inline_asm", "line": "Triton's interpreter cannot run inline assembly (tl.inline_asm_elementwise) "
                                      "on the CPU; on a GPU it runs"}
    assert stopped.grid == [2, 1, 1] and stopped.constexprs == {"BLOCK": 128} and stopped.args[0].shape == [200]
    assert "unfinished" not in done.more and done.more["written"] == ["Y"] and done.count == 1
    by_file = {c.test.split("::")[0]: c for c in outcome.causes}
    assert sorted(by_file) == sorted(TESTS)

    limit = by_file["tests/test_fast_exp.py"]  # the interpreter's limit, never the kernel's fault
    assert limit.kind == "interpreter_limit"
    assert limit.exception == "NotImplementedError: inline_asm not supported in interpreter mode"
    assert "Triton's interpreter cannot run inline assembly (tl.inline_asm_elementwise) on the CPU, at " \
        "`y = tl.inline_asm_elementwise(" in limit.line
    assert "(fast_exp.py:11 in _fast_exp_kernel)" in limit.line and "on a GPU it runs" in limit.line
    assert "InterpreterError" not in limit.line

    failed = by_file["tests/test_launch_then_fail.py"]
    assert failed.kind == "test_failed" and failed.test.endswith("::test_double_wrong_expectation")
    assert failed.exception.startswith("AssertionError: expected sum")
    assert failed.line == f"{failed.test} failed: {failed.exception}"

    missing = by_file["tests/test_missing_import.py"]
    assert missing.kind == "missing_module" and missing.module == MISSING  # the package, not its submodule
    assert missing.fix.endswith(f" -m pip install {MISSING}")
    assert missing.line.startswith(f"tests/test_missing_import.py imports {MISSING}, which is not installed")

    assert by_file["tests/test_own_assert.py"].exception.startswith("AssertionError: the list is not reversed")

    # the CLI shows each one, with its fix
    assert main(["capture", str(project), "--", "pytest", *PYTEST_ARGS, "tests/test_missing_import.py",
                 "tests/test_launch_then_fail.py"]) == 0
    out = capsys.readouterr().out
    assert "tests that failed, and why (2 files):" in out
    assert f"    {missing.line}" in out and "AssertionError: expected sum" in out


def test_nothing_recorded_names_the_real_exception_not_a_missing_launch(project):
    own = _pytest(project, "tests/test_own_assert.py")
    assert not own.recorded and own.result.total_launches == 0
    assert own.cause.kind == "test_failed"
    assert own.reason == ("tests/test_own_assert.py::test_plain_python failed: AssertionError: the list is not "
                          "reversed")

    # a script that raised under the interpreter: the launch was made, so no "launched no kernel"
    script = project / "run_exp.py"
    script.write_text("import torch\nfrom causepkg.ops.fast_exp import fast_exp\n"
                      "fast_exp(torch.ones(8, device='cuda'))\n", encoding="utf-8")
    ran = capture_command(project, ["python", "run_exp.py"], timeout=300)
    assert ran.result.total_launches == 1 and [r.launch.more["unfinished"]["limit"] for r in ran.recorded] == \
        ["inline_asm"]
    [cause] = ran.causes
    assert cause.kind == "interpreter_limit" and "cannot run inline assembly (tl.inline_asm_elementwise) on " \
        "the CPU, at `y = tl.inline_asm_elementwise(" in cause.line
    assert ran.result.error == "NotImplementedError: inline_asm not supported in interpreter mode"


def test_a_run_of_no_test_says_what_pytest_did(project):
    (project / "tests/test_skipped.py").write_text(
        "import pytest\nfrom causepkg.ops.double import double\n\n\n"
        "@pytest.mark.skip(reason='needs two GPUs')\ndef test_two():\n    pass\n", encoding="utf-8")
    skipped = _pytest(project, "tests/test_skipped.py")
    assert skipped.cause.kind == "no_test_ran"
    assert "all 1 tests were skipped (first: tests/test_skipped.py::test_two: needs two GPUs)" in skipped.reason
    assert "exit code" not in skipped.reason


def test_import_names_map_to_their_distribution():
    assert distribution("yaml") == "pyyaml" and distribution("cv2.dnn") == "opencv-python"
    assert distribution("google.protobuf.message") == "protobuf" and distribution("transformers.models") == \
        "transformers"
    assert distribution("absl.testing") == "absl-py"  # `pip install absl` is another project


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:  # the traceback is what the causes read
        return caught


def test_a_library_on_its_cuda_path_under_the_cpu_stand_in_is_named_as_the_stand_in_s_limit():
    # the CPU stands in for the GPU, so a library takes its CUDA path and calls a torch._C function
    # that a CPU build of torch does not have: not the test's fault, and on a GPU it runs
    from tritonlens.profiling.worker.capture_causes import cause_of

    exc = _raised(AttributeError("module 'torch._C' has no attribute '_cuda_getCurrentRawStream'"))
    cause = cause_of(exc, "tests/test_rms.py")
    assert cause.kind == "interpreter_limit"
    assert cause.line.startswith("tests/test_rms.py: torch._C._cuda_getCurrentRawStream is not in this CPU build "
                                 "of torch; the code took its CUDA path because the CPU stands in for the GPU, at ")
    assert cause.line.endswith("on a GPU it runs: capture there with --backend ssh://HOST")
    # the same for CUDA classes and generators that a CPU build keeps only as dummies
    dummy = cause_of(_raised(RuntimeError("Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing")),
                     "tests/test_moe.py::test_checkpoint")
    generator = cause_of(_raised(RuntimeError("Cannot get CUDA generator without ATen_cuda library. PyTorch splits")),
                         "tests/test_rollout.py::test_exact")
    assert dummy.kind == generator.kind == "interpreter_limit"
    assert dummy.line.startswith("tests/test_moe.py::test_checkpoint: torch._C._cuda_isCurrentStreamCapturing is not "
                                 "in this CPU build of torch")
    assert generator.line.startswith("tests/test_rollout.py::test_exact: torch's CUDA runtime is not in this CPU build")


def test_a_download_the_machine_cannot_make_says_the_test_needs_the_network():
    from tritonlens.profiling.worker.capture_causes import cause_of

    class LocalEntryNotFoundError(Exception):
        pass

    try:
        try:
            raise OSError("[Errno -2] Name or service not known")
        except OSError as inner:
            raise LocalEntryNotFoundError("An error happened while trying to locate the file on the Hub") from inner
    except LocalEntryNotFoundError as exc:
        cause = cause_of(exc, "tests/test_swiglu.py::test_forward")
    assert cause.kind == "test_failed"
    assert cause.line.startswith("tests/test_swiglu.py::test_forward needs the network (a download failed: ")
    assert cause.line.endswith("run it where the download can be made, or with the files already in its cache")


SCRIPT_TEST = """
    import torch
    from causepkg.ops.double import double

    x = torch.ones(64, device="cuda")


    def test_acc(scale):
        print((double(x) * scale).sum().item())
"""


def test_a_test_file_that_is_a_script_runs_as_one(tmp_path):
    # a test_ function whose argument is no fixture: pytest collects the file by its name, and only
    # its main block, run as a script, reaches the kernel
    root = _project(tmp_path / "causepkg", {**KERNELS, "tests/test_acc.py": SCRIPT_TEST + """

    if __name__ == "__main__":
        test_acc(2.0)
    """})
    outcome = capture_for_file(root / "src/causepkg/ops/double.py", timeout=300)
    assert [r.launch.kernel for r in outcome.recorded] == ["_double_kernel"]
    assert outcome.cause is None and outcome.reason is None and outcome.causes == []
    assert {r.origin for r in outcome.recorded} == {"python tests/test_acc.py"}

    root = _project(tmp_path / "nomain", {**KERNELS, "tests/test_acc.py": SCRIPT_TEST})
    outcome = capture_for_file(root / "src/causepkg/ops/double.py", timeout=300)
    assert not outcome.recorded and outcome.cause.kind == "test_failed"
    assert outcome.reason == "tests/test_acc.py::test_acc is not a pytest test: pytest has no fixture for its " \
                             "argument 'scale'"


@pytest.mark.parametrize("message", ["CPU version of random bit flip is not implemented yet.",
                                     "fused_rope is not supported on CPU", "x must be a CUDA tensor"])
def test_a_project_refusing_the_stand_in_s_cpu_tensors_is_named_as_the_stand_in_s_limit(message):
    # the project checks the device itself; the CPU's tensors stand in for the GPU's, so the check
    # fails here and passes on a GPU
    from tritonlens.profiling.worker.capture_causes import cause_of

    cause = cause_of(_raised(NotImplementedError(message)), "test/test_bitflip.py::test_forward")
    assert cause.kind == "interpreter_limit"
    assert cause.line.startswith(f"test/test_bitflip.py::test_forward: the project's code has no CPU path "
                                 f"(NotImplementedError: {message}), and the CPU stands in for the GPU here")
    assert cause.line.endswith("on a GPU it runs: capture there with --backend ssh://HOST")
    own = cause_of(_raised(NotImplementedError("padding mode 'reflect' is not implemented")), "t.py::t")
    assert own.kind == "test_failed"
