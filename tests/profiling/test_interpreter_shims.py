"""Triton's interpreter shimmed where it differs from a GPU run (interpreter_shims.py, installed by
cuda_on_cpu.install() on this GPU-less machine), and the limits it cannot shim, named for a person.
Each fixture kernel runs in a fresh interpreter: first as Triton ships it (it fails), then shimmed."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from worker_modules import load_worker_module

DATA = Path(__file__).resolve().parent / "data"


def _run(code: str) -> subprocess.CompletedProcess:
    from tritonlens.profiling.client import WORKER_DIR

    env = {**{k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"},
           "PYTHONPATH": os.pathsep.join([str(WORKER_DIR), str(DATA)])}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=False, capture_output=True,
                          text=True, timeout=180, env=env)


def _shimmed_and_not(kernel: str) -> tuple[str, str]:
    """(the error the bare interpreter gives, the output the shimmed one prints)."""
    out = _run(f"""
        import os
        os.environ["TRITON_INTERPRET"] = "1"
        import cuda_on_cpu, interpreter_gaps
        try:
            interpreter_gaps.run({kernel!r})
        except Exception as exc:
            print("bare:", exc)
        assert cuda_on_cpu.install() and cuda_on_cpu.shims().installed()
        print("shimmed:", interpreter_gaps.run({kernel!r}).tolist())
        cuda_on_cpu.uninstall()
        assert not cuda_on_cpu.shims().installed()
        try:
            interpreter_gaps.run({kernel!r})
        except Exception:
            print("undone")
    """)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(line.split(":", 1) if ":" in line else (line, "") for line in out.stdout.splitlines())
    assert "undone" in lines, out.stdout
    return lines.get("bare", "").strip(), lines["shimmed"].strip()


def test_a_float_scalar_is_fp32_as_on_a_gpu():
    bare, shimmed = _shimmed_and_not("scale_by_eps")
    assert "'float' object has no attribute 'to'" in bare
    assert shimmed == str([i + 0.5 for i in range(8)])


def test_a_float_scalar_has_a_dtype():
    bare, shimmed = _shimmed_and_not("fill_like_scalar")
    assert "'float' object has no attribute 'dtype'" in bare
    assert shimmed == str([3.0] * 8)


@pytest.mark.parametrize("error, key", [
    ('InterpreterError: NotImplementedError("inline_asm not supported in interpreter mode")', "inline_asm"),
    ("RuntimeError: 0 active drivers ([]). There should only be one.", "gpu_driver"),
    ('InterpreterError: NotImplementedError("extern_elementwise not supported in interpreter mode")',
     "extern_elementwise"),
])
def test_a_limit_it_cannot_shim_is_named(error, key):
    shims = load_worker_module("interpreter_shims")
    limit = shims.interpreter_limit(error)
    assert limit is not None and limit.key == key
    assert limit.line().startswith("Triton's interpreter cannot run ") and limit.line().endswith(
        "on the CPU; on a GPU it runs")
    assert "Error" not in limit.line()


def test_a_kernels_own_error_is_no_limit():
    shims = load_worker_module("interpreter_shims")
    assert shims.interpreter_limit("AssertionError: Tensor-likes are not close!", "test_rms.py:40") is None
    assert shims.interpreter_limit("InterpreterError: IndexError('out of bounds')") is None


def test_libdevice_runs_in_the_interpreter():
    bare, shimmed = _shimmed_and_not("gelu_tanh")
    assert "NoneType" in bare  # the generic module's stubs answer None
    assert shimmed == "[0.0]"


def test_libdevice_ilogb_gives_the_exponent_as_cuda_does():
    bare, shimmed = _shimmed_and_not("float_exponent")
    assert bare  # the stub's None cannot be compared
    # zero and NaN: INT_MIN (clamped to -200 by the kernel); inf: INT_MAX; 1e-40 is subnormal in fp32
    assert shimmed == f"[-200, 0, 1, -2, 3, {(1 << 31) - 1}, -200, -133]"


def test_a_harness_mapping_keeps_is_available_false_and_maps_memory_queries():
    out = _run("""
        import cuda_on_cpu, torch
        with cuda_on_cpu.mapped(claim_gpu=False) as on:
            assert on and not torch.cuda.is_available() and torch.ones(1, device="cuda").is_cuda
            assert cuda_on_cpu.shims().installed()
        with cuda_on_cpu.mapped():
            free, total = torch.cuda.mem_get_info()
            assert torch.cuda.is_available() and 0 < free <= total
        assert not cuda_on_cpu.shims().installed()
        print("ok")
    """)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_torch_compiled_host_code_runs_eagerly_under_the_mapping():
    # a project's host helper compiled for the GPU (`@torch.compile(fullgraph=True)` around code that
    # asks torch.cuda for its device) fails inside dynamo on a CPU build; mapped, it runs eagerly
    out = _run("""
        import cuda_on_cpu, torch

        def order(x):
            torch.cuda.current_device()
            return torch.argsort(x).to(torch.int32)

        try:
            torch.compile(fullgraph=True, dynamic=True)(order)(torch.tensor([3.0, 1.0, 2.0]))
        except Exception as exc:
            print("bare:", type(exc).__name__)
        with cuda_on_cpu.mapped():
            compiled = torch.compile(fullgraph=True, dynamic=True)(order)
            print("mapped:", compiled(torch.tensor([3.0, 1.0, 2.0], device="cuda")).tolist(),
                  torch.compile(order) is order)
        print("after:", torch.compile.__module__)
        """)
    assert out.returncode == 0, out.stderr
    bare, mapped, after = out.stdout.splitlines()
    assert bare.startswith("bare: ") and mapped == "mapped: [1, 2, 0] True"
    assert after == "after: torch"


def test_a_library_that_binds_torch_s_cuda_stream_getter_at_import_loads_under_the_mapping():
    # a library binds torch._C's raw-stream getter at import, which a CPU build of torch lacks
    out = _run("""
        import cuda_on_cpu, torch
        print("before:", hasattr(torch._C, "_cuda_getCurrentRawStream"))
        with cuda_on_cpu.mapped():
            get_stream = torch._C._cuda_getCurrentRawStream  # as bitsandbytes does at import
            print("mapped:", get_stream(0), torch._C._cuda_getDevice())
        print("after:", hasattr(torch._C, "_cuda_getCurrentRawStream"))
        """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["before: False", "mapped: 0 0", "after: False"]
