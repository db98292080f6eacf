"""profile_file and `tritonlens profile` end to end in interpreter mode (no GPU here)."""

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from tritonlens.profiling.api import ProfileError, find_kernels, profile_file

DATA = os.path.join(os.path.dirname(__file__), "data")
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
LAUNCH_KEYS = {"grid", "num_warps", "num_stages", "constexprs", "time_ms", "gbps", "tflops", "pct_of_peak",
               "bound", "registers", "spills", "shared_bytes", "ncu"}


def check_schema(result):
    assert {"backend", "mode", "device", "ceilings", "kernels"} <= set(result)
    assert result["mode"] in ("gpu", "interpreter")
    for k in result["kernels"]:
        assert {"name", "line", "launches", "error"} <= set(k)
        for launch in k["launches"]:
            assert LAUNCH_KEYS <= set(launch)
    json.dumps(result)


def test_example_end_to_end_interpreter():
    path = os.path.join(EXAMPLES, "vector_add.py")
    seen = []
    result = profile_file(path, progress=lambda msg, pct: seen.append((msg, pct))).to_json()
    check_schema(result)
    assert result["mode"] == "interpreter" and result["backend"] == "local" and result["ceilings"] is None
    (kernel,) = result["kernels"]
    assert kernel["name"] == "add_kernel" and kernel["line"] == 20 and kernel["error"] is None
    (launch,) = kernel["launches"]  # the performance case only
    assert launch["constexprs"] == {"BLOCK_SIZE": 64} and launch["grid"][1:] == [1, 1]
    for field in ("time_ms", "gbps", "tflops", "pct_of_peak", "bound", "registers"):
        assert launch[field] is None  # never a made-up time
    assert launch["replayed"] is True
    assert seen[0][1] == 0 and seen[-1] == ("done", 100)


def test_zero_config_file_and_single_kernel():
    path = os.path.join(DATA, "zero_config.py")
    result = profile_file(path)
    assert result.source == "tests"
    assert [k.name for k in result.kernels] == ["scale_inplace_kernel", "copy_rows_kernel"]
    assert all(k.launches and k.error is None for k in result.kernels)
    only = profile_file(path, kernel="copy_rows_kernel")
    assert [k.name for k in only.kernels] == ["copy_rows_kernel"]
    with pytest.raises(ProfileError, match="no kernel 'nope'"):
        profile_file(path, kernel="nope")
    with pytest.raises(ProfileError, match="no such file"):
        profile_file(os.path.join(DATA, "missing.py"))
    with pytest.raises(ProfileError, match="unknown backend"):
        profile_file(path, backend="gopher://x")


def test_harness_exception_and_unlaunched_kernel(tmp_path):
    result = profile_file(os.path.join(DATA, "broken_harness.py"))
    assert result.error is None
    failed = [c for c in result.cases if not c.ok]
    assert len(failed) == 1 and "harness failure for n=7" in failed[0].error
    assert result.kernels[0].launches
    extra = tmp_path / "two.py"
    extra.write_text(open(os.path.join(DATA, "main_block.py")).read().replace(
        "if __name__", "@triton.jit\ndef unused_kernel(x_ptr):\n    pass\n\n\nif __name__"))
    result = profile_file(str(extra))
    by = {k.name: k for k in result.kernels}
    assert by["negate_kernel"].error is None
    assert by["unused_kernel"].error == "not launched by the file's __main__ block"


def test_timeout_crash_and_cancel_become_errors_then_next_profile_works():
    result = profile_file(os.path.join(DATA, "crashes.py"))
    assert result.error.type == "crash" and "SIGSEGV" in result.error.message
    assert result.kernels[0].error.startswith("crash:")
    hang = os.path.join(DATA, "hang_kernel.py")
    result = profile_file(hang, timeout=3)
    assert result.error.type == "timeout"
    cancel = threading.Event()
    threading.Timer(1.5, cancel.set).start()
    t0 = time.monotonic()
    result = profile_file(hang, timeout=60, cancel=cancel)
    assert result.error.type == "cancelled" and time.monotonic() - t0 < 15
    assert profile_file(os.path.join(DATA, "zero_config.py")).error is None


def test_concurrent_calls_from_threads():
    # Four callers start together on the one shared local worker; each must get the answer for its
    # own file and kernel, down to the launches its harness made.
    callers = {
        "zero_all": ("zero_config.py", None, "tests",
                     {"scale_inplace_kernel": ([8, 1, 1], {"BLOCK": 128}), "copy_rows_kernel": ([4, 1, 1], {"BLOCK": 64})}),
        "zero_copy": ("zero_config.py", "copy_rows_kernel", "tests", {"copy_rows_kernel": ([4, 1, 1], {"BLOCK": 64})}),
        "main": ("main_block.py", None, "main", {"negate_kernel": ([3, 1, 1], {"BLOCK": 128})}),
        "add": (os.path.join(EXAMPLES, "vector_add.py"), None, "tritonlens_cases", {"add_kernel": (None, {"BLOCK_SIZE": 64})}),
    }
    start = threading.Barrier(len(callers))
    reports, failures, spans = {}, {}, {}

    def work(name, file, kernel):
        start.wait()
        t0 = time.monotonic()
        try:
            reports[name] = profile_file(os.path.join(DATA, file), kernel=kernel)
        except Exception as exc:  # noqa: BLE001 - reported below, per caller
            failures[name] = exc
        spans[name] = (t0, time.monotonic())

    threads = [threading.Thread(target=work, args=(name, file, kernel)) for name, (file, kernel, _, _) in callers.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not any(t.is_alive() for t in threads) and not failures, failures
    first_end = min(end for _, end in spans.values())
    assert all(t0 < first_end for t0, _ in spans.values())  # every call was in flight at once
    for name, (file, _kernel, source, want) in callers.items():
        report = reports[name]
        assert report.file == os.path.abspath(os.path.join(DATA, file)) and report.error is None, name
        assert report.source == source, name
        assert [k.name for k in report.kernels] == list(want), name
        for k in report.kernels:
            grid, constexprs = want[k.name]
            assert k.launches and all(launch.kernel == k.name for launch in k.launches), name
            perf = k.launches[0]
            assert perf.constexprs == constexprs, (name, k.name, perf.constexprs)
            if grid is not None:
                assert perf.grid == grid, (name, k.name, perf.grid)


def test_find_kernels_def_lines():
    src = "import triton\n\n@triton.autotune(configs=[], key=[])\n@triton.jit\ndef k(x):\n    pass\n\n" \
          "@triton.jit(do_not_specialize=['n'])\ndef j(n):\n    pass\n\ndef plain():\n    pass\n"
    assert find_kernels(src) == {"k": 5, "j": 9}


def test_cli_json_schema_and_text():
    env = dict(os.environ, TRITON_INTERPRET="1")
    path = os.path.join(EXAMPLES, "matmul.py")
    proc = subprocess.run([sys.executable, "-m", "tritonlens", "profile", path, "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=180)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    check_schema(result)
    launch = result["kernels"][0]["launches"][0]
    assert launch["flops_source"] == "harness_shapes" and launch["flops"] > 0
    proc = subprocess.run([sys.executable, "-m", "tritonlens", "profile", path, "--kernel", "matmul_kernel"],
                          capture_output=True, text=True, env=env, timeout=180)
    assert proc.returncode == 0
    assert "matmul_kernel (line 22)" in proc.stdout and "interpreter" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "tritonlens", "profile", path, "--kernel", "nope"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2 and "no kernel 'nope'" in proc.stderr
